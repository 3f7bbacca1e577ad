"""`mockagent verify` of an Agentex script compares the task as it settles after its last gate
(its final state), and `--update` never takes out a written final state the live agent reaches.
The live agent is cassettes/agentex/async-agent.yaml served; `long-job` says "Still going." on
its fifth poll and completes with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import serve_in_thread

AGENT = Path(__file__).parents[2] / "cassettes" / "agentex" / "async-agent.yaml"
GATE = '          - say: "Still going."\n            after: {polls: 5}\n'
END = "          - state: COMPLETED\n"


@pytest.mark.parametrize(
    "edit",
    [
        (GATE + END, GATE + '          - say: "Almost there."\n' + END),
        (GATE + END, GATE + "          - state: FAILED\n"),
    ],
    ids=["a-say-added", "completed-made-failed"],
)
def test_update_restores_the_settled_task_and_keeps_its_final_state(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    written = AGENT.read_text()
    assert written.count(edit[0]) == 1
    path = tmp_path / "async-agent.yaml"
    path.write_text(written.replace(*edit))
    with serve_in_thread(AGENT, pace="instant") as agent:
        verified = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
        updated = CliRunner().invoke(
            main, ["verify", str(path), "--upstream", agent.url, "--update"]
        )
        again = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
    # before: FAILED verified `ok long-job`; the added say was taken out with `- state: COMPLETED`
    assert "drift long-job (polled)" in verified.output.splitlines(), verified.output
    assert path.read_text() == written, updated.output
    assert updated.exit_code == 0, updated.output
    assert again.exit_code == 0 and "drift" not in again.output, again.output


def test_a_final_state_left_out_after_the_last_gate_is_drift_and_written_back(
    tmp_path: Path,
) -> None:
    written = AGENT.read_text()
    path = tmp_path / "async-agent.yaml"
    path.write_text(written.replace(GATE + END, GATE))
    with serve_in_thread(AGENT, pace="instant") as agent:
        verified = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
        updated = CliRunner().invoke(
            main, ["verify", str(path), "--upstream", agent.url, "--update"]
        )
        again = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
    # before: `ok long-job (polled)`: nothing asked for the task after its last gate
    assert "drift long-job (polled)" in verified.output.splitlines(), verified.output
    assert 'call 3: body.status: "COMPLETED" ≠ "RUNNING"' in verified.output
    # the state comes back after the written gate (with the poll that showed it)
    assert (GATE + END) in path.read_text(), updated.output
    assert updated.exit_code == 0, updated.output
    assert again.exit_code == 0 and "drift" not in again.output, again.output
