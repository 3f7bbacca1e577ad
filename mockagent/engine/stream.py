"""A stream: the first answer (a Task snapshot or one Message), then the task's events as they
happen."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mockagent.cassette.models import Fault, Opening
from mockagent.engine.call import MessageResult, TaskEvent, TaskResult
from mockagent.engine.fault_part import FaultPart
from mockagent.engine.faults import faulty
from mockagent.engine.tasks import Task, held

KEEPALIVE = None
"""What `events()` yields when nothing happened for a while: the binding sends a comment, which
also finds out whether the client is still there (a dead socket ends the stream's thread)."""


@dataclass
class Stream:
    """Events of one stream or subscription, read by one client.

    Every reader of a task reads the same event list, so concurrent subscribers see identical
    events in identical order. `close_on_interrupt`: SendStreamingMessage ends at INPUT_REQUIRED or
    AUTH_REQUIRED; a subscription stays open until a terminal state. `opening` is the reply's
    `first`: with `task-as-is` the first answer shows the task before any step (its state ends
    nothing); with `update` a binding sends no first answer, the first event opens the stream.
    """

    first: MessageResult | TaskResult
    task: Task | None  # as it was when the stream opened
    cursor: int
    close_on_interrupt: bool
    condition: threading.Condition
    keepalive_s: float
    closed: Callable[[], bool]  # the engine is shutting down
    fault: Fault | None = None
    close_when_idle: bool = False  # a message's stream also ends when its script has run out
    fetch: Callable[[str], Task | None] | None = None  # the task now (from a shared store)
    notes: Callable[[str], int] | None = None  # how often a shared store told of its writes
    poll_s: float | None = None  # a shared store: read the task at least this often
    opening: Opening = "task"  # the reply's `first`
    faults: list[FaultPart] = field(default_factory=list)  # its journal entry's, told as they fire
    _left: int = -1  # events of the batch being read still to come; -1 before the first read
    _noted: int = -1  # the task's count of notes when it was last read
    _read_by: float = 0.0  # when it is read again without a note (time.monotonic())

    def faulted(self, items: Iterable[Any]) -> Iterator[Any]:
        """What a binding sends (its rendering of the first answer and the events, in order)
        with the stream's fault applied, as `faults.faulty` says; the journal learns what fired."""
        return faulty(items, self.fault, self.faults)

    def ready(self) -> bool:
        """Whether the next event can be read at once, without waiting: a binding may then write
        it together with this one (one write instead of one per event)."""
        if self._left < 0:
            return self.task is not None and len(self.task.events) > self.cursor
        return self._left > 0

    def events(self) -> Iterator[TaskEvent | None]:
        """Events after the first answer, each as soon as it happens; ends when the stream
        closes."""
        task = self.task
        if task is None or self._ends_with_snapshot(task):
            return
        while True:
            with self.condition:  # woken by any task's event: wait for this task's, or the tick
                now = self._wait(task)
                batch = now.events[self.cursor :] if now is not None else []
                self.cursor += len(batch)
                stopping = now is None or self.closed() or self._idle(now)
                task = now or task
            for i, event in enumerate(
                batch
            ):  # yielded outside the lock: a slow client holds up nobody
                self._left = len(batch) - i - 1
                yield event
                if event.closes(self.close_on_interrupt):
                    return
            if stopping:
                return
            if not batch:
                self._left = 0
                yield KEEPALIVE

    def _wait(self, task: Task) -> Task | None:
        """The task once it has news, the engine closed or a keep-alive is due (condition held).
        None when a reset forgot it."""
        current: Task | None = task

        def news() -> bool:
            nonlocal current
            if (
                self.fetch is not None
                and (current is None or self.cursor >= len(current.events))
                and self._stale(task.id)
            ):  # a copy with events still unread needs no fresh one
                current = self.fetch(task.id)
            return (
                current is None
                or self.cursor < len(current.events)
                or self.closed()
                or self._idle(current)
            )

        if news():
            return current
        if self.poll_s is None:
            self.condition.wait_for(news, self.keepalive_s)
            return current
        waited = 0.0
        while not self.condition.wait_for(news, self.poll_s) and waited < self.keepalive_s:
            waited += self.poll_s
        return current

    def _stale(self, task_id: str) -> bool:
        """Whether the task may have changed since it was last read: a note of a write came,
        or it was not read for `poll_s` (a note may be lost)."""
        if self.notes is None:
            return True
        noted, now = self.notes(task_id), time.monotonic()
        if noted == self._noted and now < self._read_by:
            return False
        self._noted, self._read_by = noted, now + (self.poll_s or 0.0)
        return True

    def _idle(self, task: Task) -> bool:
        """Nothing left to come: the script ran out (or waits for a get-or-create or strict
        polls, which no stream plays) and every event was read (condition held)."""
        ended = not task.script or held(task.script[0])
        return self.close_when_idle and ended and self.cursor >= len(task.events)

    def _ends_with_snapshot(self, task: Task) -> bool:
        first = self.first
        state = first.task.state if isinstance(first, TaskResult) else task.state
        with self.condition:
            idle = self._idle(task)
        if self.opening != "task":  # the first answer showed no step of this call
            return idle
        return idle or state.terminal or (self.close_on_interrupt and state.interrupted)
