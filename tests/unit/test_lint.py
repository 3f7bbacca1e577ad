"""`mockagent lint`: each check finds its mistake, at the right line, and stays quiet on clean
cassettes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cassette.loader import load_cassette
from mockagent.cli.main import main
from mockagent.lint.run import Finding, check, lint

ROOT = Path(__file__).resolve().parents[2]

A2A = """\
version: 1
agent:
  name: linted
  description: A cassette under lint.
  capabilities: {{streaming: {streaming}, pushNotifications: {push}}}
  skills:
    - {{id: s, name: S, description: S.}}
interactions:
"""

AGENTEX = """\
version: 1
protocol: agentex
agents:
  - {id: a1, name: helper}
interactions:
"""


def cassette(
    tmp_path: Path,
    interactions: str,
    *,
    streaming: bool = True,
    push: bool = True,
    name: str = "c.yaml",
    head: str | None = None,
) -> Path:
    text = (
        head
        if head is not None
        else A2A.format(streaming=str(streaming).lower(), push=str(push).lower())
    )
    path = tmp_path / name
    path.write_text(text + interactions)
    return path


def line_of(path: Path, marker: str) -> int:
    """1-based line of the first line containing `marker`."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


WORKING, DONE = "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"


def codes(findings: list[Finding]) -> list[tuple[str | None, str]]:
    return [(f.interaction, f.code) for f in findings]


CLEAN = """\
  - name: start                       # @start
    match: {text: {startswith: build}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: log, parts: [{text: "a"}]}
          - artifact: {artifactId: log, parts: [{text: "b"}]}
            append: true
            lastChunk: true
          - state: TASK_STATE_INPUT_REQUIRED
  - name: more
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: start}}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: log, parts: [{text: "c"}]}
          - state: TASK_STATE_COMPLETED
  - name: stream-only
    match: {operation: SendStreamingMessage, text: stream}
    fault: {dropAfter: 1}
    reply: {message: streamed}
  - name: push
    match: {operation: CreateTaskPushNotificationConfig}
    reply: {error: UnsupportedOperation}
  - name: limited
    times: 1
    reply: {message: once}
  - name: fallback
    reply: {message: anything}
"""


def test_a_clean_cassette_has_no_findings(tmp_path: Path) -> None:
    assert lint(cassette(tmp_path, CLEAN)) == []


@pytest.mark.parametrize("folder", ["kit", "conformance", "agentex"])
def test_the_bundled_cassettes_lint_clean(folder: str) -> None:
    path = ROOT / "cassettes" / folder
    assert list(path.glob("*.yaml"))
    assert [str(f) for f in lint(path)] == []


def test_a_step_after_a_terminal_state(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: done
    reply:
      task:
        steps:
          - state: TASK_STATE_COMPLETED
          - state: TASK_STATE_WORKING        # @late
""",
    )
    [finding] = lint(path)
    assert (finding.interaction, finding.code, finding.line) == (
        "done",
        "state-after-terminal",
        line_of(path, "@late"),
    )
    assert "COMPLETED" in finding.message


def test_a_finds_gate_where_no_get_or_create_comes(tmp_path: Path) -> None:
    script = """\
  - name: found
    match: {{operation: {op}}}
    reply:
      task:
        steps:
          - state: {working}
          - {{state: {done}, after: {{finds: 1}}}}        # @found
"""
    a2a = cassette(
        tmp_path, script.format(op="SendMessage", working=WORKING, done=DONE), name="a2a.yaml"
    )
    [finding] = lint(a2a)
    assert (finding.interaction, finding.code, finding.line) == (
        "found",
        "finds-without-get-or-create",
        line_of(a2a, "@found"),
    )
    agentex = cassette(
        tmp_path,
        script.format(op="CreateTask", working="RUNNING", done="TIMED_OUT"),
        name="agentex.yaml",
        head=AGENTEX,
    )
    assert lint(agentex) == []


def test_back_to_submitted_and_a_follow_up_that_starts_submitted(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: again
    match: {text: again}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_SUBMITTED      # @back
          - state: TASK_STATE_INPUT_REQUIRED
  - name: next
    match: {task: {state: TASK_STATE_INPUT_REQUIRED}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED      # @restart
          - state: TASK_STATE_WORKING
""",
    )
    findings = lint(path)
    assert codes(findings) == [("again", "illegal-transition"), ("next", "illegal-transition")]
    assert [f.line for f in findings] == [line_of(path, "@back"), line_of(path, "@restart")]
    assert "after WORKING" in findings[0].message


