"""`mockagent verify --update` changes only what drifted. A live agent that moves on its own
clock, polled faster than the cassette was recorded, shows each step on its own: that is no drift,
and the cassette's `after: {polls}` gates stay as written (verify's own polling speed says nothing
of the agent). A real change rewrites only the lines that changed, gates kept, and lists each."""

from __future__ import annotations

import re
from collections.abc import Iterator
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import ServerThread, serve_in_thread

# The live agent: a build that moves on its clock (the steps' `ms`), as a real agent does.
LIVE = """\
version: 1
agent: {name: builder, description: Builds., skills: [{id: s, name: S, description: S.}]}
interactions:
- name: build
  match: {text: build it}
  reply:
    task:
      steps:
      - state: TASK_STATE_SUBMITTED
      - state: TASK_STATE_WORKING
        message: Building 1.4.2
        after: {ms: 150}
      - artifact: {artifactId: log, name: log.txt, parts: [{text: "compiling\\n"}]}
        after: {ms: 100}
      - artifact: {artifactId: log, name: log.txt, parts: [{text: "linking\\n"}]}
        append: true
        lastChunk: true
        after: {ms: 100}
      - state: TASK_STATE_COMPLETED
        message: Built 1.4.2
        after: {ms: 100}
"""

# The same build as a slow client recorded it: two polls to WORKING, which came with the first
# chunk of the log, one more poll to the rest of it and the end.
RECORDED = """\
# yaml-language-server: $schema=../schema.json
version: 1
agent: {name: builder, description: Builds., skills: [{id: s, name: S, description: S.}]}
interactions:
  # the build, polled
  - name: build
    match:
      text: {contains: build it}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          # two polls to WORKING and the first chunk of the log
          - state: TASK_STATE_WORKING
            message: Building 1.4.2
            after: {polls: 2}
          - artifact:
              artifactId: log
              name: log.txt
              parts:
                - text: "compiling\\n"
          # one more to the end
          - artifact:
              artifactId: log
              name: log.txt
              parts:
                - text: "linking\\n"
            append: true
            lastChunk: true
            after: {polls: 1}
          - state: TASK_STATE_COMPLETED
            message: Built 1.4.2
"""


@pytest.fixture
def live(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ServerThread]:
    path = tmp_path / "live" / "builder.yaml"
    path.parent.mkdir()
    text = LIVE
    for old, new in getattr(request, "param", ()):  # how the agent changed since the recording
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)
    with serve_in_thread(path, pace="recorded") as agent:
        yield agent


def update(path: Path, url: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url, "--update"])
    return result.exit_code, result.output


def test_an_unchanged_agent_polled_faster_leaves_the_cassette_byte_identical(
    live: ServerThread, tmp_path: Path
) -> None:
    path = tmp_path / "build.yaml"
    path.write_text(RECORDED)
    code, output = update(path, live.url)
    # before: "drift build (polled)" (the live task showed WORKING before its first chunk), and
    # the cassette re-recorded with `after: {polls: 8}` and the like, comments gone
    assert output.splitlines() == ["ok build (polled)", f"nothing changed in {path}"]
    assert code == 0
    assert path.read_text() == RECORDED


@pytest.mark.parametrize("live", [[("Built 1.4.2", "Built 1.4.3")]], indirect=True)
def test_a_changed_agent_changes_only_the_changed_line_and_lists_it(
    live: ServerThread, tmp_path: Path
) -> None:
    path = tmp_path / "build.yaml"
    path.write_text(RECORDED)
    code, output = update(path, live.url)
    lines = output.splitlines()
    assert lines[0] == "drift build (polled)", output
    line = RECORDED.splitlines().index("            message: Built 1.4.2") + 1
    assert lines[-3:] == [
        "updated build",
        f"{path}:{line}: message: Built 1.4.2 → message: Built 1.4.3",
        f"wrote {path}",
    ]
    assert code == 0
    assert path.read_text() == RECORDED.replace("Built 1.4.2", "Built 1.4.3")


TESTING = """\
      - artifact: {artifactId: log, name: log.txt, parts: [{text: "testing\\n"}]}
        append: true
        after: {ms: 100}
"""


