"""Tasks and journal entries as JSON text, for a shared store.

JSON, not pickle: whoever can write to the store must not be able to run code in mockagent. A
task's remaining script is kept as references to the cassette's steps (interaction, step), so
nothing of the cassette is copied into the store and a step never has to be validated again.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import asdict, fields
from operator import attrgetter
from typing import Any

from mockagent import errors
from mockagent.cassette.models import Interaction, Step, TaskState
from mockagent.engine.call import TaskEvent
from mockagent.engine.compact_json import compact_json
from mockagent.engine.diagnostics import Candidate, NearMissReport
from mockagent.engine.fault_part import FaultPart
from mockagent.engine.journal import JournalEntry
from mockagent.engine.mismatch import Mismatch
from mockagent.engine.tasks import Task

# A task's polls are kept apart (a poll that shows nothing is an increment, not a new version of
# the task): see `engine/store/redis.py`.
_APART = ("state", "script", "events", "polls")
_TASK_FIELDS = tuple(f.name for f in fields(Task) if f.name not in _APART)
_task_fields = attrgetter(*_TASK_FIELDS)
# An event is a list in this order, without the task's ids (its task has them): a task is saved
# after every call that changed it, so its size is paid in every commit of a shared store.
_EVENT_FIELDS = tuple(
    f.name for f in fields(TaskEvent) if f.name not in ("task_id", "context_id", "state")
)
_event_fields = attrgetter(*_EVENT_FIELDS)
# Counters a task gained after tasks were first stored: a task saved without one (by a process
# of an older version sharing the store) reads with its default. Any other field is required.
_NEWER: dict[str, Any] = {
    f.name: f.default for f in fields(Task) if f.name in ("finds", "subscriptions")
}
_STORED = frozenset((*_TASK_FIELDS, "state", "script", "events"))


class StepTable:
    """Every task step of a cassette, by reference and back."""

    def __init__(self, interactions: list[Interaction]) -> None:
        self._steps: list[list[Step]] = [
            list(i.reply.task.steps) if i.reply is not None and i.reply.task is not None else []
            for i in interactions
        ]
        self._refs = {
            id(step): [i, j] for i, steps in enumerate(self._steps) for j, step in enumerate(steps)
        }

    def ref(self, step: Step) -> list[int]:
        return self._refs[id(step)]

    def step(self, ref: list[int]) -> Step:
        return self._steps[ref[0]][ref[1]]


def dump_task(task: Task, steps: StepTable) -> str:
    data: dict[str, Any] = dict(zip(_TASK_FIELDS, _task_fields(task), strict=True))
    data["state"] = task.state.value
    data["script"] = [steps.ref(step) for step in task.script]
    data["events"] = [
        [*_event_fields(event), None if event.state is None else event.state.value]
        for event in task.events
    ]
    return compact_json(data)


def load_task(text: str | bytes, steps: StepTable) -> Task:
    """A task as `dump_task` wrote it; StoreError names the fields when it cannot be read."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.keys() != _STORED:
        data = _upgraded(data)
    task = Task(**{name: data[name] for name in _TASK_FIELDS})
    task.state = TaskState(data["state"])
    task.script = deque(steps.step(ref) for ref in data["script"])
    task.events = [_event_in(event, task) for event in data["events"]]
    return task


def _upgraded(data: Any) -> dict[str, Any]:
    """A stored task with fields other than today's: the newer counters it lacks get their
    defaults; any other field missing, or one this version does not know, refuses it."""
    if not isinstance(data, dict):
        raise errors.StoreError("a stored task is not a JSON object")
    missing = sorted(_STORED - data.keys() - _NEWER.keys())
    unknown = sorted(data.keys() - _STORED)
    if missing or unknown:
        problems = [
            f"{label} {', '.join(names)}"
            for label, names in (("lacks", missing), ("has unknown fields", unknown))
            if names
        ]
        raise errors.StoreError(
            f"a stored task {' and '.join(problems)}: written by another mockagent version?"
        )
    return {**_NEWER, **data}


def _event_in(data: list[Any], task: Task) -> TaskEvent:
    *values, state = data
    return TaskEvent(
        **dict(zip(_EVENT_FIELDS, values, strict=True)),
        task_id=task.id,
        context_id=task.context_id,
        state=None if state is None else TaskState(state),
    )


def dump_entry(entry: JournalEntry) -> str:
    data = {
        "operation": entry.operation,
        "binding": entry.binding,
        "params": entry.params,
        "interaction": entry.interaction,
        "error": entry.error,
        "report": None if entry.report is None else asdict(entry.report),
        "faults": [_stored(part) for part in entry.faults],
    }
    return compact_json(data, default=str)


def _stored(part: FaultPart) -> dict[str, Any]:
    """A fault part as stored when the call's transaction commits: a stream's parts fire later,
    and only the serving process's copy learns it, so the stored one says so."""
    data = asdict(part)
    if not part.settled:
        data["why"] = (
            "not known to the shared store: the stream was still open when its call was "
            "stored (the journal of the process that served it knows)"
        )
        data["settled"] = True
    return data


def load_entry(text: str | bytes, seq: int) -> JournalEntry:
    data = json.loads(text)
    report = data.pop("report")
    faults = [FaultPart(**part) for part in data.pop("faults", [])]
    if report is not None:
        candidates = [
            Candidate(**{**c, "mismatches": [Mismatch(**m) for m in c["mismatches"]]})
            for c in report.pop("candidates")
        ]
        report = NearMissReport(**report, candidates=candidates)
    return JournalEntry(seq, **data, report=report, faults=faults)