def test_a_follow_up_on_a_terminal_state_never_matches(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: first
    match: {text: first}
    reply: {task: {steps: [{state: TASK_STATE_COMPLETED}]}}
  - name: too-late                       # @late
    match: {task: {state: [TASK_STATE_WORKING, TASK_STATE_COMPLETED], from: first}}
    reply: {message: never}
""",
    )
    [finding] = lint(path)
    assert (finding.interaction, finding.code, finding.line) == (
        "too-late",
        "illegal-transition",
        line_of(path, "@late"),
    )
    assert "COMPLETED" in finding.message and "WORKING" not in finding.message


def test_append_without_artifact_and_a_chunk_after_the_last(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: chunks
    reply:
      task:
        steps:
          - artifact: {artifactId: a, parts: [{text: x}]}
            lastChunk: true
          - artifact: {artifactId: a, parts: [{text: y}]}   # @after-last
            append: true
          - artifact: {artifactId: b, parts: [{text: z}]}   # @orphan
            append: true
""",
    )
    findings = lint(path)
    assert codes(findings) == [
        ("chunks", "chunk-after-last"),
        ("chunks", "append-without-artifact"),
    ]
    assert [f.line for f in findings] == [line_of(path, "@after-last"), line_of(path, "@orphan")]


def test_a_follow_up_appends_to_its_origins_artifact_but_not_to_another(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: origin
    match: {text: one}
    reply:
      task:
        steps:
          - artifact: {artifactId: mine, parts: [{text: x}]}
          - state: TASK_STATE_INPUT_REQUIRED
  - name: other
    match: {text: two}
    reply:
      task:
        steps:
          - artifact: {artifactId: theirs, parts: [{text: x}]}
          - state: TASK_STATE_INPUT_REQUIRED
  - name: follow
    match: {task: {from: origin}}
    reply:
      task:
        steps:
          - artifact: {artifactId: mine, parts: [{text: y}]}
            append: true
          - artifact: {artifactId: theirs, parts: [{text: y}]}   # @theirs
            append: true
""",
    )
    [finding] = lint(path)
    assert (finding.interaction, finding.code, finding.line) == (
        "follow",
        "append-without-artifact",
        line_of(path, "@theirs"),
    )
    assert "'theirs'" in finding.message


def test_steps_after_a_stop_that_no_follow_up_continues(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: lonely
    match: {text: lonely}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
          - state: TASK_STATE_WORKING        # @lonely
          - state: TASK_STATE_COMPLETED
  - name: wrong-state
    match: {text: wrong}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_AUTH_REQUIRED
          - state: TASK_STATE_COMPLETED      # @wrong
  - name: answered
    match: {text: answered}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
          - state: TASK_STATE_COMPLETED
  - name: answer
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: answered}}
    times: 1
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
            message: And which commit?
          - state: TASK_STATE_COMPLETED
  - name: elsewhere
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: wrong-state}}
    reply: {message: not at AUTH_REQUIRED}
  - name: refused
    match: {task: {from: wrong-state}}
    reply: {error: UnsupportedOperation}
""",
    )
    findings = lint(path)
    assert codes(findings) == [
        ("lonely", "unreachable-steps"),
        ("wrong-state", "unreachable-steps"),
        ("answer", "unreachable-steps"),
        ("elsewhere", "unreachable-follow-up"),  # `wrong-state` stops at AUTH_REQUIRED only
    ]
    assert [f.line for f in findings[:2]] == [line_of(path, "@lonely"), line_of(path, "@wrong")]
    assert findings[0].message == (
        "steps 2-3 come after INPUT_REQUIRED (step 1), and no follow-up continues the task: "
        "add an interaction that matches `task: {from: lonely}`, or end the script at step 1"
    )
    assert "step 3 comes after AUTH_REQUIRED (step 2)" in findings[1].message
    assert "step 2 comes after INPUT_REQUIRED (step 1)" in findings[2].message
    assert "`task: {from: answered}`" in findings[2].message
    # `answered` stops where `answer` picks up; `answer`, once usable again, continues itself
    again = path.read_text().split("interactions:\n", 1)[1].replace("    times: 1\n", "")
    assert codes(lint(cassette(tmp_path, again, name="again.yaml"))) == [
        ("lonely", "unreachable-steps"),
        ("wrong-state", "unreachable-steps"),
        ("elsewhere", "unreachable-follow-up"),
    ]


