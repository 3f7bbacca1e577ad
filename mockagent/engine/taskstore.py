"""Where an engine keeps the state that several server processes must share.

Tasks, the journal, the use counts of interactions, and the counters behind the clock and the id
factory. `TaskStore` keeps them in this process (the default). A shared store
(`mockagent.engine.redis_store.RedisStore`) loads them when a transaction begins and writes them
back when it ends, under a lock all processes honour, so `serve --workers N` and several hosts
behind a load balancer answer as one agent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
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
        self._counts = [0] * self._size
        self.uses: Sequence[int] = self._counts  # read only: a use is counted with `use()`

    def use(self, index: int) -> None:
        """Count one use of interaction `index`."""
        self._counts[index] += 1

    def attach(self, counters: Counters) -> None:
        """Called once the engine has its counters; a shared store starts them or joins them."""

    def begin(self, counters: Counters, task_id: Any = None) -> None:
        """A transaction begins (the engine's lock is held): a shared store loads and locks, and
        reads the task the call names (`task_id`, if any) in the same round trip."""

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
        return next(
            (t for t in self._tasks.values() if t.name is not None and t.name == name), None
        )

    def all(self) -> list[Task]:
        return list(self._tasks.values())

    def __len__(self) -> int:
        return len(self._tasks)

    def close(self) -> None:
        """Let go of connections (a shared store)."""


LEASE_CALLS = 16
"""Calls one process may answer in a row under a shared store's lock while more of its own wait."""


class Transactions:
    """`with transactions():` — the engine's lock held and the store's state loaded, nesting.

    With a shared store, a process whose threads queue for the engine keeps the store's lock for
    them (a lease of at most LEASE_CALLS calls) instead of saving and locking again for each: the
    calls are still answered one at a time across all processes, but the two round trips of
    loading and saving are paid per batch. A caller alone (a test calling one call at a time)
    pays both itself, so another process sees its changes as soon as its call returns.
    """

    def __init__(self, lock: threading.RLock, store: TaskStore, counters: Counters) -> None:
        self._lock = lock
        self._store = store
        self._counters = counters
        self._depth = 0
        self._leased = False  # the store's state is loaded (and its lock held)
        self._calls = 0  # transactions in this lease
        self._queue = 0  # threads waiting for `lock` to begin one
        self._queue_lock = threading.Lock()

    @contextmanager
    def __call__(self, task_id: Any = None) -> Iterator[None]:
        """`task_id`: the task the call names, if any (see `TaskStore.begin`)."""
        shared = self._store.shared  # only a shared store keeps a lease for the calls in line
        if shared:
            with self._queue_lock:
                self._queue += 1
        with self._lock:
            if shared:
                with self._queue_lock:
                    self._queue -= 1
            self._depth += 1
            if not self._leased:
                self._store.begin(self._counters, task_id)
                self._leased, self._calls = True, 0
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._calls += 1
                    self._end(shared)

    def _end(self, shared: bool) -> None:
        """A transaction ended: save and unlock, or keep the lease for the calls in line."""
        if not shared or self._calls >= LEASE_CALLS:
            self.release()
            return
        with self._queue_lock:
            queued = self._queue > 0
        if queued:  # the next in line (in this process) goes on under the lease
            return
        self.release()

    def release(self) -> None:
        """Save and unlock the store now (call with the lock held, outside any transaction)."""
        if self._leased:
            self._leased = False
            self._store.commit(self._counters)


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
