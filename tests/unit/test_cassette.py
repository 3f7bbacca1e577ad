"""Loading cassettes: safe YAML only, validation errors that name file, line, interaction, field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mockagent.cassette import LoadedCassette, TaskState, json_schema, load_cassette, load_folder
from mockagent.cassette.models import Cassette
from mockagent.errors import CassetteError, MockagentError
from tests.helpers.cassette_text import HEADER, cassette, line_of

Load = Callable[..., LoadedCassette]

TWO = cassette("""
    - name: hello
      match: {text: hi}
      reply: {message: hello}
    - name: run
      times: 2
      reply:
        task:
          steps:
            - state: TASK_STATE_WORKING
              message: {parts: [{text: busy}], metadata: {k: v}}
            - artifact: {artifactId: out, parts: [{text: done}]}
              append: false
              lastChunk: true
              after: {polls: 1}
            - state: completed
""")


def errors_of(load: Load, text: str) -> CassetteError:
    with pytest.raises(CassetteError) as info:
        load(text)
    return info.value


# -- valid cassettes ---------------------------------------------------------------------------


def test_a_minimal_cassette_loads_with_defaults(load: Load) -> None:
    minimal = """\
version: 1
agent:
  name: mini
  description: Minimal.
  skills: [{id: s, name: S, description: d}]