def test_a_follow_up_that_restates_the_state_it_answers(tmp_path: Path) -> None:
    # what a recording of a polled follow-up used to write (issue 17, problem 3)
    path = cassette(
        tmp_path,
        """\
  - name: ask
    match: {text: ask}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which branch?
  - name: main
    match: {text: main, task: {state: TASK_STATE_INPUT_REQUIRED, from: ask}}
    times: 1
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED   # @restated
          - state: TASK_STATE_WORKING
            after: {polls: 2}
          - state: TASK_STATE_COMPLETED
            after: {polls: 1}
  - name: reminder
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: ask}}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
            message: Still waiting for a branch
""",
    )
    [finding] = lint(path)  # `reminder` asks again and stops there: nothing after it is lost
    assert (finding.interaction, finding.code, finding.line) == (
        "main",
        "unreachable-steps",
        line_of(path, "@restated"),
    )
    assert finding.message == (
        "step 1 restates INPUT_REQUIRED, the state this follow-up finds the task in: the task "
        "stops there again at once, and steps 2-3 wait for another message; leave step 1 out "
        "(a returnImmediately answer then shows the task as it is)"
    )
    fixed = path.read_text().replace(
        "          - state: TASK_STATE_INPUT_REQUIRED   # @restated\n", ""
    )
    assert lint(cassette(tmp_path, fixed.split("interactions:\n", 1)[1], name="fixed.yaml")) == []


def test_a_script_that_stops_more_often_than_its_follow_ups_answer(tmp_path: Path) -> None:
    # two stops need two messages; `branch` answers one, so steps 5-6 are never played
    interactions = """\
  - name: deploy
    match: {text: deploy}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which branch?
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_AUTH_REQUIRED
            message: Sign in first
          - state: TASK_STATE_WORKING        # @second
          - state: TASK_STATE_COMPLETED
  - name: branch
    match: {task: {state: [TASK_STATE_INPUT_REQUIRED, TASK_STATE_AUTH_REQUIRED], from: deploy}}
    times: 1
    reply: {message: noted}
"""
    path = cassette(tmp_path, interactions)
    [finding] = lint(path)
    assert (finding.interaction, finding.code, finding.line) == (
        "deploy",
        "unreachable-steps",
        line_of(path, "@second"),
    )
    assert finding.message == (
        "steps 4-5 come after AUTH_REQUIRED (step 3), stop 2 of 2 in this script, but the "
        "follow-ups that continue the task answer 1 message in all (their `times`): raise a "
        "`times`, or end the script at step 3"
    )
    for times in ("    times: 2\n", ""):  # enough messages, or no limit
        fixed = interactions.replace("    times: 1\n", times)
        assert lint(cassette(tmp_path, fixed, name="fixed.yaml")) == []
    one = interactions.replace("          - state: TASK_STATE_COMPLETED\n", "")
    [finding] = lint(cassette(tmp_path, one, name="one.yaml"))
    assert finding.message.startswith("step 4 comes after AUTH_REQUIRED (step 3), stop 2 of 2")


def test_a_follow_up_whose_task_can_never_exist(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: question
    match: {text: question}
    reply: {message: an answer}
  - name: on-a-message
    match: {task: {from: question}}          # @message
    reply: {message: never}
  - name: ask
    match: {text: ask}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
  - name: answer
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: ask}}
    reply: {task: {steps: [{state: TASK_STATE_COMPLETED}]}}
  - name: on-a-follow-up
    match: {task: {from: answer}}            # @follow-up
    reply: {message: never}
  - name: signed-in
    match: {task: {state: TASK_STATE_AUTH_REQUIRED, from: ask}}   # @state
    reply: {message: never}
