"""Playing task scripts in real time, for streams and subscriptions.

A played task shows each step when it is due: the script's `after: {ms}` gap, paced (recorded,
scaled, capped or instant), counted from the previous step's deadline. Deadlines are absolute, so
the gaps never drift the way chained sleeps do. One daemon thread per engine plays every task; it
keeps going when clients disconnect, as a real agent would.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from mockagent.cassette.base import MAX_SCALE
from mockagent.cassette.models import Step
from mockagent.engine.clock import Clock
from mockagent.engine.store.memory import TaskStore
from mockagent.engine.tasks import Runner, Task, held
from mockagent.errors import StoreError

STORE_RETRY_S = 0.1  # a shared store that is busy or gone: the next step is tried again this soon


@dataclass(frozen=True)
class Pace:
    """How scripted gaps are replayed: `factor` 1 = as recorded, 0 = instant; `cap_ms` bounds a
    gap."""

    factor: float = 1.0
    cap_ms: float | None = None

    @classmethod
    def parse(cls, text: str, cap_ms: float | None = None) -> Pace:
        """`recorded`, `instant` or `scale=F` (0 ≤ F ≤ 1000); ValueError otherwise."""
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
            if 0 <= factor <= MAX_SCALE:  # a factor past it (or inf) no timer could wait for
                return cls(factor, cap_ms)
        raise ValueError(
            f"pace {text!r}: use recorded, instant or scale=F with F from 0 to {MAX_SCALE}"
        )

    @classmethod
    def resolve(
        cls,
        pace: Pace | str | None,
        cap_ms: float | None,
        default: str,
        default_cap_ms: float | None,
    ) -> Pace:
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
    """Applies played tasks' steps at their deadlines, each batch in one engine transaction."""

    def __init__(
        self,
        condition: threading.Condition,
        transaction: Callable[..., float | None],  # `Transactions.run`
        tasks: TaskStore,
        clock: Clock,
        runner: Runner,
        pace: Pace,
        name: str,
        defer: Callable[[Callable[[], None]], None] = lambda effect: effect(),
    ) -> None:
        self._condition = condition
        self._defer = defer  # what waits for the transaction to be kept (a shared store's)
        self._transaction = transaction
        self._tasks = tasks
        self._clock = clock
        self._runner = runner
        self.pace = pace
        self._name = name
        # Each played task's deadline as last seen, by id (a shared store gives a fresh Task each
        # transaction): only a task whose deadline came is read, however often the player wakes.
        self._playing: dict[str, float] = {}
        self._seen: dict[str, float | None] = {}  # what this transaction found (None: done)
        self._thread: threading.Thread | None = None
        self._closed = False

    def play(self, task: Task, streamed: bool = True) -> None:
        """Start (or keep) playing `task`'s remaining script; call in a transaction.

        A streamed task ignores polls gates (a stream has no polls). A task played only in the
        background (returnImmediately: it goes on working) stops at a polls gate and leaves
        that step to GetTask. A task with a deadline is played already (maybe by another process).
        """
        if streamed:
            task.follow_polls = False
        while task.due_ms is None and self._playable(task) and self.pace.gap(task.script[0]) <= 0:
            self._runner.apply(task, task.script.popleft())  # due now: no thread, no wait
        if not self._playable(task):
            return
        due = None
        if task.due_ms is None:
            due = task.due_ms = self._clock.elapsed_ms() + self.pace.gap(task.script[0])
        # Once the call is kept: a call computed again on a shared store may make another task.
        self._defer(partial(self._follow, task.id, due))

    def _follow(self, task_id: str, due: float | None) -> None:
        if due is not None:
            self._playing[task_id] = due
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(
                target=self._run, name=f"mockagent-player:{self._name}", daemon=True
            )
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
        fresh = False  # whether to read the counters though this process has a copy
        with self._condition:
            while not self._closed:
                if not self._playing:  # woken by another task's event: nothing to load or lock
                    self._clock.wait(self._condition, None)
                    continue
                try:  # on a shared store, computed again as long as another process wrote first
                    timeout = self._transaction(self._play_due, fresh=fresh)
                    for task_id, due in self._seen.items():  # kept: so the deadlines are
                        if due is None:
                            self._playing.pop(task_id, None)
                        else:
                            self._playing[task_id] = due
                except StoreError as exc:  # the step is not saved: played again from the store
                    logging.getLogger("mockagent").warning("mockagent: %s", exc)
                    timeout = STORE_RETRY_S
                fresh = False
                if timeout != 0:  # waits outside the transaction, which a shared store locks
                    capped = self._capped(timeout)
                    fresh = capped != timeout
                    self._clock.wait(self._condition, capped)

    def _capped(self, timeout: float | None) -> float | None:
        """At most the store's `poll_s` while a task plays: another process sharing the store
        may advance the clock, which wakes no player here (so the counters are read afresh
        then; at a deadline, a copy is fine: an advance only makes more steps due)."""
        every = self._tasks.poll_s
        if every is None or not self._playing:
            return timeout
        return every if timeout is None else min(timeout, every)

    def _play_due(self) -> float | None:
        """Show every step now due; seconds until the next deadline (0: look again at once)."""
        now = self._clock.elapsed_ms()
        self._seen = {}
        for task_id in [i for i, due in self._playing.items() if due <= now]:
            task = self._tasks.get(task_id)
            if task is None or task.due_ms is None or task.due_ms > now:
                self._seen[task_id] = None if task is None else task.due_ms  # reset, done or put
                continue  # off elsewhere
            self._step(task)
            return 0
        seen = [self._seen.get(task_id, due) for task_id, due in self._playing.items()]
        deadlines = [due for due in seen if due is not None]
        return (min(deadlines) - now) / 1000 if deadlines else None

    @staticmethod
    def _playable(task: Task) -> bool:
        """Steps left, no follow-up awaited, no subscription awaited, and (in the background)
        no polls gate next."""
        if not task.script or task.halted:
            return False
        after = task.script[0].after
        if after is not None and after.subscribers and task.subscriptions < after.subscribers:
            return False  # the subscription that saw it live opens first; its play resumes this
        if held(task.script[0]):  # a get-or-create (or a strict polls gate) shows it
            return False
        return not (task.follow_polls and after is not None and after.polls)

    def _step(self, task: Task) -> None:
        if self._playable(task):
            self._runner.apply(task, task.script.popleft())
        if not self._playable(task):
            task.due_ms = None  # done, waiting for a follow-up, or for polls
        else:  # from the deadline: no drift
            task.due_ms = (task.due_ms or 0.0) + self.pace.gap(task.script[0])
        self._seen[task.id] = task.due_ms