"""
    loaded = load(minimal, name="mini")
    c = loaded.cassette
    assert isinstance(c, Cassette)
    assert loaded.name == "mini"
    assert c.interactions == []
    assert c.protocol == "a2a"
    assert c.clock.start is None and c.clock.tick.ms == 250
    assert c.ids.seed is None
    assert c.agent.bindings == ["JSONRPC", "HTTP+JSON", "GRPC"]  # GRPC: while served
    assert c.agent.defaultInputModes == ["text/plain"]


def test_interactions_steps_and_shorthands_are_parsed(load: Load) -> None:
    c = load(TWO).cassette
    hello, run = c.interactions
    assert hello.reply.message == {"parts": [{"text": "hello"}]}  # a string is one text part
    assert hello.times is None and run.times == 2
    steps = run.reply.task.steps
    assert [s.task_state for s in steps] == [TaskState.WORKING, None, TaskState.COMPLETED]
    assert steps[0].message == {"parts": [{"text": "busy"}], "metadata": {"k": "v"}}
    assert steps[1].artifact["artifactId"] == "out" and steps[1].lastChunk
    assert steps[1].after.polls == 1 and steps[1].after.ms is None


def test_line_of_points_at_interactions(load: Load) -> None:
    loaded = load(TWO)
    assert loaded.line_of(("interactions", 0)) == line_of(TWO, "- name: hello")
    assert loaded.line_of(("interactions", 1)) == line_of(TWO, "- name: run")
    # an absent location falls back to its deepest present ancestor
    assert loaded.line_of(("interactions", 0, "match", "where")) == line_of(
        TWO, "match: {text: hi}"
    )


@pytest.mark.parametrize(
    "written", ["TASK_STATE_INPUT_REQUIRED", "INPUT_REQUIRED", "input-required", "input_required"]
)
def test_task_states_accept_every_spelling(written: str) -> None:
    assert TaskState.parse(written) is TaskState.INPUT_REQUIRED


def test_terminal_and_interrupted_states() -> None:
    assert {s for s in TaskState if s.terminal} == {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
        TaskState.TERMINATED,
        TaskState.TIMED_OUT,
        TaskState.DELETED,
    }  # the last three: Agentex
    assert {s for s in TaskState if s.interrupted} == {
        TaskState.INPUT_REQUIRED,
        TaskState.AUTH_REQUIRED,
        TaskState.INTERRUPTED,
    }


def test_clock_start_keeps_its_offset(load: Load) -> None:
    text = (
        HEADER.replace("2026-10-06T09:00:00Z", "2026-10-06T11:00:00+02:00") + "interactions: []\n"
    )
    start = load(text).cassette.clock.start
    assert start.utcoffset() is not None
    assert start.isoformat() == "2026-10-06T11:00:00+02:00"


def test_load_folder_reads_every_yaml_sorted_by_stem(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(cassette(), encoding="utf-8")
    (tmp_path / "a.yml").write_text(cassette(), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a cassette", encoding="utf-8")
    folder = load_folder(tmp_path)
    assert list(folder) == ["a", "b"]
    assert folder["a"].path.endswith("a.yml")


def test_load_folder_refuses_a_file_whose_name_has_a_control_character(tmp_path: Path) -> None:
    # its stem would be the agent's mount name, in URLs, logs and the journal
    (tmp_path / "ok.yaml").write_text(cassette(), encoding="utf-8")
    (tmp_path / "forged\n.yaml").write_text(cassette(), encoding="utf-8")
    with pytest.raises(CassetteError, match="cannot name an agent: a name holds no control"):
        load_folder(tmp_path)


def test_load_folder_without_cassettes_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no cassettes"):
        load_folder(tmp_path)


def test_a_missing_file_is_a_cassette_error(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    with pytest.raises(CassetteError, match="cannot read cassette") as info:
        load_cassette(path)
    assert str(info.value).startswith(f"{path}: ")
    assert isinstance(info.value, MockagentError)


# -- safe YAML ---------------------------------------------------------------------------------


def test_python_tags_are_refused_not_executed(load: Load, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = cassette() + f"x: !!python/object/apply:os.mkdir [{str(marker)!r}]\n"
    error = errors_of(load, text)
    assert not marker.exists()
    assert "not valid YAML" in str(error)
    assert "python/object" in str(error)
    assert error.line == line_of(text, "!!python")


def test_python_object_tag_is_refused(load: Load) -> None:
    text = cassette() + "x: !!python/object:collections.OrderedDict {}\n"
    error = errors_of(load, text)
    assert error.line == line_of(text, "!!python")


def test_invalid_yaml_syntax_reports_the_line(load: Load) -> None:
    text = cassette("""
        - name: broken
          match: {text: [unclosed
          reply: {message: hi}
    """)
    error = errors_of(load, text)
    assert "not valid YAML" in str(error)
    assert error.line is not None and error.line > line_of(text, "- name: broken")
    assert str(error).startswith(f"{error.path}:{error.line}: ")


@pytest.mark.parametrize("text", ["", "- just\n- a list\n", "just a string\n"])
def test_a_document_that_is_not_a_mapping_is_refused(load: Load, text: str) -> None:
    error = errors_of(load, text)
    assert "a cassette is a mapping" in str(error)
    assert error.line == 1


def test_a_recursive_alias_is_a_cassette_error(load: Load) -> None:
    text = (
        HEADER.replace("  name: tester", "  provider: &p {loop: *p}\n  name: tester")
        + "interactions: []\n"
    )
    with pytest.raises(CassetteError):
        load(text)


def test_an_alias_bomb_does_not_blow_up_the_line_map(load: Load) -> None:
    bomb = ["  provider:", "    l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 4):  # 10**4 leaves; each further level multiplies the work by 10
        bomb.append(f"    l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    text = (
        HEADER.replace("  name: tester", "\n".join(bomb) + "\n  name: tester")
        + "interactions: []\n"
    )
    loaded = load(text)
    assert len(loaded.lines) < 200  # one entry per node written in the file, not per expansion


# -- validation errors -------------------------------------------------------------------------


def test_a_wrong_state_names_file_line_interaction_and_field(load: Load, write_cassette) -> None:
    text = cassette("""
        - name: first
          reply: {message: hi}
        - name: run-tests
          reply:
            task:
              steps:
                - state: TASK_STATE_DONE
    """)
    path = write_cassette(text)
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    line = line_of(text, "TASK_STATE_DONE")
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ")
    assert "interaction 'run-tests' (#2): reply.task.steps[0].state: " in message
    assert "unknown task state 'TASK_STATE_DONE'" in message
    assert "TASK_STATE_COMPLETED" in message  # the fix: the states that exist
    assert info.value.path == str(path) and info.value.line == line


def test_an_unknown_key_is_named_with_the_key_it_likely_meant(load: Load) -> None:
    text = cassette("""
        - name: typo
          reply: {mesage: hi}
    """)
    error = errors_of(load, text)
    assert str(error).endswith(
        "interaction 'typo' (#1): reply.mesage: unknown field; did you mean 'message'?"
    )
    assert error.line == line_of(text, "mesage")


def test_an_unknown_key_comes_before_the_field_it_leaves_missing(load: Load) -> None:
    text = cassette("""
        - name: run
          reply:
            task:
              step:
                - state: TASK_STATE_WORKING
    """)
    error = errors_of(load, text)
    # not "reply.task.steps: Field required (and 1 more problem)": the typo is the one problem
    assert str(error) == (
        f"{error.path}:{line_of(text, 'step:')}: "
        "interaction 'run' (#1): reply.task.step: unknown field; did you mean 'steps'?"
    )


def test_an_unknown_key_like_no_known_one_lists_them(load: Load) -> None:
    text = cassette("""
        - name: odd
          reply: {message: hi}
          fault: {zzz: 1}
    """)
    assert (
        "fault.zzz: unknown field; use one of status, body, delayMs, dropAfter, closeAfter, "
        "errorAfter, error" in str(errors_of(load, text))
    )


def test_an_unknown_top_level_key_is_rejected(load: Load) -> None:
    text = cassette().replace("interactions: []", "interaction: []")
    error = errors_of(load, text)
    assert "interaction: unknown field; did you mean 'interactions'?" in str(error)
    assert error.line == line_of(text, "interaction: []")


def test_a_step_with_state_and_artifact_is_rejected(load: Load) -> None:
    text = cassette("""
        - name: both
          reply:
            task:
              steps:
                - state: TASK_STATE_WORKING
                  artifact: {artifactId: a, parts: [{text: x}]}
    """)
    error = errors_of(load, text)
    assert (
        "interaction 'both' (#1): reply.task.steps[0]: "
        "a step has one of `state`, `artifact` or `say`" in str(error)
    )
    assert error.line == line_of(text, "state: TASK_STATE_WORKING")


def test_a_step_with_neither_state_nor_artifact_is_rejected(load: Load) -> None:
    text = cassette("""
        - name: empty-step
          reply: {task: {steps: [{after: {polls: 1}}]}}
    """)
    assert "a step has one of `state`, `artifact` or `say`" in str(errors_of(load, text))


@pytest.mark.parametrize(
    ("step", "complaint"),
    [
        (
            "{artifact: {artifactId: a, parts: [{text: x}]}, message: hi}",
            "`message` belongs to a `state` step",
        ),
        ("{state: working, append: true}", "`append` and `lastChunk` belong to an `artifact` step"),
        ("{artifact: {parts: [{text: x}]}}", "an artifact needs an `artifactId`"),
        ("{artifact: {artifactId: a, parts: []}}", "an artifact needs a non-empty `parts` list"),
        (
            "{artifact: {artifactId: a, parts: [{text: x, data: {}}]}}",
            "parts[0]: a part has exactly one of",
        ),
        ("{state: working, message: {metadata: {}}}", "a message needs a non-empty `parts` list"),
        ("{state: working, after: {ms: -1}}", "greater than or equal to 0"),
    ],
)
def test_step_shape_errors(load: Load, step: str, complaint: str) -> None:
    text = cassette(f"""
        - name: bad
          reply: {{task: {{steps: [{step}]}}}}
    """)
    error = errors_of(load, text)
    assert "interaction 'bad' (#1): reply.task.steps[0]" in str(error)
    assert complaint in str(error)


def test_a_reply_with_two_kinds_is_rejected(load: Load) -> None:
    text = cassette("""
        - name: greedy
          reply:
            message: hi
            error: TaskNotFound
    """)
    error = errors_of(load, text)
    assert (
        "interaction 'greedy' (#1): reply: a reply has exactly one of `message`, `task`, `error`"
        in str(error)
    )
    assert error.line == line_of(text, "reply:")  # the field's own line: its key


def test_a_reply_with_no_kind_is_rejected(load: Load) -> None:
    text = cassette("""
        - name: mute
          reply: {}
    """)
    assert "a reply has exactly one of" in str(errors_of(load, text))


def test_duplicate_interaction_names_are_rejected(load: Load) -> None:
    text = cassette("""
        - name: twin
          reply: {message: a}
        - name: twin
          reply: {message: b}
    """)
    error = errors_of(load, text)
    assert "two interactions are named 'twin'" in str(error)


def test_times_must_be_positive(load: Load) -> None:
    text = cassette("""
        - name: never
          times: 0
          reply: {message: a}
    """)
    error = errors_of(load, text)
    assert "interaction 'never' (#1): times: " in str(error)
    assert error.line == line_of(text, "times: 0")


def test_an_unnamed_interaction_is_reported_by_number(load: Load) -> None:
    text = cassette("""
        - name: ok
          reply: {message: a}
        - reply: {message: b}
    """)
    error = errors_of(load, text)
    assert "interaction #2: name: Field required" in str(error)


def test_several_problems_are_each_reported(load: Load) -> None:
    text = cassette("""
        - name: bad
          times: 0
          reply: {mesage: hi}
    """)
    error = errors_of(load, text)
    assert str(error).splitlines() == [  # the unknown key first, then the file's order
        f"{error.path}:{line_of(text, 'mesage')}: interaction 'bad' (#1): reply.mesage: "
        "unknown field; did you mean 'message'?",
        f"{error.path}:{line_of(text, 'times')}: interaction 'bad' (#1): times: "
        "Input should be greater than or equal to 1",
    ]


def test_a_wrong_follow_up_state_is_rejected(load: Load) -> None:
    text = cassette("""
        - name: follow
          match: {task: {state: [TASK_STATE_INPUT_REQUIRED, TASK_STATE_WAITING]}}
          reply: {message: ok}
    """)
    error = errors_of(load, text)
    # the list's item, not "Input should be a valid string" (the union's other member)
    assert (
        "interaction 'follow' (#1): match.task.state[1]: unknown task state 'TASK_STATE_WAITING'"
        in str(error)
    )
    assert "more problem" not in str(error)


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("TASK_STATE_COMPLETE", "TASK_STATE_COMPLETED"),
        ("complete", "completed"),
        ("INPUT_REQUIRD", "INPUT_REQUIRED"),
    ],
)
def test_a_misspelt_state_gets_the_state_it_likely_meant(
    load: Load, written: str, meant: str
) -> None:
    text = cassette(f"""
        - name: run
          reply: {{task: {{steps: [{{state: {written}}}]}}}}
    """)
    assert (
        f"reply.task.steps[0].state: unknown task state {written!r}; did you mean {meant!r}?"
        in str(errors_of(load, text))
    )


@pytest.mark.parametrize(
    "written", ["Working", " working", "task_state_working", "TASK-STATE-WORKING"]
)
def test_a_state_is_one_of_the_listed_spellings(load: Load, written: str) -> None:
    # a fixed set, so the JSON Schema can list it (TaskState.parse, for the wire, takes these too)
    text = cassette(f"""
        - name: run
          reply: {{task: {{steps: [{{state: "{written}"}}]}}}}
    """)
    assert "unknown task state" in str(errors_of(load, text))
    assert TaskState.parse(written) is TaskState.WORKING


def test_a_wrongly_typed_union_field_is_named_as_written(load: Load) -> None:
    text = cassette("""
        - name: typed
          match: {operation: 5}
          reply: {message: hi}
    """)
    message = str(errors_of(load, text))
    assert "interaction 'typed' (#1): match.operation: " in message
    assert "more problem" not in message


def test_version_must_be_1(load: Load) -> None:
    error = errors_of(load, cassette().replace("version: 1", "version: 2"))
    assert "version: " in str(error) and error.line == 1


# -- errors found when the engine compiles the matchers ----------------------------------------


def test_an_unknown_predicate_keyword_is_refused_on_load(load: Load) -> None:
    text = cassette("""
        - name: ok
          reply: {message: a}
        - name: typo
          match:
            text: {startswith: a, endwith: b}
          reply: {message: b}
    """)
    error = errors_of(load, text)
    assert str(error).endswith(
        "interaction 'typo' (#2): match.text.endwith: unknown predicate; did you mean 'endswith'?"
    )
    assert error.line == line_of(text, "endwith")


def test_a_mapping_without_keywords_in_where_is_a_plain_value(load: Load) -> None:
    text = cassette("""
        - name: meta
          match: {where: {message.metadata: {startwith: a}}}
          reply: {message: b}
    """)
    assert load(text).cassette.interactions[0].match.where == {
        "message.metadata": {"startwith": "a"}
    }


def test_a_lone_misspelled_keyword_on_text_is_refused_on_load(load: Load) -> None:
    text = cassette("""
        - name: typo
          match: {text: {endwith: "?"}}
          reply: {message: b}
    """)
    assert (
        "interaction 'typo' (#1): match.text.endwith: unknown predicate; did you mean 'endswith'?"
        in str(errors_of(load, text))
    )


def test_a_bad_regex_is_refused_on_load(load: Load) -> None:
    text = cassette("""
        - name: rx
          match: {where: {message.messageId: {regex: "(unclosed"}}}
          reply: {message: a}
    """)
    error = errors_of(load, text)
    assert (
        "interaction 'rx' (#1): match.where.message.messageId.regex: bad regex '(unclosed'"
        in str(error)
    )
    assert error.line == line_of(text, "regex")


@pytest.mark.parametrize(
    ("spec", "complaint"),
    [
        ("{in: text/plain}", "`in` takes a list"),
        ('{exists: "maybe"}', "`exists` takes true or false"),
        ('{any: {regex: "["}}', "bad regex"),
    ],
)
def test_bad_predicate_arguments_are_refused_on_load(load: Load, spec: str, complaint: str) -> None:
    text = cassette(f"""
        - name: bad
          match: {{parts: {spec}}}
          reply: {{message: a}}
    """)
    error = errors_of(load, text)
    assert "interaction 'bad' (#1): match.parts." in str(error)
    assert complaint in str(error)


def test_an_unknown_error_name_is_refused_on_load(load: Load) -> None:
    text = cassette("""
        - name: ok
          reply: {message: a}
        - name: oops
          reply: {error: {name: TaskMissing, message: gone}}
    """)
    error = errors_of(load, text)
    assert "interaction 'oops' (#2): reply.error.name: unknown error 'TaskMissing'" in str(error)
    assert "TaskNotFound" in str(error)  # the names that exist
    assert error.line == line_of(text, "TaskMissing")


@pytest.mark.parametrize(
    ("interaction", "where", "meant"),
    [
        ("{name: oops, reply: {error: TaskNotFond}}", "reply.error", "TaskNotFound"),
        (
            "{name: oops, fault: {errorAfter: 1, error: InvalidAgentRespons}, reply: {message: a}}",
            "fault.error",
            "InvalidAgentResponse",
        ),
    ],
)
def test_a_misspelt_error_name_gets_the_name_it_likely_meant(
    load: Load, interaction: str, where: str, meant: str
) -> None:
    message = str(errors_of(load, cassette(f"- {interaction}")))
    assert f"interaction 'oops' (#1): {where}: unknown error " in message
    assert message.endswith(f"did you mean {meant!r}?")


def test_a_misspelt_operation_gets_the_operation_it_likely_meant(load: Load) -> None:
    text = cassette("""
        - name: op
          match: {operation: [GetTask, SendMesage]}
          reply: {message: a}
    """)
    assert (
        "interaction 'op' (#1): match.operation[1]: unknown operation 'SendMesage'; "
        "did you mean 'SendMessage'?"
    ) in str(errors_of(load, text))


def test_a_follow_up_from_no_interaction_is_refused_on_load(load: Load) -> None:
    text = cassette("""
        - name: review
          reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED}]}}
        - name: answer
          match: {task: {from: reveiw}}
          reply: {message: ok}
    """)
    error = errors_of(load, text)
    assert str(error).endswith(
        "interaction 'answer' (#2): match.task.from: names 'reveiw', which is no "
        "interaction of this cassette; did you mean 'review'?"
    )
    assert error.line == line_of(text, "reveiw")


# -- JSON Schema -------------------------------------------------------------------------------


def test_json_schema_is_valid_json_with_defs() -> None:
    schema = json.loads(json_schema())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "mockagent cassette, version 1"
    assert {"Interaction", "Step", "Match", "Reply", "TaskMatch"} <= set(schema["$defs"])
    assert "from" in schema["$defs"]["TaskMatch"]["properties"]  # written by its alias
    assert set(schema["required"]) == {
        "version"
    }  # `agent` (A2A) or `agents` (Agentex), by protocol
    assert {"agent", "agents", "protocol"} <= set(schema["properties"])
    assert schema["$defs"]["Step"]["additionalProperties"] is False