""",
    )
    findings = lint(path)
    assert codes(findings) == [
        ("on-a-message", "unreachable-follow-up"),
        ("on-a-follow-up", "unreachable-follow-up"),
        ("signed-in", "unreachable-follow-up"),
    ]
    assert [f.line for f in findings] == [
        line_of(path, m) for m in ("@message", "@follow-up", "@state")
    ]
    assert [f.message for f in findings] == [
        "can never match: its task would come from 'question', which answers with a message, "
        "not a task",
        "can never match: its task would come from 'answer', which is a follow-up itself: it "
        "answers on a task another interaction created",
        "can never match: no script of 'ask' or its follow-ups reaches AUTH_REQUIRED, the state "
        "it answers in",
    ]


def test_streaming_off_and_push_off(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: streamed                        # @streamed
    match: {operation: [SendStreamingMessage, SubscribeToTask]}
    reply: {message: hi}
  - name: dropped                         # @dropped
    match: {text: drop}
    fault: {errorAfter: 1}
    reply: {message: hi}
  - name: closed                          # @closed
    match: {text: close}
    fault: {closeAfter: 1}
    reply: {task: {steps: [{state: TASK_STATE_WORKING}, {state: TASK_STATE_COMPLETED}]}}
  - name: push                            # @push
    match: {operation: GetTaskPushNotificationConfig}
    reply: {error: TaskNotFound}
  - name: either
    match: {operation: [SendMessage, SendStreamingMessage]}
    reply: {message: fine}
""",
        streaming=False,
        push=False,
    )
    findings = lint(path)
    assert codes(findings) == [
        ("streamed", "streaming-off"),
        ("dropped", "streaming-off"),
        ("closed", "streaming-off"),
        ("push", "push-off"),
    ]
    assert [f.line for f in findings] == [
        line_of(path, m) for m in ("@streamed", "@dropped", "@closed", "@push")
    ]
    assert "fault.closeAfter only applies to streams" in findings[2].message
    # the same interactions are fine on a card that streams and pushes
    assert (
        lint(cassette(tmp_path, path.read_text().split("interactions:\n", 1)[1], name="on.yaml"))
        == []
    )


