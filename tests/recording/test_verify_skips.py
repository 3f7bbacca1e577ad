"""A green `mockagent verify` means it compared something: the interactions it skipped are
counted at the end, and a run that skipped every one exits 1 (0 with `--allow-skips`). An
Agentex cassette with one agent sends an interaction that names no agent to that one."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import serve_in_thread

CASSETTES = Path(__file__).parents[2] / "cassettes"


def verify(path: Path, url: str, *options: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url, *options])
    return result.exit_code, result.output.splitlines()


def test_a_verify_that_sent_nothing_says_so_and_fails() -> None:
    path = CASSETTES / "kit" / "deployer.yaml"  # every text a regex: nothing to send
    with serve_in_thread(path, pace="instant") as agent:
        code, lines = verify(path, agent.url)
        allowed, _ = verify(path, agent.url, "--allow-skips")
    # before: five `skip` lines and exit 0, as if the cassette had been verified
    names = "approved, approved-by-text, approval-reminder, production, deploy"
    assert f"verified 0 of 5 interactions; 5 skipped: {names}" in lines, lines
    assert lines[-1] == f"mockagent: nothing in {path} was verified"
    reason = "no recorded request to send: its text is matched by `regex`, not a text"
    assert f"skip production ({reason})" in lines
    assert code == 1
    assert allowed == 0


def test_the_skips_of_a_partial_verify_are_counted_and_it_passes() -> None:
    path = CASSETTES / "kit" / "test-runner.yaml"  # run-head has no text to send
    with serve_in_thread(path, pace="instant") as agent:
        code, lines = verify(path, agent.url)
    assert lines[-1] == "verified 2 of 3 interactions; 1 skipped: run-head", lines
    assert code == 0


def test_a_one_agent_agentex_cassette_sends_to_its_agent() -> None:
    path = CASSETTES / "agentex" / "async-agent.yaml"  # its interactions name no agent
    with serve_in_thread(path, pace="instant") as agent:
        code, lines = verify(path, agent.url)
    # before: "skip research (no agent to send to)", … and exit 0
    assert lines == ["ok research (polled)", "ok long-job (polled)"]
    assert code == 0


EARLY = """\
version: 1
agent: {name: asker, description: Asks., skills: [{id: s, name: S, description: S.}]}
interactions:
  - name: answer
    match: {text: main, task: {state: TASK_STATE_INPUT_REQUIRED, from: ask}}
    reply: {task: {steps: [{state: TASK_STATE_COMPLETED, message: Done}]}}
  - name: ask
    match: {text: ask}
    reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED, message: Which branch?}]}}
"""


def test_a_follow_up_with_no_task_before_it_is_skipped_not_sent_as_new(tmp_path: Path) -> None:
    path = tmp_path / "early.yaml"
    path.write_text(EARLY)
    with serve_in_thread(path, pace="instant") as agent:
        code, lines = verify(path, agent.url)
    # before: "ok answer": sent with no task, both sides refused it alike, and that passed
    assert lines == [
        "skip answer (a follow-up of ask, which has no task before it to follow up on)",
        "ok ask",
        "verified 1 of 2 interactions; 1 skipped: answer",
    ]
    assert code == 0


METADATA = """\
version: 1
agent: {name: triage, description: Triage., skills: [{id: s, name: S, description: S.}]}
interactions:
  - name: urgent
    match:
      text: help
      where: {message.metadata.priority: high}
    reply: {message: On it.}
  - name: hello
    match: {text: hello}
    reply: {message: Hi.}
  - name: anything
    reply: {message: Noted.}
"""


def test_an_interaction_its_rebuilt_request_does_not_reach_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "triage.yaml"
    path.write_text(METADATA)
    with serve_in_thread(path, pace="instant") as agent:
        code, lines = verify(path, agent.url)
    # before: "ok urgent": verify sent "help" without the metadata, `anything` answered it on
    # both sides, and that compared equal
    assert lines[0] == (
        "skip urgent (its request, as verify rebuilds it from its matchers, is answered by "
        "anything)"
    ), lines
    assert lines[1] == "ok hello"
    assert code == 0


def test_interactions_told_apart_by_message_id_are_sent_with_it() -> None:
    path = CASSETTES / "conformance" / "tck.yaml"  # `where: {message.messageId: {startswith}}`
    with serve_in_thread(path, pace="instant") as agent:
        code, lines = verify(path, agent.url)
    # before: every interaction skipped ("no recorded request to send"), and exit 0
    assert "ok stream-001" in lines and "ok complete-task" in lines, lines
    assert lines[-1].startswith("verified 17 of 19 interactions; 2 skipped:"), lines
    # served instantly, the agent is far off the 4 s and 2 s gates of its two slow streams
    assert [line for line in lines if line.startswith("drift")] == [
        "drift resubscribe (streamed)",
        "drift delayed-complete (streamed)",
    ]
    assert code == 1


def test_a_part_a_parts_matcher_asks_for_is_sent() -> None:
    path = CASSETTES / "kit" / "code-reviewer.yaml"  # review: `parts: {any: {mediaType: …}}`
    with serve_in_thread(path, pace="instant") as agent:
        code, lines = verify(path, agent.url)
    # before: "skip review (no recorded request to send)"
    assert "ok review (streamed)" in lines, lines
    assert code == 0
