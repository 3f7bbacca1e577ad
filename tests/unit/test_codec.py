"""How a shared store writes tasks and journal entries: JSON that reads back to the same thing."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import pytest

from mockagent import errors
from mockagent.engine import Engine
from mockagent.engine.codec import StepTable, dump_entry, dump_task, load_entry, load_task
from mockagent.engine.compact_json import compact_json
from tests.helpers.engine_calls import send

INTERACTIONS = """
- name: build
  match: {text: build}
  reply:
    task:
      steps:
        - state: TASK_STATE_SUBMITTED
        - state: TASK_STATE_WORKING
          message: Building
        - artifact: {artifactId: log, parts: [{text: "one "}]}
        - artifact: {artifactId: log, parts: [{text: "two"}]}
          append: true
          lastChunk: true
        - state: TASK_STATE_INPUT_REQUIRED
          message: Ship it?
        - state: TASK_STATE_COMPLETED
"""


def test_a_task_reads_back_equal_with_its_events_and_the_rest_of_its_script(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(INTERACTIONS)
    send(engine, "build")
    task = engine.tasks.all()[0]
    assert (
        [e.state for e in task.events if e.state]
        and any(e.artifact for e in task.events)
        and task.script
    )
    steps = StepTable(engine.interactions)

    text = dump_task(task, steps)
    again = load_task(text, steps)

    assert again == task
    assert [(e.task_id, e.context_id) for e in again.events] == [(task.id, task.context_id)] * len(
        task.events
    )
    assert again.script[0] is task.script[0]  # the cassette's own step, not a copy
    assert dump_task(again, steps) == text
    assert "task_id" not in text and "context_id" in text  # events do not repeat their task's ids


def test_a_journal_entry_reads_back_equal(make_engine: Callable[..., Engine]) -> None:
    engine = make_engine(INTERACTIONS)
    send(engine, "build")
    entry = engine.journal.entries[0]
    assert load_entry(dump_entry(entry), entry.seq) == entry


def test_compact_json_keeps_order_and_non_ascii_and_turns_the_unknown_into_text() -> None:
    assert compact_json({"b": [1, 2.5, None], "a": "ü"}) == '{"b":[1,2.5,null],"a":"ü"}'
    assert compact_json({"when": Engine}, default=str) == f'{{"when":"{Engine}"}}'


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("default", [None, str, repr])
def test_compact_json_never_writes_nan_or_infinity(number: float, default: object) -> None:
    """Strict JSON readers refuse NaN: one reaching an answer is our bug, said, not sent."""
    with pytest.raises(ValueError, match="Out of range float"):
        compact_json({"x": [number]}, default=default)  # type: ignore[arg-type]


def test_a_task_stored_before_a_newer_counter_existed_reads_with_its_default(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(INTERACTIONS)
    send(engine, "build")
    task = engine.tasks.all()[0]
    task.finds, task.subscriptions = 2, 1
    steps = StepTable(engine.interactions)
    older = json.loads(dump_task(task, steps))
    del older["finds"], older["subscriptions"]  # as a version before those counters saved it

    again = load_task(json.dumps(older), steps)

    assert (again.finds, again.subscriptions) == (0, 0)
    assert again == replace(task, finds=0, subscriptions=0)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d.pop("since_ms"), "a stored task lacks since_ms"),
        (lambda d: d.update(later=1), "a stored task has unknown fields later"),
    ],
)
def test_a_stored_task_missing_a_required_field_or_with_an_unknown_one_is_refused(
    make_engine: Callable[..., Engine], change: Callable[[dict], object], says: str
) -> None:
    engine = make_engine(INTERACTIONS)
    send(engine, "build")
    steps = StepTable(engine.interactions)
    stored = json.loads(dump_task(engine.tasks.all()[0], steps))
    change(stored)

    with pytest.raises(errors.StoreError, match=says):
        load_task(json.dumps(stored), steps)