def test_unknown_operations_per_protocol_do_not_load(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: typo
    match: {operation: [SendMessage, GetTasks]}   # @typo
    reply: {message: hi}
""",
    )
    [finding] = lint(path)
    assert (finding.code, finding.line) == ("load-error", line_of(path, "@typo"))
    assert finding.message == (
        "interaction 'typo' (#1): match.operation[1]: unknown operation 'GetTasks'; "
        "did you mean 'GetTask'?"
    )
    a2a = cassette(
        tmp_path,
        """\
  - name: agentex-only
    match: {operation: CreateTask}                # @agentex
    reply: {error: TaskNotFound}
""",
        name="a2a.yaml",
    )
    [finding] = lint(a2a)
    assert (finding.code, finding.line) == ("load-error", line_of(a2a, "@agentex"))
    assert (
        "match.operation: a2a has no operation 'CreateTask'; use one of CancelTask,"
        in finding.message
    )
    agentex = cassette(
        tmp_path,
        """\
  - name: create
    match: {operation: [CreateTask, InterruptTask, SendEvent]}
    reply: {error: TaskNotFound}
  - name: card
    match: {operation: GetExtendedAgentCard}      # @card
    reply: {error: TaskNotFound}
""",
        head=AGENTEX,
        name="agentex.yaml",
    )
    [finding] = lint(agentex)
    assert (finding.code, finding.line) == ("load-error", line_of(agentex, "@card"))
    assert (
        "interaction 'card' (#2): match.operation: agentex has no operation 'GetExtendedAgentCard'"
        in (finding.message)
    )


SHADOWS = """\
  - name: catch-all
    reply: {message: anything}
  - name: never                           # @never
    match: {text: hello}
    reply: {message: hi}
"""


def test_an_interaction_behind_a_catch_all_is_shadowed(tmp_path: Path) -> None:
    path = cassette(tmp_path, SHADOWS)
    [finding] = lint(path)
    assert (finding.interaction, finding.code, finding.line) == (
        "never",
        "shadowed",
        line_of(path, "@never"),
    )
    assert "'catch-all' (line 9)" in finding.message
    assert finding.shadowed_by == "catch-all"


def test_check_runs_the_same_rules_on_any_list_of_interactions(tmp_path: Path) -> None:
    """What the engine runs on interactions added to a served agent: lint's rules on a list in
    the order tried, under the cassette's card; `only` picks whose findings count."""
    path = cassette(tmp_path, SHADOWS)
    loaded = load_cassette(path)
    interactions = list(loaded.cassette.interactions)
    everything = lint(path)
    assert [(f.code, f.message) for f in check(loaded.cassette, interactions, str(path))] == [
        (f.code, f.message.replace(" (line 9)", "")) for f in everything
    ]
    [found] = check(loaded.cassette, interactions, only=[len(interactions) - 1])
    assert str(found) == f"interaction 'never': shadowed {found.message}"
    assert found.message.startswith("can never match: interaction 'catch-all' comes first")
    assert check(loaded.cassette, interactions[::-1], only=[0]) == []  # first: nothing shadows it


def test_shadowing_needs_every_matcher_of_the_earlier_one(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: hello-header
    match: {text: hello, headers: {X-Tenant: acme}, where: {metadata.k: 1}}
    reply: {message: a}
  - name: same-plus                       # @same-plus
    match: {text: hello, headers: {x-tenant: acme}, where: {metadata.k: 1, metadata.j: 2}}
    reply: {message: b}
  - name: other-header
    match: {text: hello, headers: {X-Tenant: other}, where: {metadata.k: 1}}
    reply: {message: c}
  - name: no-header
    match: {text: hello}
    reply: {message: d}
  - name: streamed-only
    match: {operation: SendStreamingMessage}
    reply: {message: e}
  - name: any-stream                      # @any-stream
    match: {operation: SendStreamingMessage, text: hi}
    reply: {message: f}
  - name: limited
    times: 2
    match: {text: bye}
    reply: {message: g}
  - name: after-limited
    match: {text: bye}
    reply: {message: h}
""",
    )
    findings = lint(path)
    assert codes(findings) == [("same-plus", "shadowed"), ("any-stream", "shadowed")]
    assert [f.line for f in findings] == [line_of(path, "@same-plus"), line_of(path, "@any-stream")]


def test_follow_up_matchers_and_shadowing(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: origin
    match: {text: start}
    reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED}]}}
  - name: any-follow-up
    match: {task: {state: [TASK_STATE_INPUT_REQUIRED, TASK_STATE_AUTH_REQUIRED]}}
    reply: {message: a}
  - name: narrower                        # @narrower
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: origin}}
    reply: {message: b}
  - name: new-task
    match: {text: start}
    reply: {message: c}
""",
    )
    findings = lint(path)
    # `new-task` is shadowed by `origin` (same text); `any-follow-up` shadows only follow-ups
    assert codes(findings) == [("narrower", "shadowed"), ("new-task", "shadowed")]
    assert findings[0].line == line_of(path, "@narrower")
    assert "'any-follow-up'" in findings[0].message and "'origin'" in findings[1].message


def test_a_follow_up_from_no_interaction(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: first
    match: {text: first}
    reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED}]}}
  - name: orphan
    match: {task: {from: frist}}          # @orphan
    reply: {message: hi}
""",
    )
    [finding] = lint(path)  # the loader refuses it (so does serve), and says so at its line
    assert (finding.code, finding.line) == ("load-error", line_of(path, "@orphan"))
    assert finding.message == (
        "interaction 'orphan' (#2): match.task.from: names 'frist', which is no "
        "interaction of this cassette; did you mean 'first'?"
    )


def test_a_cassette_that_does_not_load_is_one_finding(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: bad
    reply:
      task:
        steps:
          - state: TASK_STATE_SLEEPING          # @bad
""",
    )
    [finding] = lint(path)
    assert (finding.code, finding.line, finding.interaction) == (
        "load-error",
        line_of(path, "@bad"),
        None,
    )
    assert "unknown task state" in finding.message and str(path) not in finding.message
    broken_regex = cassette(
        tmp_path,
        """\
  - name: bad-regex
    match: {text: {regex: "("}}               # @regex
    reply: {message: hi}
""",
        name="regex.yaml",
    )
    [finding] = lint(broken_regex)
    assert (finding.code, finding.line) == ("load-error", line_of(broken_regex, "@regex"))
    assert "bad regex" in finding.message


