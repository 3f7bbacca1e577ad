"""`mockagent verify --update` on an Agentex cassette re-records the interactions that drifted
through the recording proxy, and only those: every other line of the file stays as written,
comments included. A re-recorded cancel takes the state its task is in now (`match.task`), as
the recording writes it. Before, `--update` refused an Agentex cassette ("speaks A2A").

The platform is tests/helpers/agentex_platform.py; the recordings are made with the official
`agentex` client (tests/helpers/agentex_fidelity.py, agentex_unseen.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import ServerThread
from tests.helpers.agentex_fidelity import Scenario, async_cancel, async_polled, record_and_replay
from tests.helpers.agentex_platform import create_platform_app
from tests.helpers.agentex_unseen import timed_out_before_any_turn


def verify(path: Path, url: str, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url, *options])
    return result.exit_code, result.output


@pytest.fixture
def platform() -> Iterator[Callable[[], str]]:
    """Starts a new live platform (its tasks never end by themselves): a get-or-create must not
    find the tasks of the run before."""
    servers: list[ServerThread] = []

    def start() -> str:
        servers.append(ServerThread(create_platform_app()).start())
        return servers[-1].url

    yield start
    for server in servers:
        server.stop()


MARK = "\n# kept as written\n"


def recorded(tmp_path: Path, scenario: Scenario) -> tuple[Path, str]:
    """The scenario's cassette, a comment put on each interaction (which --update must keep)."""
    path = tmp_path / "recorded.yaml"
    record_and_replay(path, scenario)
    text = path.read_text().replace("\n- name: ", MARK + "- name: ")
    path.write_text(text)
    return path, text


def edited(scenario: Any, tmp_path: Path, old: str, new: str) -> tuple[Path, str]:
    path, text = recorded(tmp_path, lambda client, _: scenario(client))
    assert old in text
    path.write_text(text.replace(old, new))
    return path, text


def blocks(text: str) -> list[str]:
    """The cassette's header, then each interaction as written."""
    return text.split(MARK)


@pytest.mark.parametrize(
    ("scenario", "old", "new", "drifted", "same"),
    [
        (async_polled, "Got: research it", "Got: that", 2, True),
        (async_cancel, "Canceled by the user", "Canceled by its owner", 3, True),
        (async_cancel, "is CANCELED and cannot", "was CANCELED", 4, True),
    ],
)
def test_update_rerecords_an_event_turn_or_a_cancel_and_keeps_the_rest(
    tmp_path: Path,
    platform: Callable[[], str],
    scenario: Any,
    old: str,
    new: str,
    drifted: int,
    same: bool,
) -> None:
    """The drifted interaction (`drifted`: its place, from 1) is re-recorded as it was
    (`same`): an event turn keeps its written gates, though verify opened them otherwise (all
    GET /messages, where the recorded client polled GET /tasks/{id} too); every other line
    stays as written."""
    path, written = edited(scenario, tmp_path, old, new)
    name = yaml.safe_load(written)["interactions"][drifted - 1]["name"]
    code, output = verify(path, platform(), "--update")
    lines = output.splitlines()
    assert f"updated {name}" in lines and f"wrote {path}" in lines, output
    assert code == 0
    now = blocks(path.read_text())
    assert now[:drifted] + now[drifted + 1 :] == (
        blocks(written)[:drifted] + blocks(written)[drifted + 1 :]
    )
    assert old in now[drifted] and new not in now[drifted]
    assert (path.read_text() == written) == same
    code, output = verify(path, platform())
    assert code == 0 and "drift" not in output, output


def test_update_leaves_a_cassette_that_still_matches_untouched(
    tmp_path: Path, platform: Callable[[], str]
) -> None:
    path, written = recorded(tmp_path, lambda client, _: async_cancel(client))
    code, output = verify(path, platform(), "--update")
    assert (code, "wrote" in output) == (0, False), output
    assert path.read_text() == written


def test_update_rerecords_a_task_that_no_longer_times_out_and_its_cancel(
    tmp_path: Path, platform: Callable[[], str]
) -> None:
    """Recorded, the named task timed out unseen and a cancel by name was refused; the live
    platform's task now stays RUNNING: the create loses its TIMED_OUT step, and the cancel is
    accepted, matching its task in whatever state (`task: {from}`)."""
    path, written = recorded(tmp_path, timed_out_before_any_turn)
    code, output = verify(path, platform(), "--update")
    lines = output.splitlines()
    assert "updated create-worker" in lines and "updated cancel-create-worker" in lines, output
    assert code == 0
    header = written.split("interactions:")[0]
    assert path.read_text().startswith(header)
    interactions = yaml.safe_load(path.read_text())["interactions"]
    assert [s.get("state") for s in interactions[0]["reply"]["task"]["steps"]] == ["RUNNING"]
    assert interactions[1]["match"]["task"] == {"from": "create-worker"}
    assert interactions[1]["reply"] == {
        "task": {"steps": [{"state": "CANCELED", "statusReason": "Canceled by the user"}]}
    }
    assert verify(path, platform()) == (0, "ok create-worker\nok cancel-create-worker\n")
