"""Playing task scripts in real time, for streams and subscriptions.

A played task shows each step when it is due: the script's `after: {ms}` gap, paced (recorded,
scaled, capped or instant), counted from the previous step's deadline. Deadlines are absolute, so
the gaps never drift the way chained sleeps do. One daemon thread per engine plays every task; it
keeps going when clients disconnect, as a real agent would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from mockagent.cassette.models import Step
from mockagent.engine.clock import Clock
from mockagent.engine.tasks import Runner, Task


@dataclass(frozen=True)
class Pace:
    """How scripted gaps are replayed: `factor` 1 = as recorded, 0 = instant; `cap_ms` bounds a gap."""

    factor: float = 1.0
    cap_ms: float | None = None

    @classmethod
    def parse(cls, text: str, cap_ms: float | None = None) -> Pace:
        """`recorded`, `instant` or `scale=F` (F ≥ 0); ValueError otherwise."""
        text = text.strip().lower()
        if text == "recorded":
            return cls(1.0, cap_ms)
        if text == "instant":
            return cls(0.0, cap_ms)
        if text.startswith("scale="):
            try:
                factor = float(text.removeprefix("scale="))
            except ValueError:
                factor = -1.0
            if factor >= 0:
                return cls(factor, cap_ms)
        raise ValueError(f"pace {text!r}: use recorded, instant or scale=F with F ≥ 0")

    @classmethod
    def resolve(cls, pace: Pace | str | None, cap_ms: float | None, default: str,
                default_cap_ms: float | None) -> Pace:
        """An override (a Pace, or text and/or a cap) over the cassette's own setting."""
        if isinstance(pace, Pace):
            return pace
        return cls.parse(pace or default, default_cap_ms if cap_ms is None else cap_ms)

    def gap(self, step: Step) -> float:
        """Milliseconds to wait before `step` (polls gates do not apply to a played task)."""
        ms = (step.after.ms or 0) if step.after is not None else 0
        gap = ms * self.factor
        return min(gap, self.cap_ms) if self.cap_ms is not None else gap


class Player:
    """Applies played tasks' steps at their deadlines, under the engine's condition."""

    def __init__(self, condition: threading.Condition, clock: Clock, runner: Runner, pace: Pace,
                 name: str) -> None:
        self._condition = condition
        self._clock = clock
        self._runner = runner
        self.pace = pace
        self._name = name
        self._playing: dict[str, Task] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    def play(self, task: Task, streamed: bool = True) -> None:
        """Start (or keep) playing `task`'s remaining script; call with the condition held.

        A streamed task ignores polls gates (a stream has no polls). A task played only in the
        background (returnImmediately: it goes on working) stops at a polls gate and leaves
        that step to GetTask.
        """
        if streamed:
            task.follow_polls = False
        if not self._playable(task):
            return
        if task.id not in self._playing:
            task.due_ms = self._clock.elapsed_ms() + self.pace.gap(task.script[0])
            self._playing[task.id] = task
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name=f"mockagent-player:{self._name}",
                                            daemon=True)
            self._thread.start()
        self._condition.notify_all()

    def stop(self) -> None:
        """Ask the thread to end; call with the condition held, then `join()` without it."""
        self._closed = True
        self._condition.notify_all()

    def join(self) -> None:
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        with self._condition:
            while not self._closed:
                now = self._clock.elapsed_ms()
                due = [t for t in self._playing.values() if t.due_ms is not None and t.due_ms <= now]
                for task in due:
                    self._step(task)
                if due:
                    continue
                deadlines = [t.due_ms for t in self._playing.values() if t.due_ms is not None]
                timeout = (min(deadlines) - now) / 1000 if deadlines else None
                self._clock.wait(self._condition, timeout)

    @staticmethod
    def _playable(task: Task) -> bool:
        """Steps left, no follow-up awaited, and (in the background) no polls gate next."""
        if not task.script or task.halted:
            return False
        after = task.script[0].after
        return not (task.follow_polls and after is not None and after.polls)

    def _step(self, task: Task) -> None:
        if self._playable(task):
            self._runner.apply(task, task.script.popleft())
        if not self._playable(task):
            task.due_ms = None  # done, waiting for a follow-up, or for polls
            del self._playing[task.id]
        else:
            task.due_ms = (task.due_ms or 0.0) + self.pace.gap(task.script[0])  # from the deadline: no drift