def test_a_cassette_that_is_not_yaml_says_so_once(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("version: 1\nagent: [unclosed\n")
    [finding] = lint(path)
    assert finding.code == "load-error"
    assert str(finding).startswith(f"{path}:3: load-error not valid YAML: ")
    assert "invalid not valid" not in str(finding)


def test_finding_text() -> None:
    finding = Finding("c.yaml", 12, "run", "shadowed", "can never match")
    assert str(finding) == "c.yaml:12: interaction 'run': shadowed can never match"
    assert (
        str(Finding("c.yaml", 3, None, "load-error", "not valid YAML"))
        == "c.yaml:3: load-error not valid YAML"
    )
    assert str(Finding("", None, "run", "shadowed", "can never match")) == (
        "interaction 'run': shadowed can never match"
    )


def test_a_folder_lints_every_cassette_in_it_and_below(tmp_path: Path) -> None:
    cassette(tmp_path, CLEAN, name="a.yaml")
    cassette(tmp_path, SHADOWS, name="b.yaml")
    (tmp_path / "notes.txt").write_text("not a cassette")
    (tmp_path / "team" / "deep").mkdir(parents=True)
    cassette(tmp_path / "team" / "deep", SHADOWS, name="c.yml")
    (tmp_path / ".hidden").mkdir()
    cassette(tmp_path / ".hidden", SHADOWS, name="d.yaml")
    findings = lint(tmp_path)
    assert [(Path(f.path).relative_to(tmp_path).as_posix(), f.code) for f in findings] == [
        ("b.yaml", "shadowed"),
        ("team/deep/c.yml", "shadowed"),
    ]


# -- the command ----------------------------------------------------------------------------------


def test_lint_command_clean(tmp_path: Path) -> None:
    path = cassette(tmp_path, CLEAN)
    result = CliRunner().invoke(main, ["lint", str(path), str(ROOT / "cassettes" / "kit")])
    assert result.exit_code == 0, result.output
    assert result.output == "ok: 4 cassettes\n"


def test_lint_command_walks_folders_below(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["lint", str(ROOT / "cassettes")])
    assert result.exit_code == 0, result.output
    assert result.output == f"ok: {len(list((ROOT / 'cassettes').rglob('*.yaml')))} cassettes\n"
    (tmp_path / "deep" / "er").mkdir(parents=True)
    broken = tmp_path / "deep" / "er" / "broken.yaml"
    broken.write_text("version: 1\nagent: [unclosed\n")
    result = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.startswith(f"{broken}:3: load-error not valid YAML: ")
    assert result.output.endswith("1 finding in 1 cassette\n")


def test_lint_command_findings(tmp_path: Path) -> None:
    path = cassette(tmp_path, SHADOWS)
    clean = cassette(tmp_path, CLEAN, name="clean.yaml")
    result = CliRunner().invoke(main, ["lint", str(path), str(clean)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{path}:{line_of(path, '@never')}: interaction 'never': shadowed can never match: "
        "interaction 'catch-all' (line 9) comes first, has no `times` limit and matches every call "
        "this one does",
        "1 finding in 2 cassettes",
    ]
    quiet = CliRunner().invoke(main, ["lint", "--quiet", str(path)])
    assert quiet.exit_code == 1
    assert quiet.output.splitlines() == result.output.splitlines()[:1]


def test_lint_command_usage_errors(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["lint", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    assert CliRunner().invoke(main, ["lint"]).exit_code == 2
    empty = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert empty.exit_code == 2 and "no cassettes" in empty.output
    help_text = CliRunner().invoke(main, ["lint", "--help"])
    assert help_text.exit_code == 0 and "Exit status" in help_text.output


def test_a_made_up_id_matcher_does_not_shadow_a_real_task_matcher(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        """\
  - name: origin
    match: {text: ask}
    reply:
      task:
        steps:
          - {state: TASK_STATE_INPUT_REQUIRED, message: {parts: [{text: Which?}]}}
  - name: unknown
    match: {operation: CancelTask, task: {known: false}}
    reply: {error: {name: TaskNotFound, message: Task not found}}
  - name: real
    match: {operation: CancelTask, task: {from: origin}}
    reply: {error: {name: TaskNotCancelable, message: Too late}}
""",
    )
    assert codes(lint(path)) == []
