"""A returnImmediately follow-up whose script waits for polls first: the answer is the task as it
is, and GetTask moves it on (issue 17, problem 3). Hand-written scripts play as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockagent.cassette import TaskState
from mockagent.cassette.loader import LoadedCassette
from mockagent.engine import Engine, TaskResult, TaskView
from tests.helpers.cassette_text import cassette
from tests.helpers.engine_calls import get_task, send, send_call, texts

MakeEngine = Callable[..., Engine]
IMMEDIATELY = {"returnImmediately": True}

RECORDED = """
- name: ask
  match: {text: ask}
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
          message: Working on it
        - state: TASK_STATE_INPUT_REQUIRED
          message: Which branch?
- name: main
  match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: ask}}
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
          message: Checking out main
          after: {polls: 2}
        - state: TASK_STATE_COMPLETED
          after: {polls: 1}
"""


def task_of(outcome: Any) -> TaskView:
    assert isinstance(outcome, TaskResult), outcome
    return outcome.task


def test_a_follow_up_gated_by_polls_answers_with_the_task_as_it_is(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(RECORDED)
    asked = task_of(send(engine, "ask"))
    # polls before the follow-up do not count towards its gate
    assert task_of(get_task(engine, asked.id)).state is TaskState.INPUT_REQUIRED
    assert task_of(get_task(engine, asked.id)).state is TaskState.INPUT_REQUIRED
    answer = task_of(send(engine, "main", task_id=asked.id, configuration=IMMEDIATELY))
    assert answer.state is TaskState.INPUT_REQUIRED and answer.status_message is None
    assert texts(answer.history) == ["ask", "Working on it", "Which branch?", "main"]
    states = [task_of(get_task(engine, asked.id)).state for _ in range(3)]
    assert states == [TaskState.INPUT_REQUIRED, TaskState.WORKING, TaskState.COMPLETED]
    done = task_of(get_task(engine, asked.id))
    assert texts(done.history)[-2:] == ["main", "Checking out main"]
    # only such a follow-up: a new task, or a follow-up whose first step is not gated, shows
    # its first step at once, as before
    engine = make_engine("""
        - name: start
          match: {text: start}
          reply:
            task:
              steps:
                - state: TASK_STATE_WORKING
                  after: {polls: 1}
                - state: TASK_STATE_INPUT_REQUIRED
                  after: {polls: 1}
        - name: more
          match: {task: {from: start}}
          reply:
            task:
              steps:
                - state: TASK_STATE_WORKING
                - state: TASK_STATE_COMPLETED
                  after: {polls: 1}
    """)
    started = task_of(send(engine, "start", configuration=IMMEDIATELY))
    assert started.state is TaskState.WORKING  # a new task's first step shows, gated or not
    assert task_of(get_task(engine, started.id)).state is TaskState.INPUT_REQUIRED
    more = task_of(send(engine, "go", task_id=started.id, configuration=IMMEDIATELY))
    assert more.state is TaskState.WORKING
    assert task_of(get_task(engine, started.id)).state is TaskState.COMPLETED


def test_after_a_streamed_turn_the_follow_up_still_waits_for_polls(
    load: Callable[[str], LoadedCassette],
) -> None:
    engine = Engine(load(cassette(RECORDED)), pace="instant")
    try:
        stream = engine.stream(send_call("ask", operation="SendStreamingMessage"))
        assert [e.state.name for e in stream.events() if e is not None][-1] == "INPUT_REQUIRED"
        task_id = stream.first.task.id  # type: ignore[union-attr]
        answer = task_of(send(engine, "main", task_id=task_id, configuration=IMMEDIATELY))
        # the player plays the stream's task without polls gates; a polling client has them back
        states = [task_of(get_task(engine, task_id)).state for _ in range(3)]
        assert [answer.state, *states] == [
            TaskState.INPUT_REQUIRED,
            TaskState.INPUT_REQUIRED,
            TaskState.WORKING,
            TaskState.COMPLETED,
        ]
    finally:
        engine.close()
