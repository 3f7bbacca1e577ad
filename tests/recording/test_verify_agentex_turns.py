"""`mockagent verify` on an Agentex cassette: event/send turns and task cancels are sent to the
live platform and to the cassette like the rest, and compared (everything but ids and
timestamps). An event's script is opened poll by poll as its client did (GET /messages for the
messages a gate shows, GET /tasks/{id} for a state); a cancel goes to the task its interaction
follows, by name when the task has one, else by id. Before, each printed `skip NAME (not
verified for Agentex)`.

The platform is tests/helpers/agentex_platform.py, driven by the official `agentex` client.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import ServerThread
from tests.helpers.agentex_fidelity import async_cancel, async_polled, poll, record_and_replay
from tests.helpers.agentex_fidelity import text as text_content
from tests.helpers.agentex_platform import create_platform_app


def verify(path: Path, url: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url])
    return result.exit_code, result.output.splitlines()


@contextmanager
def platform(**options: Any) -> Iterator[str]:
    server = ServerThread(create_platform_app(**options)).start()
    try:
        yield server.url
    finally:
        server.stop()


def recorded(tmp_path: Path, scenario: Callable[[Any], None], **options: Any) -> Path:
    path = tmp_path / "recorded.yaml"
    record_and_replay(path, lambda client, _: scenario(client), **options)
    return path


def test_an_event_turn_is_verified_poll_by_poll(tmp_path: Path) -> None:
    path = recorded(tmp_path, async_polled)
    with platform() as url:
        code, lines = verify(path, url)
    assert lines == ["ok create-worker", "ok research-it (polled)"]
    assert code == 0


def test_an_event_on_a_task_the_store_made_makes_that_task_first(tmp_path: Path) -> None:
    """A new task the replay's store answers alike has no interaction: verify makes it on both
    sides before the event, without comparing it."""
    path = recorded(tmp_path, async_polled, forwarded=())
    with platform(forwarded=()) as url:
        code, lines = verify(path, url)
    assert lines == ["ok research-it (polled)"]
    assert code == 0


def test_cancels_accepted_and_refused_are_verified(tmp_path: Path) -> None:
    path = recorded(tmp_path, async_cancel)
    with platform() as url:
        code, lines = verify(path, url)
    assert lines == [
        "ok create-worker",
        "ok long-job (polled)",
        "ok cancel-create-worker",
        "ok cancel-create-worker-2",  # refused: the task's id in its message is the same task's
    ]
    assert code == 0


def test_an_event_turn_that_drifted_says_where(tmp_path: Path) -> None:
    path = recorded(tmp_path, async_polled)
    path.write_text(path.read_text().replace("Half way.", "Halfway there."))
    with platform() as url:
        code, lines = verify(path, url)
    assert lines[:2] == ["ok create-worker", "drift research-it (polled)"]
    assert any("Half way." in line and "Halfway there." in line for line in lines[2:])
    assert code == 1


def test_a_cancel_that_drifted_says_where(tmp_path: Path) -> None:
    path = recorded(tmp_path, async_cancel)
    path.write_text(path.read_text().replace("Canceled by the user", "Canceled by its owner"))
    with platform() as url:
        code, lines = verify(path, url)
    assert "drift cancel-create-worker" in lines
    assert any("Canceled by the user" in line and "its owner" in line for line in lines)
    assert code == 1


def cancel_made_up(client: Any) -> None:
    client.agents.create_task(agent_name="worker", params={"name": "nightly"})
    with contextlib.suppress(Exception):  # refused: the wire keeps the error envelope
        client.agents.cancel_task(agent_name="worker", params={"task_name": "no-such-name"})


def test_a_cancel_of_a_made_up_task_is_skipped_saying_why(tmp_path: Path) -> None:
    path = recorded(tmp_path, cancel_made_up)
    with platform() as url:
        code, lines = verify(path, url)
    assert lines == [
        "ok create-worker",
        "skip cancel-unknown-task (a cancel of a task the recording never saw: the id or name "
        "the client made up is not recorded)",
        "verified 1 of 2 interactions; 1 skipped: cancel-unknown-task",
    ]
    assert code == 0


def data_message(client: Any) -> None:
    content = {"type": "data", "author": "user", "data": {"rows": 3}}
    client.agents.send_message(agent_name="echo-bot", params={"content": content})


def test_a_turn_whose_content_is_not_text_is_skipped_saying_why(tmp_path: Path) -> None:
    path = recorded(tmp_path, data_message)
    with platform() as url:
        code, lines = verify(path, url)
        allowed = CliRunner().invoke(
            main, ["verify", str(path), "--upstream", url, "--allow-skips"]
        )
    skipped = [
        "skip data (its content is not text: the recording keeps the content's type only)",
        "verified 0 of 1 interactions; 1 skipped: data",
    ]
    # nothing was compared: not a green verify, unless skips are allowed
    assert lines == [*skipped, f"mockagent: nothing in {path} was verified"]
    assert code == 1
    assert allowed.output.splitlines() == skipped
    assert allowed.exit_code == 0


def two_tasks(client: Any) -> None:
    """Two store-made tasks, each with its event: the second goes to a new task, not to the
    first, which has completed."""
    for text in ("research it", "research that"):
        task = client.agents.create_task(agent_name="worker", params={}).result
        client.agents.send_event(
            agent_name="worker", params={"task_id": task.id, "content": text_content(text)}
        )
        poll(client, task.id)


def test_an_event_after_its_agents_task_ended_goes_to_a_new_task(tmp_path: Path) -> None:
    path = recorded(tmp_path, two_tasks, forwarded=())
    with platform(forwarded=()) as url:
        code, lines = verify(path, url)
    assert lines == ["ok research-it (polled)", "ok research-that (polled)"]
    assert code == 0


def test_a_refused_cancel_after_one_the_store_answered_is_verified_refused(
    tmp_path: Path,
) -> None:
    """A cancel the replay's store answers alike (CANCELED, no reason) has no interaction; the
    refused cancel after it waits for `task: {state: CANCELED}`. Verify cancels the task first
    (not compared), so the refusal is what is compared: an edited refusal drifts."""
    path = recorded(tmp_path, async_cancel, canceled=None)
    text = path.read_text()
    assert text.count("operation: CancelTask") == 1 and "state: CANCELED" in text
    path.write_text(text.replace("cannot be canceled", "is over"))
    with platform(canceled=None) as url:
        code, lines = verify(path, url)
    assert lines[:3] == ["ok create-worker", "ok long-job (polled)", "drift cancel-create-worker"]
    assert "cannot be canceled" in lines[3] and "is over" in lines[3]
    assert code == 1
