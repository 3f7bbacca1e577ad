"""Where an engine keeps the state that several server processes must share.

Tasks, the journal, the use counts of interactions, and the counters behind the clock and the id
factory. `TaskStore` keeps them in this process (the default). A shared store
(`mockagent.engine.redis_store.RedisStore`) loads them when a transaction begins and writes them
back when it ends, under a lock all processes honour, so `serve --workers N` and several hosts
behind a load balancer answer as one agent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, MutableSequence
from contextlib import contextmanager
from typing import Any, Protocol

from mockagent.engine.clock import Clock
from mockagent.engine.ids import IdFactory
from mockagent.engine.journal import Journal
from mockagent.engine.tasks import Task


class Counters(Protocol):
    """What a store saves besides tasks: the engine's clock, id factory and reset generation."""

    clock: Clock
    ids: IdFactory
    generation: int


class TaskStore:
    """Tasks by id in creation order, the journal and use counts: in this process's memory."""

    shared = False
    poll_s: float | None = None
    """How often a stream looks again for events made elsewhere (None: it is told of every one)."""

    def __init__(self, interactions: int) -> None:
        self._size = interactions
        self.clear()

    def clear(self) -> None:
        """Forget every task, journal entry and use."""
        self._tasks: dict[str, Task] = {}
        self.journal = Journal()
        self.uses: MutableSequence[int] = [0] * self._size

    def use(self, index: int) -> None:
        """Count one use of interaction `index`."""
        self.uses[index] += 1

    def attach(self, counters: Counters) -> None:
        """Called once the engine has its counters; a shared store starts them or joins them."""

    def begin(self, counters: Counters) -> None:
        """A transaction begins (the engine's lock is held): a shared store loads and locks."""

    def commit(self, counters: Counters) -> None:
        """The transaction ends, also after an error: a shared store writes back and unlocks."""

    def add(self, task: Task) -> None:
        self._tasks[task.id] = task

    def get(self, task_id: Any) -> Task | None:
        return self._tasks.get(task_id) if isinstance(task_id, str) else None

    def peek(self, task_id: str) -> Task | None:
        """The task as it is now, read outside a transaction (streams and subscriptions)."""
        return self._tasks.get(task_id)

    def named(self, name: Any) -> Task | None:
        """The task with this name (names are unique), or None."""
        return next((t for t in self._tasks.values() if t.name is not None and t.name == name), None)

    def all(self) -> list[Task]:
        return list(self._tasks.values())

    def __len__(self) -> int:
        return len(self._tasks)

    def close(self) -> None:
        """Let go of connections (a shared store)."""


LEASE_CALLS = 16
"""Calls one process may answer in a row under a shared store's lock before it lets others in."""
LINGER_S = 0.001
"""How long a process keeps a shared store's lock after a call, for its next call."""


class Transactions:
    """`with transactions():` — the engine's lock held and the store's state loaded, nesting.

    With a shared store a process keeps the store's lock after a call (a lease): for callers
    already queued, and for LINGER_S for the next one, at most LEASE_CALLS calls in a row. Calls
    are still answered one at a time across all processes, but the two round trips of loading
    and saving are paid per lease, not per call; another process waits at most LINGER_S longer.
    """

    def __init__(self, lock: threading.RLock, store: TaskStore, counters: Counters) -> None:
        self._lock = lock
        self._store = store
        self._counters = counters
        self._depth = 0
        self._leased = False  # the store's state is loaded (and its lock held)
        self._calls = 0  # transactions in this lease
        self._idle_at = 0.0  # when the last one ended
        self._wake = threading.Condition(threading.Lock())  # guards _due; wakes the releaser
        self._due: float | None = None
        self._releaser: threading.Thread | None = None

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            self._depth += 1
            if not self._leased:
                self._store.begin(self._counters)
                self._leased, self._calls = True, 0
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._ended()

    def _ended(self) -> None:
        self._calls += 1
        if not self._store.shared or self._calls >= LEASE_CALLS:
            self.release()
            return
        self._idle_at = time.monotonic()
        with self._wake:
            waiting = self._due is not None  # the releaser wakes then, and sees the later time
            self._due = self._idle_at + LINGER_S
            if self._releaser is None:
                self._releaser = threading.Thread(target=self._release_when_idle, daemon=True,
                                                  name="mockagent-lease")
                self._releaser.start()
            if not waiting:
                self._wake.notify()

    def release(self) -> None:
        """Save and unlock the store now (call with the lock held, outside any transaction)."""
        if self._leased:
            self._leased = False
            self._store.commit(self._counters)

    def _release_when_idle(self) -> None:
        while True:
            with self._wake:
                while self._due is None or self._due > time.monotonic():
                    self._wake.wait(None if self._due is None else self._due - time.monotonic())
                self._due = None
            with self._lock:  # a call that came meanwhile set a new due time if it ended
                if self._depth == 0 and time.monotonic() >= self._idle_at + LINGER_S:
                    self.release()


StoreFactory = Callable[[str, Any], TaskStore]
"""Makes an engine's store from a key (unique per cassette) and the cassette's interactions."""


def memory_store(key: str, interactions: Any) -> TaskStore:
    """The default: everything in this process."""
    return TaskStore(len(interactions))


def store_from_url(url: str | None, join: bool = False) -> StoreFactory:
    """`None` or `memory:` for the in-process store, `redis://HOST:PORT/DB` for a shared one,
    which starts afresh unless `join` (another host started it); ValueError for anything else."""
    if url is None or url in ("memory", "memory:"):
        return memory_store
    if url.startswith(("redis://", "unix://")):
        from mockagent.engine.redis_store import redis_store

        return redis_store(url, fresh=not join)
    raise ValueError(f"store {url!r}: use memory: or redis://HOST:PORT/DB")