@pytest.mark.parametrize(
    "live",
    [[("      - state: TASK_STATE_COMPLETED", TESTING + "      - state: TASK_STATE_COMPLETED")]],
    indirect=True,
)
def test_a_step_the_agent_added_comes_in_alone_and_every_written_gate_stays(
    live: ServerThread, tmp_path: Path
) -> None:
    path = tmp_path / "build.yaml"
    path.write_text(RECORDED)
    code, output = update(path, live.url)
    assert output.splitlines()[0] == "drift build (polled)", output
    before, after = RECORDED.splitlines(), path.read_text().splitlines()
    changes = [op for op in SequenceMatcher(None, before, after).get_opcodes() if op[0] != "equal"]
    assert [op[0] for op in changes] == ["insert"], after  # nothing else moved
    _, at, _, start, end = changes[0]
    assert before[at] == "          - state: TASK_STATE_COMPLETED"
    added = after[start:end]
    # written like the written steps (quoting, flow-style gate), one poll at most: how many
    # verify made before the step showed is its own polling speed
    assert added == [
        "          - artifact:",
        "              artifactId: log",
        "              name: log.txt",
        "              parts:",
        '                - text: "testing\\n"',
        "            append: true",
        "            after: {polls: 1}",
    ], added
    # each added line listed with its own number and indentation
    listed = [line for line in output.splitlines() if ": + " in line]
    assert listed == [f"{path}:{start + 1 + k}: + {text}" for k, text in enumerate(added)], output
    assert code == 0
    # and the cassette now says what the agent does
    verified = CliRunner().invoke(main, ["verify", str(path), "--upstream", live.url])
    assert verified.output.splitlines() == ["ok build (polled)"], verified.output


KIT = Path(__file__).parents[2] / "cassettes" / "kit" / "test-runner.yaml"
DOCS = """\
          - artifact:
              artifactId: test-log
              name: test-log.txt
              parts:
                - text: "tests/test_docs.py .                                      [100%]\\n"
            append: true
"""


def test_a_chunk_the_agent_still_sends_comes_back_alone_flags_gates_and_form_kept(
    tmp_path: Path,
) -> None:
    kit = KIT.read_text()
    gate = "            after: {polls: 0, ms: 200}\n"
    assert kit.count(DOCS + gate) == 1
    path = tmp_path / "test-runner.yaml"
    path.write_text(kit.replace(DOCS + gate, ""))  # the docs chunk of run-9f3c2e1 dropped
    with serve_in_thread(KIT, pace="recorded") as agent:
        code, output = update(path, agent.url)
    assert "drift run-9f3c2e1 (polled)" in output.splitlines(), output
    # before: the four chunks one step of four parts, `lastChunk` gone, `ms: 400` made `ms: 8`,
    # the log's texts as `|` blocks and a comment moved. Now the chunk comes back alone, as
    # written; its gate cannot be told from polls, which saw it with the chunk before it
    assert path.read_text() == kit.replace(DOCS + gate, DOCS)
    first = kit.splitlines().index(DOCS.splitlines()[4]) - 3
    assert [line for line in output.splitlines() if ": + " in line] == [
        f"{path}:{first + k}: + {text}" for k, text in enumerate(DOCS.splitlines())
    ], output
    assert code == 0


def test_a_direct_message_that_changed_stays_a_plain_string(tmp_path: Path) -> None:
    kit = KIT.parent / "code-reviewer.yaml"
    text = kit.read_text()
    old = "message: I review Python, TypeScript, Go and Rust diffs."
    assert text.count(old) == 1
    path = tmp_path / "code-reviewer.yaml"
    path.write_text(text.replace(old, "message: I review COBOL diffs."))
    with serve_in_thread(kit, pace="instant") as agent:
        code, output = update(path, agent.url)
    # before: `message: {parts: [{text: '…'}]}`
    assert path.read_text() == text, output
    assert code == 0


PACED = """\
version: 1
agent: {name: paced, capabilities: {streaming: true}}
interactions:
  - name: build
    match: {text: build}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
            message: 'Starting'   # single-quoted on purpose
          - artifact: {artifactId: log, parts: [{text: "line 1\\n"}]}
            after: {ms: 100}
          - state: TASK_STATE_COMPLETED
            message: Done
            after: {ms: 40}
"""


def served(tmp_path: Path, text: str) -> Any:
    live = tmp_path / "live.yaml"
    live.write_text(text)
    return serve_in_thread(live, pace="recorded")


