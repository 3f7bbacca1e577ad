"""The replay engine, driven with dialect-neutral Calls: replies, task scripts, errors, journal."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from freezegun import freeze_time

from mockagent import errors
from mockagent.cassette import TaskState
from mockagent.engine import Call, Engine, MessageResult, TaskPage, TaskResult, TaskView
from mockagent.engine.ids import IdFactory
from tests.helpers.cassette_text import HEADER
from tests.helpers.engine_calls import get_task, send, send_call, task_call, texts

MakeEngine = Callable[..., Engine]

INTERACTIONS = """
- name: question
  match: {text: {endswith: "?"}}
  reply: {message: "Yes."}
- name: review
  match: {text: {startswith: review}}
  reply:
    task:
      metadata: {kind: review}
      steps:
        - state: TASK_STATE_SUBMITTED
        - state: TASK_STATE_WORKING
          message: Reading
        - state: TASK_STATE_INPUT_REQUIRED
          message: Which branch?
- name: branch
  match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: review}}
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
          message: Reviewing
        - artifact: {artifactId: review, name: review.md, parts: [{text: LGTM}]}
        - state: TASK_STATE_COMPLETED
          message: Done
- name: deploy
  match: {text: {startswith: deploy}}
  reply:
    task:
      steps:
        - state: TASK_STATE_AUTH_REQUIRED
          message: Approve first
- name: build
  match: {text: {startswith: build}}
  reply:
    task:
      steps:
        - state: TASK_STATE_SUBMITTED
        - state: TASK_STATE_WORKING
          after: {polls: 1}
        - artifact: {artifactId: log, parts: [{text: step 1}]}
          after: {polls: 2}
        - artifact: {artifactId: log, parts: [{text: step 2}]}
          append: true
        - state: TASK_STATE_COMPLETED
          after: {polls: 1}
- name: quick
  match: {text: quick}
  reply:
    task:
      steps:
        - state: TASK_STATE_SUBMITTED
        - state: TASK_STATE_WORKING
        - state: TASK_STATE_COMPLETED
          after: {polls: 1}
- name: slow
  match: {text: slow}
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
        - state: TASK_STATE_COMPLETED
          after: {ms: 1000}
- name: chunks
  match: {text: chunks}
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
        - artifact: {artifactId: a, name: first, parts: [{text: one}]}
        - artifact: {artifactId: a, parts: [{text: two}]}
          append: true
          after: {polls: 1}
        - artifact: {artifactId: b, parts: [{text: x}]}
        - artifact: {artifactId: b, name: second, parts: [{text: y}]}
        - artifact: {artifactId: c, parts: [{text: z}]}
          append: true
        - state: TASK_STATE_COMPLETED
- name: once
  match: {text: once}
  times: 1
  reply: {message: only once}
- name: missing
  match: {text: missing}
  reply: {error: {name: TaskNotFound, message: no such thing}}
- name: refused
  match: {text: refused}
  reply: {error: ContentTypeNotSupported}
- name: boom
  match: {operation: GetTask, where: {id: boom}}
  reply: {error: UnsupportedOperation}
- name: odd
  match: {operation: CancelTask, where: {id: odd}}
  reply: {message: not for cancel}
