"""Pacing of played tasks, measured on an injected clock: no wall-clock assertions."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest

from mockagent import errors
from mockagent.engine import Engine, TaskResult
from mockagent.engine.clock import Clock
from mockagent.engine.player import Pace
from tests.helpers.cassette_text import cassette
from tests.helpers.engine_calls import send_call, task_call

SCRIPT = """
- name: paced
  reply:
    task:
      steps:
        - state: TASK_STATE_SUBMITTED
        - state: TASK_STATE_WORKING
          after: {ms: 50}
        - artifact: {artifactId: a, parts: [{text: x}]}
          after: {ms: 120, polls: 3}
        - state: TASK_STATE_COMPLETED
          after: {ms: 30}
"""


class SteppedClock(Clock):
    """Virtual elapsed time that only waiting moves: deadlines are met exactly, and at once."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.now_ms = 0.0

    def elapsed_ms(self) -> float:
        return self.now_ms

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        if timeout is None:
            condition.wait(0.05)  # nothing to play: let the other threads run
        else:
            self.now_ms += timeout * 1000


def played_gaps(load: Any, pace: Pace | str | None = None, cap: float | None = None) -> list[float]:
    """Stream the script and return the gaps between its events on the engine's clock."""
    engine = Engine(load(cassette(SCRIPT)), pace=pace, pace_cap_ms=cap, clock_factory=SteppedClock)
    try:
        stream = engine.stream(send_call("go", operation="SendStreamingMessage"))
        assert isinstance(stream.first, TaskResult)
        events = [e for e in stream.events() if e is not None]
    finally:
        engine.close()
    times = [stream.task.events[0].at_ms] + [e.at_ms for e in events]  # type: ignore[union-attr]
    return [round(b - a, 6) for a, b in itertools.pairwise(times)]


def test_recorded_pace_replays_the_scripted_gaps_exactly(load):
    assert played_gaps(load, "recorded") == [50, 120, 30]  # polls gates do not hold a played task


def test_scaled_capped_and_instant_pace(load):
    assert played_gaps(load, "scale=0.5") == [25, 60, 15]
    assert played_gaps(load, "recorded", cap=60) == [50, 60, 30]
    assert played_gaps(load, "instant") == [0, 0, 0]


def test_the_cassette_sets_the_pace_unless_overridden(load):
    header = (
        cassette("")
        .split("interactions:")[0]
        .replace("  tick: {ms: 250}", "  tick: {ms: 250}\n  pace: scale=2")
    )
    engine = Engine(load(header + "interactions: []\n"))
    assert engine.pace == Pace(2.0)
    assert Engine(load(header + "interactions: []\n"), pace="instant").pace == Pace(0.0)
    assert Engine(load(header + "interactions: []\n"), pace_cap_ms=10).pace == Pace(2.0, 10)


@pytest.mark.parametrize(
    "text, pace", [("recorded", Pace(1.0)), ("instant", Pace(0.0)), ("scale=0.25", Pace(0.25))]
)
def test_pace_parse(text, pace):
    assert Pace.parse(text) == pace


@pytest.mark.parametrize("text", ["fast", "scale=", "scale=-1", "scale=x"])
def test_pace_parse_rejects(text):
    with pytest.raises(ValueError, match="recorded, instant or scale=F"):
        Pace.parse(text)


def test_a_stream_stops_at_input_required_and_a_subscription_does_not(load):
    engine = Engine(
        load(
            cassette("""
        - name: ask
          match: {text: ask}
          reply: {task: {steps: [{state: TASK_STATE_WORKING}, {state: TASK_STATE_INPUT_REQUIRED}]}}
        - name: answer
          match: {task: {state: TASK_STATE_INPUT_REQUIRED}}
          reply: {task: {steps: [{state: TASK_STATE_COMPLETED}]}}
    """)
        ),
        pace="instant",
        keepalive_s=0.05,
    )
    try:
        stream = engine.stream(send_call("ask", operation="SendStreamingMessage"))
        assert [e.state.name for e in stream.events() if e is not None] == ["INPUT_REQUIRED"]
        task_id = stream.first.task.id  # type: ignore[union-attr]
        subscription = engine.stream(task_call("SubscribeToTask", id=task_id))
        events = subscription.events()
        assert next(events) is None  # nothing yet: a keep-alive tick, and the subscription stays
        engine.handle(send_call("main", task_id=task_id))
        assert [e.state.name for e in events if e is not None] == ["COMPLETED"]
        with pytest.raises(errors.UnsupportedOperation):
            engine.stream(task_call("SubscribeToTask", id=task_id))
    finally:
        engine.close()


def test_close_ends_open_subscriptions(load):
    engine = Engine(
        load(
            cassette("""
        - name: ask
          reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED}]}}
    """)
        ),
        keepalive_s=5,
    )
    task = engine.handle(send_call("ask")).task  # type: ignore[union-attr]
    events = engine.stream(task_call("SubscribeToTask", id=task.id)).events()
    threading.Timer(0.05, engine.close).start()
    assert list(events) == []  # ended by close(), long before the 5 s keep-alive


def wait_for(predicate: Any, deadline_s: float = 5.0) -> bool:
    import time

    end = time.monotonic() + deadline_s
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_a_task_answered_at_once_goes_on_working_until_a_polls_gate(load):
    engine = Engine(
        load(
            cassette("""
        - name: background
          reply:
            task:
              steps:
                - state: TASK_STATE_SUBMITTED
                - state: TASK_STATE_WORKING
                  after: {ms: 40}
                - artifact: {artifactId: a, parts: [{text: x}]}
                  after: {ms: 40}
                - state: TASK_STATE_COMPLETED
                  after: {polls: 1}
    """)
        ),
        clock_factory=SteppedClock,
    )
    try:
        sent = engine.handle(send_call("go", configuration={"returnImmediately": True}))
        task = engine.tasks.get(sent.task.id)  # type: ignore[union-attr]
        assert sent.task.state.name == "SUBMITTED"  # type: ignore[union-attr]
        # No poll, no subscriber: the ms steps still happen, as a real agent keeps working ...
        assert wait_for(lambda: len(task.events) == 3)
        assert [e.at_ms for e in task.events] == [0, 40, 80]
        assert task.state.name == "WORKING"  # ... and the polls gate holds the rest for GetTask
        assert engine.handle(task_call("GetTask", id=task.id)).task.state.name == "COMPLETED"  # type: ignore[union-attr]
    finally:
        engine.close()


def test_reset_ends_the_streams_of_the_tasks_it_forgets(load):
    engine = Engine(
        load(
            cassette("""
        - name: ask
          reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED}]}}
    """)
        ),
        keepalive_s=5,
    )
    try:
        task = engine.handle(send_call("ask")).task  # type: ignore[union-attr]
        events = engine.stream(task_call("SubscribeToTask", id=task.id)).events()
        threading.Timer(0.05, engine.reset).start()
        assert list(events) == []  # ended by the reset, long before the 5 s keep-alive
    finally:
        engine.close()