def test_an_ms_gate_the_agent_is_far_off_is_drift_and_updated_rounded(tmp_path: Path) -> None:
    path = tmp_path / "paced.yaml"
    path.write_text(PACED.replace("{ms: 100}", "{ms: 1500}"))
    with served(tmp_path, PACED) as agent:
        verified = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
        code, output = update(path, agent.url)
        again = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
    # before: "ok build (streamed)", and --update kept the 1500
    assert verified.output.splitlines()[0] == "drift build (streamed)", verified.output
    assert "event 1: came " in verified.output and "`after: {ms: 1500}`" in verified.output
    assert verified.exit_code == 1
    # what the agent took, rounded to 50 ms: never the measured jitter (`ms: 103`)
    written = path.read_text().splitlines()
    line = PACED.splitlines().index("            after: {ms: 100}")
    gate = int(written[line].removeprefix("            after: {ms: ").removesuffix("}"))
    assert gate % 50 == 0 and 100 <= gate <= 200, written[line]
    assert (
        written[:line] + written[line + 1 :]
        == PACED.splitlines()[:line] + PACED.splitlines()[line + 1 :]
    )
    assert f"{path}:{line + 1}: after: {{ms: 1500}} → after: {{ms: {gate}}}" in output.splitlines()
    assert code == 0
    assert again.output.splitlines() == ["ok build (streamed)"], again.output


def test_a_gate_within_tolerance_stays_when_the_interaction_drifts_otherwise(
    tmp_path: Path,
) -> None:
    path = tmp_path / "paced.yaml"
    path.write_text(PACED.replace("message: Done", "message: Finished").replace("line 1", "line X"))
    with served(tmp_path, PACED) as agent:
        code, output = update(path, agent.url)
    # before: the text drift took the measured gaps along (`ms: 61`, say)
    assert path.read_text() == PACED, output
    assert code == 0


POLLED = """\
version: 1
agent: {name: polled}
interactions:
  - name: build
    match: {text: build}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
            message: Building
          - state: TASK_STATE_COMPLETED
            message: Built
            after: {polls: 1}
"""


def test_a_polls_gate_the_agent_passes_in_fewer_polls_is_drift_and_updated(
    tmp_path: Path,
) -> None:
    path = tmp_path / "polled.yaml"
    path.write_text(POLLED.replace("{polls: 1}", "{polls: 3}"))
    with served(tmp_path, POLLED) as agent:
        verified = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
        code, output = update(path, agent.url)
        again = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
    # before: "ok build (polled)"
    assert verified.output.splitlines() == [
        "drift build (polled)",
        "    poll 1: the live task showed this after 1 poll(s), `after: {polls: 3}` in the "
        "cassette",
    ]
    assert verified.exit_code == 1
    assert path.read_text() == POLLED, output
    assert code == 0
    assert again.output.splitlines() == ["ok build (polled)"], again.output


CHUNK_2 = """\
          - artifact: {artifactId: log, parts: [{text: "line 2\\n"}]}
            append: true
            lastChunk: true
            after: {ms: 100}
"""


def test_a_streamed_chunk_added_back_is_written_in_the_cassettes_flow_style(
    tmp_path: Path,
) -> None:
    text = PACED.replace(
        "          - state: TASK_STATE_COMPLETED",
        CHUNK_2 + "          - state: TASK_STATE_COMPLETED",
    )
    path = tmp_path / "paced.yaml"
    path.write_text(text.replace(CHUNK_2, ""))
    with served(tmp_path, text) as agent:
        code, output = update(path, agent.url)
    # before: written in block style (`parts:` / `- text: |`), `after:` on lines of its own,
    # and every `+` line numbered as the line it follows, without indentation
    gap = re.search(
        r"after: \{ms: (\d+)\}\n          - state: TASK_STATE_COMPLETED", path.read_text()
    )
    assert gap is not None, path.read_text()
    assert int(gap[1]) % 50 == 0 and 100 <= int(gap[1]) <= 200  # the gap it took, rounded
    written = text.replace(
        "{ms: 100}\n          - state: TASK_STATE_COMPLETED",
        f"{{ms: {gap[1]}}}\n          - state: TASK_STATE_COMPLETED",
    )
    assert path.read_text() == written, output
    first = text.splitlines().index(CHUNK_2.splitlines()[0]) + 1
    added = written.splitlines()[first - 1 : first + 3]
    assert [line for line in output.splitlines() if ": + " in line] == [
        f"{path}:{first + k}: + {line}" for k, line in enumerate(added)
    ], output
    assert code == 0