"""

IMMEDIATELY = {"returnImmediately": True}


@pytest.fixture
def engine(make_engine: MakeEngine) -> Engine:
    return make_engine(INTERACTIONS)


def task_of(outcome: Any) -> TaskView:
    assert isinstance(outcome, TaskResult), outcome
    return outcome.task


def expected_ids(n: int, seed: str = "unit") -> list[str]:
    factory = IdFactory(seed)
    return [factory.new() for _ in range(n)]


def parts_text(artifact: dict[str, Any]) -> list[str]:
    return [p["text"] for p in artifact["parts"]]


# -- direct replies ----------------------------------------------------------------------------


def test_a_direct_reply_is_a_message_in_a_new_context(engine: Engine) -> None:
    out = send(engine, "Which languages?")
    context_id, message_id = expected_ids(2)
    assert isinstance(out, MessageResult)
    assert out.message == {
        "messageId": message_id,
        "role": "agent",
        "parts": [{"text": "Yes."}],
        "contextId": context_id,
    }
    assert len(engine.tasks) == 0  # no task to poll


def test_a_direct_reply_keeps_the_callers_context(engine: Engine) -> None:
    out = send(engine, "Which languages?", context_id="ctx-1")
    assert out.message["contextId"] == "ctx-1"
    assert out.message["messageId"] == expected_ids(1)[0]  # no id spent on a context
    assert "taskId" not in out.message


def test_a_message_with_metadata_is_replied_with_it(make_engine: MakeEngine) -> None:
    engine = make_engine("""
        - name: meta
          reply: {message: {parts: [{text: hi}, {data: {k: 1}}], metadata: {source: mock}}}
    """)
    message = send(engine, "x").message
    assert message["parts"] == [{"text": "hi"}, {"data": {"k": 1}}]
    assert message["metadata"] == {"source": "mock"}


# -- task creation and scripts -----------------------------------------------------------------


def test_a_task_reply_creates_a_task(engine: Engine) -> None:
    call = send_call("review this", message_id="m-7")
    task = task_of(engine.handle(call))
    context_id, task_id, reading_id, branch_id = expected_ids(4)
    assert (task.id, task.context_id) == (task_id, context_id)
    assert task.state is TaskState.INPUT_REQUIRED  # blocking: runs to the interruption
    assert task.metadata == {"kind": "review"}
    user, reading = task.history
    assert user == {
        "messageId": "m-7",
        "role": "user",
        "parts": [{"text": "review this"}],
        "taskId": task_id,
        "contextId": context_id,
    }
    assert reading == {
        "messageId": reading_id,
        "role": "agent",
        "parts": [{"text": "Reading"}],
        "contextId": context_id,
        "taskId": task_id,
    }  # a superseded status message
    assert task.status_message["messageId"] == branch_id
    assert texts([task.status_message]) == ["Which branch?"]
    assert task.timestamp == "2026-10-06T09:00:00.500Z"  # three stamps, 250 ms apart
    assert "taskId" not in call.params["message"]  # the caller's message is not touched


def test_a_task_keeps_the_callers_context(engine: Engine) -> None:
    task = task_of(send(engine, "review this", context_id="ctx-9"))
    assert task.context_id == "ctx-9"
    assert task.id == expected_ids(1)[0]


def test_blocking_runs_through_gates_to_a_terminal_state(engine: Engine) -> None:
    task = task_of(send(engine, "build it"))
    assert task.state is TaskState.COMPLETED
    [log] = task.artifacts
    assert parts_text(log) == ["step 1", "step 2"]


def test_return_immediately_returns_the_first_step(engine: Engine) -> None:
    task = task_of(send(engine, "build it", configuration=IMMEDIATELY))
    assert task.state is TaskState.SUBMITTED
    assert task.artifacts is None
    assert len(engine.tasks.get(task.id).script) == 4  # the rest waits for polls


def test_return_immediately_also_shows_the_ungated_steps_after_the_first(engine: Engine) -> None:
    task = task_of(send(engine, "quick", configuration=IMMEDIATELY))
    assert task.state is TaskState.WORKING
    assert task_of(get_task(engine, task.id)).state is TaskState.COMPLETED


def test_get_task_polls_advance_polls_gated_steps(engine: Engine) -> None:
    task_id = task_of(send(engine, "build it", configuration=IMMEDIATELY)).id

    def poll() -> TaskView:
        return task_of(get_task(engine, task_id))

    first = poll()
    assert first.state is TaskState.WORKING and first.artifacts is None  # polls: 1
    second = poll()
    assert second.state is TaskState.WORKING and second.artifacts is None  # 1 of 2 polls
    third = poll()
    assert third.state is TaskState.WORKING  # polls: 2, and the ungated append right after it
    assert parts_text(third.artifacts[0]) == ["step 1", "step 2"]
    assert poll().state is TaskState.COMPLETED
    assert poll().state is TaskState.COMPLETED  # nothing left to show


def test_ms_steps_follow_the_monotonic_clock(make_engine: MakeEngine) -> None:
    with freeze_time("2030-01-01 12:00:00") as frozen:
        engine = make_engine(INTERACTIONS)  # the clock reads time.monotonic when it is made
        task_id = task_of(send(engine, "slow", configuration=IMMEDIATELY)).id
        assert task_of(get_task(engine, task_id)).state is TaskState.WORKING
        frozen.tick(timedelta(milliseconds=999))
        assert task_of(get_task(engine, task_id)).state is TaskState.WORKING
        frozen.tick(timedelta(milliseconds=1))
        done = task_of(get_task(engine, task_id))
    assert done.state is TaskState.COMPLETED
    # timestamps are virtual: cassette start + one tick + the scripted 1000 ms gap
    assert done.timestamp == "2026-10-06T09:00:01.250Z"


def test_clock_advance_makes_ms_steps_due(make_engine: MakeEngine) -> None:
    with freeze_time("2030-01-01 12:00:00"):
        engine = make_engine(INTERACTIONS)
        task_id = task_of(send(engine, "slow", configuration=IMMEDIATELY)).id
        engine.clock.advance(999)
        assert task_of(get_task(engine, task_id)).state is TaskState.WORKING
        engine.clock.advance(1)
        assert task_of(get_task(engine, task_id)).state is TaskState.COMPLETED


def test_a_gap_waited_with_advance_is_stamped_once(make_engine: MakeEngine) -> None:
    stamps = []
    for use_advance in (False, True):
        with freeze_time("2030-01-01 12:00:00") as frozen:
            engine = make_engine(INTERACTIONS)
            task_id = task_of(send(engine, "slow", configuration=IMMEDIATELY)).id
            if use_advance:
                engine.clock.advance(1000)
            else:
                frozen.tick(timedelta(milliseconds=1000))
            stamps.append(task_of(get_task(engine, task_id)).timestamp)
    assert stamps[0] == "2026-10-06T09:00:01.250Z"  # the scripted 1000 ms gap, once
    assert stamps[1] == stamps[0]


def test_blocking_shows_ms_gaps_in_timestamps_without_waiting(engine: Engine) -> None:
    task = task_of(send(engine, "slow"))
    assert task.state is TaskState.COMPLETED
    assert task.timestamp == "2026-10-06T09:00:01.250Z"


def test_artifacts_append_and_replace(engine: Engine) -> None:
    task = task_of(send(engine, "chunks"))
    a, b, c = task.artifacts
    assert (a["artifactId"], a["name"], parts_text(a)) == ("a", "first", ["one", "two"])  # appended
    assert (b["name"], parts_text(b)) == ("second", ["y"])  # same id without append: replaced
    assert (c["artifactId"], parts_text(c)) == ("c", ["z"])  # append to nothing: a new artifact


def test_a_returned_snapshot_does_not_change_later(engine: Engine) -> None:
    first = task_of(send(engine, "chunks", configuration=IMMEDIATELY))
    assert parts_text(first.artifacts[0]) == ["one"]
    task_of(get_task(engine, first.id))  # appends "two" to artifact a
    assert parts_text(first.artifacts[0]) == ["one"]


def test_superseded_status_messages_move_into_history(engine: Engine) -> None:
    task = task_of(send(engine, "review this"))
    assert texts(task.history) == ["review this", "Reading"]
    assert texts([task.status_message]) == ["Which branch?"]
    # a state step without a message clears the status message
    final = task_of(engine.handle(task_call("CancelTask", id=task.id)))
    assert final.status_message is None
    assert texts(final.history) == ["review this", "Reading", "Which branch?"]


# -- historyLength -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "history"),
    [
        (None, ["review this", "Reading"]),
        (0, []),
        (1, ["Reading"]),
        (5, ["review this", "Reading"]),
    ],
)
def test_history_length_on_send_and_get(
    engine: Engine, length: int | None, history: list[str]
) -> None:
    config = {} if length is None else {"historyLength": length}
    task = task_of(send(engine, "review this", configuration=config))
    assert texts(task.history) == history
    if length == 0:
        assert task.history is None  # omitted, not []
    params = {} if length is None else {"historyLength": length}
    assert texts(task_of(get_task(engine, task.id, **params)).history) == history


@pytest.mark.parametrize("bad", [-1, "2", 1.5, True])
def test_a_bad_history_length_is_invalid_params(engine: Engine, bad: Any) -> None:
    with pytest.raises(errors.InvalidParams, match="historyLength"):
        send(engine, "review this", configuration={"historyLength": bad})
    task_id = task_of(send(engine, "review this")).id
    with pytest.raises(errors.InvalidParams, match="historyLength"):
        get_task(engine, task_id, historyLength=bad)
    with pytest.raises(errors.InvalidParams, match="historyLength"):
        engine.handle(task_call("ListTasks", historyLength=bad))


# -- protocol errors on tasks ------------------------------------------------------------------


def test_get_task_of_an_unknown_task_is_task_not_found(engine: Engine) -> None:
    with pytest.raises(errors.TaskNotFound) as info:
        get_task(engine, "nope")
    assert info.value.metadata == {"taskId": "nope"}


def test_a_message_to_an_unknown_task_is_task_not_found(engine: Engine) -> None:
    with pytest.raises(errors.TaskNotFound):
        send(engine, "main", task_id="nope")


def test_a_message_to_a_terminal_task_is_unsupported(engine: Engine) -> None:
    task = task_of(send(engine, "build it"))
    assert task.state.terminal
    with pytest.raises(errors.UnsupportedOperation, match="terminal state COMPLETED") as info:
        send(engine, "build again", task_id=task.id)
    assert info.value.metadata == {"taskId": task.id}


def test_a_task_id_with_another_context_is_invalid_params(engine: Engine) -> None:
    task = task_of(send(engine, "review this"))
    with pytest.raises(errors.InvalidParams, match="contextId"):
        send(engine, "main", task_id=task.id, context_id="other-context")
    assert engine.tasks.get(task.id).state is TaskState.INPUT_REQUIRED  # untouched


# -- follow-ups --------------------------------------------------------------------------------


def test_a_follow_up_continues_the_same_task(engine: Engine) -> None:
    first = task_of(send(engine, "review this"))
    # only taskId: the task's context is inherited
    done = task_of(send(engine, "main", task_id=first.id, message_id="m-2"))
    assert (done.id, done.context_id) == (first.id, first.context_id)
    assert done.state is TaskState.COMPLETED
    assert texts([done.status_message]) == ["Done"]
    [review] = done.artifacts
    assert review["name"] == "review.md" and parts_text(review) == ["LGTM"]
    users = [m for m in done.history if m["role"] == "user"]
    assert texts(users) == ["review this", "main"]
    assert users[1]["taskId"] == first.id and users[1]["contextId"] == first.context_id
    assert len(engine.tasks) == 1
    assert [e.interaction for e in engine.journal.entries] == ["review", "branch"]


def test_a_follow_up_with_the_right_context_is_accepted(engine: Engine) -> None:
    first = task_of(send(engine, "review this"))
    done = task_of(send(engine, "main", task_id=first.id, context_id=first.context_id))
    assert done.state is TaskState.COMPLETED


def test_history_of_a_follow_up_is_chronological(engine: Engine) -> None:
    first = task_of(send(engine, "review this"))
    done = task_of(send(engine, "main", task_id=first.id))
    # the agent asked "Which branch?" before the user answered "main" (as a2a-sdk's TaskManager)
    assert texts(done.history) == ["review this", "Reading", "Which branch?", "main", "Reviewing"]
    assert texts([done.status_message]) == ["Done"]


def test_a_follow_up_answered_directly_stays_in_the_task(make_engine: MakeEngine) -> None:
    engine = make_engine("""
        - name: ask
          match: {text: review this}
          reply:
            task:
              steps:
                - state: TASK_STATE_WORKING
                  message: Reading
                - state: TASK_STATE_INPUT_REQUIRED
                  message: Which branch?
        - name: clarify
          match: {task: {from: ask}}
          reply: {message: "Which one, main or dev?"}
    """)
    first = task_of(send(engine, "review this"))
    answer = send(engine, "a branch", task_id=first.id)
    assert isinstance(answer, MessageResult)
    assert (answer.message["taskId"], answer.message["contextId"]) == (first.id, first.context_id)
    task = task_of(get_task(engine, first.id))
    assert task.state is TaskState.INPUT_REQUIRED
    assert texts(task.history) == [
        "review this",
        "Reading",
        "Which branch?",
        "a branch",
        "Which one, main or dev?",
    ]


def test_a_follow_up_on_the_wrong_task_matches_nothing(engine: Engine) -> None:
    deploy = task_of(send(engine, "deploy 1.2"))
    assert deploy.state is TaskState.AUTH_REQUIRED
    with pytest.raises(errors.NoMatch) as info:
        send(engine, "main", task_id=deploy.id)
    branch = next(c for c in info.value.report.candidates if c.name == "branch")
    assert [(m.path, m.expected, m.actual) for m in branch.mismatches] == [
        ("task.state", "equals INPUT_REQUIRED", "AUTH_REQUIRED"),
        ("task.from", 'equals "review"', "deploy"),
    ]


def test_a_follow_up_interaction_needs_a_task(engine: Engine) -> None:
    with pytest.raises(errors.NoMatch) as info:
        send(engine, "main")
    branch = next(c for c in info.value.report.candidates if c.name == "branch")
    assert [m.path for m in branch.mismatches] == ["message.taskId"]


# -- CancelTask --------------------------------------------------------------------------------


def test_cancel_drops_the_rest_of_the_script(engine: Engine) -> None:
    task_id = task_of(send(engine, "build it", configuration=IMMEDIATELY)).id
    canceled = task_of(engine.handle(task_call("CancelTask", id=task_id)))
    assert canceled.id == task_id
    assert canceled.state is TaskState.CANCELED
    for _ in range(5):
        polled = task_of(get_task(engine, task_id))
        assert polled.state is TaskState.CANCELED and polled.artifacts is None


def test_cancel_of_an_interrupted_task(engine: Engine) -> None:
    task_id = task_of(send(engine, "review this")).id
    assert task_of(engine.handle(task_call("CancelTask", id=task_id))).state is TaskState.CANCELED


def test_cancel_of_a_terminal_task_is_not_cancelable(engine: Engine) -> None:
    task_id = task_of(send(engine, "build it")).id
    with pytest.raises(errors.TaskNotCancelable) as info:
        engine.handle(task_call("CancelTask", id=task_id))
    assert info.value.metadata == {"taskId": task_id}
    assert engine.tasks.get(task_id).state is TaskState.COMPLETED


def test_cancel_of_an_unknown_task_is_not_found(engine: Engine) -> None:
    with pytest.raises(errors.TaskNotFound):
        engine.handle(task_call("CancelTask", id="nope"))


# -- ListTasks ---------------------------------------------------------------------------------


@pytest.fixture
def three(engine: Engine) -> list[str]:
    """Task ids, oldest first: review (new context, INPUT_REQUIRED), quick and build (ctx-a,
    COMPLETED)."""
    review = task_of(send(engine, "review this")).id
    quick = task_of(send(engine, "quick", context_id="ctx-a")).id
    build = task_of(send(engine, "build it", context_id="ctx-a")).id
    return [review, quick, build]


def list_tasks(engine: Engine, **params: Any) -> TaskPage:
    page = engine.handle(task_call("ListTasks", **params))
    assert isinstance(page, TaskPage)
    return page


def ids_of(page: TaskPage) -> list[str]:
    return [t.id for t in page.tasks]


def test_list_tasks_newest_status_first(engine: Engine, three: list[str]) -> None:
    review, quick, build = three
    page = list_tasks(engine)
    assert ids_of(page) == [build, quick, review]
    assert (page.next_page_token, page.page_size, page.total_size) == ("", 50, 3)
    engine.handle(task_call("CancelTask", id=review))  # a newer status moves it to the top
    assert ids_of(list_tasks(engine)) == [review, build, quick]


def test_list_tasks_filters(engine: Engine, three: list[str]) -> None:
    review, quick, build = three
    assert ids_of(list_tasks(engine, contextId="ctx-a")) == [build, quick]
    assert ids_of(list_tasks(engine, status="TASK_STATE_COMPLETED")) == [build, quick]
    assert ids_of(list_tasks(engine, status="TASK_STATE_INPUT_REQUIRED")) == [review]
    assert ids_of(list_tasks(engine, contextId="ctx-a", status="TASK_STATE_INPUT_REQUIRED")) == []
    assert list_tasks(engine, contextId="ctx-none").total_size == 0
    after = engine.tasks.get(quick).timestamp
    assert ids_of(list_tasks(engine, statusTimestampAfter=after)) == [build, quick]  # inclusive


@pytest.mark.parametrize(
    "params", [{"status": "TASK_STATE_DONE"}, {"statusTimestampAfter": "yesterday"}]
)
def test_list_tasks_bad_filters_are_invalid_params(engine: Engine, params: dict[str, Any]) -> None:
    with pytest.raises(errors.InvalidParams):
        list_tasks(engine, **params)


def test_list_tasks_pages(engine: Engine, three: list[str]) -> None:
    review, quick, build = three
    first = list_tasks(engine, pageSize=2)
    assert ids_of(first) == [build, quick]
    assert first.next_page_token != "" and (first.page_size, first.total_size) == (2, 3)
    last = list_tasks(engine, pageSize=2, pageToken=first.next_page_token)
    assert ids_of(last) == [review]
    assert last.next_page_token == "" and last.total_size == 3
    exact = list_tasks(engine, pageSize=3)
    assert exact.next_page_token == ""  # no empty page after a full last page


@pytest.mark.parametrize("after", ["2026-10-06T09:00:00", "2026-10-06"])
def test_list_tasks_timestamp_without_offset_is_not_a_crash(
    engine: Engine, three: list[str], after: str
) -> None:
    try:
        page = list_tasks(engine, statusTimestampAfter=after)
    except errors.InvalidParams:
        return  # refusing it (RFC 3339 needs an offset) is fine
    assert page.total_size == 3  # so is reading it as UTC


@pytest.mark.parametrize(
    "token", ["garbage", "!!!!", "b2Zmc2V0Ong", "b2Zmc2V0Ojk5"]
)  # offset:x, offset:99
def test_list_tasks_bad_page_token_is_invalid_params(
    engine: Engine, three: list[str], token: str
) -> None:
    with pytest.raises(errors.InvalidParams, match="pageToken"):
        list_tasks(engine, pageToken=token)


@pytest.mark.parametrize("size", [-1, 101, "ten", 2.5, True])
def test_list_tasks_bad_page_size_is_invalid_params(engine: Engine, size: Any) -> None:
    with pytest.raises(errors.InvalidParams, match="pageSize"):
        list_tasks(engine, pageSize=size)


@pytest.mark.parametrize("size", [1, 100])
def test_list_tasks_page_size_bounds_are_valid(engine: Engine, three: list[str], size: int) -> None:
    assert len(list_tasks(engine, pageSize=size).tasks) == min(size, 3)


def test_list_tasks_page_size_zero_is_invalid_params(engine: Engine) -> None:
    with pytest.raises(errors.InvalidParams):
        list_tasks(engine, pageSize=0)


def test_list_tasks_omits_artifacts_unless_asked(engine: Engine, three: list[str]) -> None:
    build = three[2]
    by_id = {t.id: t for t in list_tasks(engine).tasks}
    assert by_id[build].artifacts is None
    by_id = {t.id: t for t in list_tasks(engine, includeArtifacts=True).tasks}
    assert parts_text(by_id[build].artifacts[0]) == ["step 1", "step 2"]


def test_list_tasks_history_length(engine: Engine, three: list[str]) -> None:
    assert all(t.history is None for t in list_tasks(engine, historyLength=0).tasks)
    assert all(len(t.history) == 1 for t in list_tasks(engine, historyLength=1).tasks)


# -- matching, times, errors, journal ----------------------------------------------------------


def test_times_limits_use_and_the_next_call_is_told_why(engine: Engine) -> None:
    assert send(engine, "once").message["parts"] == [{"text": "only once"}]
    with pytest.raises(errors.NoMatch) as info:
        send(engine, "once")
    report = info.value.report
    best = report.closest[0]
    assert (best.name, best.used_up, best.uses) == ("once", True, 1)
    assert "Interaction 'once' matches but was already used 1 time" in report.hint()
    assert "already used up (1 of 1 uses)" in str(info.value)


def test_a_rejected_call_does_not_use_up_an_interaction(engine: Engine) -> None:
    with pytest.raises(errors.InvalidParams):
        send(engine, "once", configuration={"historyLength": -1})
    assert isinstance(send(engine, "once"), MessageResult)


def test_error_replies_raise_the_named_protocol_error(engine: Engine) -> None:
    with pytest.raises(errors.TaskNotFound) as info:
        send(engine, "missing")
    assert info.value.message == "no such thing"
    with pytest.raises(errors.ContentTypeNotSupported) as info2:
        send(engine, "refused")
    assert info2.value.message == "Incompatible content types"  # the kind's default
    entry = engine.journal.entries[-1]
    assert (entry.interaction, entry.error, entry.matched) == (
        "refused",
        "ContentTypeNotSupported",
        True,
    )


def test_an_interaction_can_answer_a_task_operation_with_an_error(engine: Engine) -> None:
    with pytest.raises(errors.UnsupportedOperation):
        get_task(engine, "boom")
    with pytest.raises(errors.TaskNotFound):
        get_task(engine, "other")  # no interaction matches: the built-in GetTask answers


def test_a_task_operation_cannot_be_answered_with_a_message(engine: Engine) -> None:
    with pytest.raises(errors.InternalError, match="only `error` replies"):
        engine.handle(task_call("CancelTask", id="odd"))


def test_an_operation_the_engine_does_not_handle_is_unsupported(engine: Engine) -> None:
    with pytest.raises(errors.UnsupportedOperation, match="SubscribeToTask"):
        engine.handle(task_call("SubscribeToTask", id="x"))


def test_an_unmatched_message_raises_no_match_with_a_report(engine: Engine) -> None:
    with pytest.raises(errors.NoMatch) as info:
        send(engine, "Please reviews")
    exc = info.value
    report = exc.report
    assert report.cassette == engine.loaded.path
    assert report.operation == "SendMessage"
    assert report.closest[0].name == "question"  # one mismatch; operation mismatches sink
    assert str(exc) == report.text()
    assert f"No interaction in {engine.loaded.path} matches this SendMessage call" in str(exc)
    assert 'message.parts[0].text: endswith "?" ≠ "Please reviews"' in str(exc)
    assert exc.metadata == {"cassette": engine.loaded.path, "operation": "SendMessage"}
    assert exc.details == [report.as_detail()]
    assert report.closest[0].line == engine.loaded.line_of(("interactions", 0))
    entry = engine.journal.entries[-1]
    assert (entry.matched, entry.error, entry.interaction) == (False, "NoMatch", None)
    # the journal keeps what the report shows: the closest interactions, not every one
    assert entry.report is not None and entry.report.as_detail() == report.as_detail()
    assert entry.report.candidates == report.closest
    assert engine.journal.unmatched() == [entry]


def test_streaming_messages_match_like_send_message(engine: Engine) -> None:
    out = engine.handle(send_call("Which languages?", operation="SendStreamingMessage"))
    assert isinstance(out, MessageResult)
    with pytest.raises(errors.NoMatch):
        engine.handle(send_call("hmm", operation="SendStreamingMessage"))


def test_the_first_matching_interaction_wins(make_engine: MakeEngine) -> None:
    engine = make_engine("""
        - name: specific
          match: {text: {startswith: "a"}}
          reply: {message: specific}
        - name: catch-all
          reply: {message: general}
    """)
    assert texts([send(engine, "abc").message]) == ["specific"]
    assert texts([send(engine, "xyz").message]) == ["general"]


def test_the_journal_records_every_call(engine: Engine) -> None:
    task_id = task_of(send(engine, "review this")).id
    get_task(engine, task_id)
    with pytest.raises(errors.TaskNotFound):
        get_task(engine, "nope")
    entries = engine.journal.entries
    assert [(e.seq, e.operation, e.interaction, e.error, e.matched) for e in entries] == [
        (1, "SendMessage", "review", None, True),
        (2, "GetTask", None, None, True),
        (3, "GetTask", None, "TaskNotFound", True),
    ]
    assert entries[1].params == {"id": task_id} and entries[1].binding == "JSONRPC"
    assert engine.journal.unmatched() == []


def test_calls_a_dialect_settles_alone_are_journaled(engine: Engine) -> None:
    engine.record(task_call("GetExtendedAgentCard"))
    engine.record(send_call("x"), errors.VersionNotSupported())
    assert [(e.operation, e.interaction, e.error, e.matched) for e in engine.journal.entries] == [
        ("GetExtendedAgentCard", None, None, True),
        ("SendMessage", None, "VersionNotSupported", True),
    ]


def test_call_summary() -> None:
    call = send_call(
        parts=[{"text": "Please review"}, {"raw": "AA==", "mediaType": "text/x-diff"}],
        task_id="t-1",
    )
    assert (
        call.summary()
        == "SendMessage over JSONRPC, text 'Please review', 2 parts (text/x-diff), task t-1"
    )
    assert task_call("GetTask", id="t-2").summary() == "GetTask over JSONRPC, task t-2"
    assert send_call(parts=[{"data": {}}]).summary() == "SendMessage over JSONRPC, no text, 1 part"


# -- determinism, reset, clock -----------------------------------------------------------------


def script(engine: Engine) -> list[Any]:
    """A fixed conversation; returns every outcome (or the error kind)."""
    out: list[Any] = []

    def run(call: Call) -> None:
        try:
            out.append(engine.handle(call))
        except errors.ProtocolError as exc:
            out.append(exc.kind)

    run(send_call("Which languages?"))
    run(send_call("review this"))
    review = out[-1].task.id
    run(send_call("build it", configuration=IMMEDIATELY))
    build = out[-1].task.id
    run(task_call("GetTask", id=build))
    run(send_call("main", task_id=review))
    run(send_call("once"))
    run(send_call("once"))
    run(task_call("CancelTask", id=build))
    run(task_call("ListTasks", includeArtifacts=True))
    return out


def test_two_engines_from_one_cassette_give_equal_outcomes(make_engine: MakeEngine) -> None:
    first, second = script(make_engine(INTERACTIONS)), script(make_engine(INTERACTIONS))
    assert first == second
    assert first[6] == "NoMatch"


def test_timestamps_come_from_clock_start_and_tick(make_engine: MakeEngine) -> None:
    engine = make_engine(INTERACTIONS)
    review = task_of(send(engine, "review this"))  # stamps .000 .250 .500
    assert review.timestamp == "2026-10-06T09:00:00.500Z"
    quick = task_of(send(engine, "quick", configuration=IMMEDIATELY))  # .750 and 1.000
    assert quick.timestamp == "2026-10-06T09:00:01.000Z"
    tick100 = make_engine(INTERACTIONS, header=HEADER.replace("{ms: 250}", "{ms: 100}"))
    assert task_of(send(tick100, "review this")).timestamp == "2026-10-06T09:00:00.200Z"


def test_reset_restarts_ids_clock_tasks_uses_and_journal(engine: Engine) -> None:
    before = script(engine)
    assert len(engine.tasks) == 2 and engine.journal.entries
    engine.reset()
    assert len(engine.tasks) == 0 and engine.journal.entries == []
    assert engine.uses == [0] * len(engine.interactions)
    assert script(engine) == before


def test_without_clock_start_the_clock_starts_now(make_engine: MakeEngine) -> None:
    header = HEADER.replace("clock:\n  start: 2026-10-06T09:00:00Z\n  tick: {ms: 250}\n", "")
    assert "clock" not in header
    with freeze_time("2031-02-03 04:05:06.789"):
        engine = make_engine(INTERACTIONS, header=header)
        task = task_of(send(engine, "review this"))
    assert task.timestamp == "2031-02-03T04:05:07.289Z"  # now + two ticks


def test_ids_default_to_the_agent_name_as_seed(make_engine: MakeEngine) -> None:
    header = HEADER.replace("ids:\n  seed: unit\n", "")
    engine = make_engine(INTERACTIONS, header=header)
    assert (
        send(engine, "Which languages?").message["contextId"] == expected_ids(1, seed="tester")[0]
    )
