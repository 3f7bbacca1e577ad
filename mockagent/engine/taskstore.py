"""Where an engine keeps the state that several server processes must share.

Tasks, the journal, the use counts of interactions, and the counters behind the clock and the id
factory. `TaskStore` keeps them in this process (the default). A shared store
(`mockagent.engine.redis_store.RedisStore`) loads them when a transaction begins and writes them
back when it ends, under a lock all processes honour, so `serve --workers N` and several hosts
behind a load balancer answer as one agent.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from mockagent.engine.clock import Clock
from mockagent.engine.ids import IdFactory
from mockagent.engine.journal import Journal
from mockagent.engine.tasks import Task
from mockagent.errors import StoreError


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
    wait_s: float = 0.0
    """A shared store: how long a call may wait for the store's lock before it is Unavailable."""

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

    def renumber(self, kept: Sequence[int | None]) -> None:
        """The engine's interactions changed while it serves: interaction i is the one that was
        at `kept[i]` (None: a new one, unused). Only an in-process store allows it."""
        if self.shared:
            raise StoreError("a shared store keeps the interactions it was started with")
        self._counts[:] = [0 if old is None else self._counts[old] for old in kept]
        self._size = len(kept)

    def attach(self, counters: Counters) -> None:
        """Called once the engine has its counters; a shared store starts them or joins them."""

    def begin(self, counters: Counters, task_id: Any = None, deadline: float | None = None) -> None:
        """A transaction begins (the engine's lock is held): a shared store locks and loads, and
        reads the task the call names (`task_id`, if any) in the same round trip. It waits for
        its lock until `deadline` (time.monotonic()) at most, StoreError then."""

    def commit(self, counters: Counters, keep: bool = False) -> None:
        """The transaction ends, also after an error: a shared store writes back and unlocks, or
        keeps its lock when `keep` (more calls of this process are in line). StoreError, with
        nothing written, when a shared store lost its lock meanwhile."""

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

    With a shared store, every call's changes are written (and the write confirmed) before it
    returns, so no answer goes out that the store may not keep. A process whose threads queue
    for the engine keeps the store's lock for them (at most LEASE_CALLS calls in a row) instead
    of unlocking and locking again for each: the load is paid once per batch, the write per
    call. Waiting, for the engine's lock and the store's together, ends after the store's
    `wait_s` with StoreError (the client gets Unavailable), never in going on without them.
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
        deadline = None
        if shared:
            deadline = time.monotonic() + self._store.wait_s
            with self._queue_lock:
                self._queue += 1
            try:
                if not self._lock.acquire(timeout=self._store.wait_s):
                    raise StoreError(
                        f"waited {self._store.wait_s:g} s for the shared store behind this "
                        "process's other calls; try again"
                    )
            finally:
                with self._queue_lock:
                    self._queue -= 1
        else:
            self._lock.acquire()
        try:
            self._depth += 1
            try:
                if not self._leased:
                    self._store.begin(self._counters, task_id, deadline)
                    self._leased, self._calls = True, 0
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._leased:
                    self._calls += 1
                    self._end(shared)
        finally:
            self._lock.release()

    def _end(self, shared: bool) -> None:
        """A transaction ended: write, and unlock or keep the lease for the calls in line."""
        keep = False
        if shared and self._calls < LEASE_CALLS:
            with self._queue_lock:
                keep = self._queue > 0  # the next in line (in this process) goes on under it
        self._leased = False  # also when the write is refused: the next call locks afresh
        self._store.commit(self._counters, keep)
        self._leased = keep

    def release(self) -> None:
        """Write and unlock the store now (call with the lock held, outside any transaction)."""
        if self._leased:
            self._leased = False
            self._store.commit(self._counters)


StoreFactory = Callable[[str, Any], TaskStore]
"""Makes an engine's store from a key (unique per cassette) and the cassette's interactions."""


def memory_store(key: str, interactions: Any) -> TaskStore:
    """The default: everything in this process."""
    return TaskStore(len(interactions))


def store_from_url(url: str | None, join: bool = False) -> StoreFactory:
    """`None` or `memory:` for the in-process store; `redis://HOST:PORT/DB`, `rediss://…` (TLS)
    or `unix:///PATH?db=N` for a shared one (the `mockagent[redis]` extra), which starts afresh
    unless `join` (another host started it); ValueError for anything else."""
    if url is None or url in ("memory", "memory:"):
        return memory_store
    shown = re.sub(r"//[^@/]*@", "//", url)  # for messages: no password
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            from mockagent.engine.redis_store import redis_store
        except ImportError as exc:
            if exc.name not in ("redis", "hiredis") and not (exc.name or "").startswith("redis."):
                raise
            raise ValueError(
                f"store {shown!r} needs redis-py, which is not installed: "
                "pip install 'mockagent[redis]'"
            ) from None
        return redis_store(url, fresh=not join)
    raise ValueError(f"store {shown!r}: use memory: or redis://HOST:PORT/DB")
