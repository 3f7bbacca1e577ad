"""Tasks and journal entries as JSON, for a store shared between processes.

JSON, not pickle: whoever can write to the store must not be able to run code in mockagent. A
task's remaining script is kept as references to the cassette's steps (interaction, step), so
nothing of the cassette is copied into the store and a step never has to be validated again.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import asdict, fields
from typing import Any

from mockagent.cassette.models import Interaction, Step, TaskState
from mockagent.engine.call import TaskEvent
from mockagent.engine.diagnostics import Candidate, NearMissReport
from mockagent.engine.journal import JournalEntry
from mockagent.engine.matchers import Mismatch
from mockagent.engine.tasks import Task

_TASK_FIELDS = [f.name for f in fields(Task) if f.name not in ("state", "script", "events")]
_EVENT_FIELDS = [f.name for f in fields(TaskEvent) if f.name != "state"]


class StepTable:
    """Every task step of a cassette, by reference and back."""

    def __init__(self, interactions: list[Interaction]) -> None:
        self._steps: list[list[Step]] = [
            list(i.reply.task.steps) if i.reply is not None and i.reply.task is not None else []
            for i in interactions
        ]
        self._refs = {id(step): [i, j] for i, steps in enumerate(self._steps) for j, step in enumerate(steps)}

    def ref(self, step: Step) -> list[int]:
        return self._refs[id(step)]

    def step(self, ref: list[int]) -> Step:
        return self._steps[ref[0]][ref[1]]


def dump_task(task: Task, steps: StepTable) -> str:
    data: dict[str, Any] = {name: getattr(task, name) for name in _TASK_FIELDS}
    data["state"] = task.state.value
    data["script"] = [steps.ref(step) for step in task.script]
    data["events"] = [_event_out(event) for event in task.events]
    return json.dumps(data, separators=(",", ":"))


def load_task(text: str | bytes, steps: StepTable) -> Task:
    data = json.loads(text)
    task = Task(**{name: data[name] for name in _TASK_FIELDS})
    task.state = TaskState(data["state"])
    task.script = deque(steps.step(ref) for ref in data["script"])
    task.events = [_event_in(event) for event in data["events"]]
    return task


def _event_out(event: TaskEvent) -> dict[str, Any]:
    data = {name: getattr(event, name) for name in _EVENT_FIELDS}
    data["state"] = None if event.state is None else event.state.value
    return data


def _event_in(data: dict[str, Any]) -> TaskEvent:
    state = data.pop("state")
    return TaskEvent(**data, state=None if state is None else TaskState(state))


def dump_entry(entry: JournalEntry) -> str:
    data = {"operation": entry.operation, "binding": entry.binding, "params": entry.params,
            "interaction": entry.interaction, "error": entry.error,
            "report": None if entry.report is None else asdict(entry.report)}
    return json.dumps(data, separators=(",", ":"), default=str)


def load_entry(text: str | bytes, seq: int) -> JournalEntry:
    data = json.loads(text)
    report = data.pop("report")
    if report is not None:
        candidates = [Candidate(**{**c, "mismatches": [Mismatch(**m) for m in c["mismatches"]]})
                      for c in report.pop("candidates")]
        report = NearMissReport(**report, candidates=candidates)
    return JournalEntry(seq, **data, report=report)
