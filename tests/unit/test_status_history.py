"""`agent.history`: how the replayed agent keeps its status messages in a task's history.

`statusMessage: when-replaced` (a2a-sdk's way, the default) puts a status message into the
history when the next status replaces it; `when-set` appends it as soon as it is set, the same
message (the same messageId) in the status and in the history. `afterAnswer: archived` (the
default) takes the status message out of the status when the user answers; `kept` leaves it
there until the next status step. `statusMessage: never` keeps only the user's messages and what
the agent said in the history: a replaced status message is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mockagent.cassette import TaskState
from mockagent.engine import Engine, TaskResult, TaskView
from mockagent.errors import CassetteError
from tests.helpers.cassette_text import HEADER
from tests.helpers.engine_calls import get_task, send, task_call, texts

MakeEngine = Callable[..., Engine]

INTERACTIONS = """
- name: review
  match: {text: {startswith: review}}
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
          message: Reading
        - state: TASK_STATE_INPUT_REQUIRED
          message: Which branch?
- name: branch
  match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: review}}
  reply:
    task:
      first: task-as-is
      steps:
        - state: TASK_STATE_WORKING
          message: Reviewing
          after: {polls: 1}
        - state: TASK_STATE_COMPLETED
          message: Done
"""


def header(status_message: str, after_answer: str) -> str:
    """HEADER with `agent.history` set."""
    history = f"  history:\n    statusMessage: {status_message}\n    afterAnswer: {after_answer}\n"
    return HEADER.replace("clock:", history + "clock:", 1)


def task_of(outcome: Any) -> TaskView:
    assert isinstance(outcome, TaskResult), outcome
    return outcome.task


def ids(messages: list[dict[str, Any]] | None) -> list[str]:
    return [m["messageId"] for m in messages or []]


def answered(engine: Engine) -> tuple[TaskView, TaskView, TaskView]:
    """The agent asks, the user answers (returnImmediately), a poll moves the task on, and the
    next one ends it: (the question, the answer's snapshot, the end)."""
    asked = task_of(send(engine, "review this"))
    answer = task_of(
        send(engine, "main", task_id=asked.id, configuration={"returnImmediately": True})
    )
    task_of(get_task(engine, asked.id))
    return asked, answer, task_of(get_task(engine, asked.id))


def test_when_set_a_status_message_is_in_history_once_with_its_own_id(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(INTERACTIONS, header=header("when-set", "archived"))
    asked = task_of(send(engine, "review this"))
    assert texts(asked.history) == ["review this", "Reading", "Which branch?"]
    assert asked.history is not None and asked.status_message is not None
    assert asked.history[-1]["messageId"] == asked.status_message["messageId"]
    assert asked.history[-1] == asked.status_message
    # a status step without a message clears the status: nothing is archived a second time
    cancelled = task_of(engine.handle(task_call("CancelTask", id=asked.id)))
    assert cancelled.status_message is None
    assert ids(cancelled.history) == ids(asked.history)


def test_when_set_and_archived_the_answer_clears_the_status_without_a_copy(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(INTERACTIONS, header=header("when-set", "archived"))
    asked, answer, done = answered(engine)
    assert answer.state is TaskState.INPUT_REQUIRED
    assert answer.status_message is None
    assert texts(answer.history) == ["review this", "Reading", "Which branch?", "main"]
    assert ids(answer.history)[:3] == ids(asked.history)
    assert texts(done.history) == [*texts(answer.history), "Reviewing", "Done"]
    assert done.history is not None and done.history[-1] == done.status_message


def test_when_set_and_kept_the_question_stays_the_status_after_the_answer(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(INTERACTIONS, header=header("when-set", "kept"))
    asked, answer, done = answered(engine)
    assert answer.status_message == asked.status_message  # the same message, the same id
    assert texts(answer.history) == ["review this", "Reading", "Which branch?", "main"]
    assert ids(answer.history)[:3] == ids(asked.history)
    assert texts(done.history) == [*texts(answer.history), "Reviewing", "Done"]


def test_when_replaced_and_kept_the_question_joins_history_when_replaced(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(INTERACTIONS, header=header("when-replaced", "kept"))
    asked, answer, done = answered(engine)
    assert texts(asked.history) == ["review this", "Reading"]
    assert answer.status_message == asked.status_message
    assert texts(answer.history) == ["review this", "Reading", "main"]
    assert texts(done.history) == ["review this", "Reading", "main", "Which branch?", "Reviewing"]
    assert done.history is not None and asked.status_message is not None
    assert done.history[3]["messageId"] == asked.status_message["messageId"]


def test_the_defaults_written_out_are_a2a_sdks_way(make_engine: MakeEngine) -> None:
    engine = make_engine(INTERACTIONS, header=header("when-replaced", "archived"))
    asked, answer, done = answered(engine)
    assert texts(asked.history) == ["review this", "Reading"]
    assert answer.status_message is None
    assert texts(answer.history) == ["review this", "Reading", "Which branch?", "main"]
    assert texts(done.history) == [*texts(answer.history), "Reviewing"]
    assert texts([done.status_message]) == ["Done"]


@pytest.mark.parametrize("way", [("when-set", "kept"), ("when-set", "archived")])
def test_a_replay_with_history_is_the_same_run_to_run(
    make_engine: MakeEngine, way: tuple[str, str]
) -> None:
    first, second = (make_engine(INTERACTIONS, header=header(*way)) for _ in range(2))
    assert answered(first) == answered(second)


def test_an_unknown_history_way_is_refused_naming_the_field(make_engine: MakeEngine) -> None:
    with pytest.raises(CassetteError, match="statusMessage"):
        make_engine(INTERACTIONS, header=header("always", "kept"))


@pytest.mark.parametrize("after_answer", ["archived", "kept"])
def test_never_a_replaced_status_message_is_gone_from_history(
    make_engine: MakeEngine, after_answer: str
) -> None:
    engine = make_engine(INTERACTIONS, header=header("never", after_answer))
    asked, answer, done = answered(engine)
    assert texts(asked.history) == ["review this"]
    assert texts([asked.status_message]) == ["Which branch?"]
    assert texts(answer.history) == ["review this", "main"]
    kept = after_answer == "kept"
    assert answer.status_message == (asked.status_message if kept else None)
    assert texts(done.history) == ["review this", "main"]
    assert texts([done.status_message]) == ["Done"]
