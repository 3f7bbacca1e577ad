"""`with engine.locked():` and `engine.locked.run(fn)`: the engine's transactions.

In one process (the in-memory store) a transaction is the engine's lock, held while a call is
computed. A shared store has no lock of its own: a call is computed against what this process
read of the store, and its changes are written by one script that refuses them when another
process changed what the call assumed (see `engine/store/commit.py`). `run` then computes the
call again, until the store's wait bound; past it, StoreError (the client gets Unavailable). Effects
beyond the store (webhooks, a near-miss report) wait for the write that keeps the call: `defer`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from mockagent import errors
from mockagent.engine.store.memory import Counters, TaskStore
from mockagent.errors import StoreError

T = TypeVar("T")


class Again(Exception):
    """A shared store refused a call's write: compute it again, from a fresh read of the store
    (`read`), or from what was read, with the counters the store reserved (it has set them)."""

    def __init__(self, why: str, read: bool) -> None:
        super().__init__(why)
        self.read = read


class Transactions:
    """The engine's transactions on `store`, under the engine's `lock`, nesting."""

    def __init__(self, lock: threading.RLock, store: TaskStore, counters: Counters) -> None:
        self._lock = lock
        self._store = store
        self._counters = counters
        self._depth = 0
        self._owner: int | None = None  # the thread in a transaction
        self._deferred: list[Callable[[], None]] = []

    @contextmanager
    def __call__(self, task_id: Any = None) -> Iterator[None]:
        """One transaction; `task_id`: the task the call names, if any (see `TaskStore.begin`).
        On a shared store a refused write is StoreError: use `run` to compute again instead."""
        self._enter(time.monotonic() + self._store.wait_s)
        try:
            if self._depth == 1:
                self._deferred = []
                self._store.begin(self._counters, task_id)
            failed = True
            try:
                yield
                failed = False
            finally:
                if self._depth == 1:
                    self._end(failed)
        finally:
            self._leave()

    def run(self, compute: Callable[[], T], task_id: Any = None) -> T:
        """`compute()` in a transaction, its result or its ProtocolError or HttpFault (its
        changes are written either way); computed again as long as a shared store refuses the
        write, until the store's wait bound, then StoreError."""
        if not self._store.shared or self._owner == threading.get_ident():  # nested: one write
            with self(task_id):
                return compute()
        deadline = time.monotonic() + self._store.wait_s
        self._enter(deadline)
        try:
            self._store.begin(self._counters, task_id)
            while True:
                self._deferred = []
                try:
                    result: Any = compute()
                except (errors.ProtocolError, errors.HttpFault) as exc:
                    result = exc
                try:
                    self._store.commit(self._counters)
                except Again as again:
                    if time.monotonic() > deadline:
                        raise StoreError(
                            f"{again}; nothing of this call was saved, try again"
                        ) from None
                    if again.read:
                        self._store.begin(self._counters, task_id)
                    continue
                self._flush()
                if isinstance(result, BaseException):
                    raise result
                return result
        finally:
            self._deferred = []
            self._leave()

    def defer(self, effect: Callable[[], None]) -> None:
        """Run `effect` once this transaction's changes are kept (at once in one process)."""
        if self._depth and self._store.shared:
            self._deferred.append(effect)
        else:
            effect()

    def _enter(self, deadline: float) -> None:
        if self._store.shared:
            if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0)):
                raise StoreError(
                    f"waited {self._store.wait_s:g} s for the shared store behind this "
                    "process's other calls; try again"
                )
        else:
            self._lock.acquire()
        self._depth += 1
        self._owner = threading.get_ident()

    def _leave(self) -> None:
        self._depth -= 1
        if not self._depth:
            self._owner = None
        self._lock.release()

    def _end(self, failed: bool) -> None:
        """Write what the transaction changed; refused, StoreError (unless it failed anyway)."""
        try:
            self._store.commit(self._counters)
        except Again as again:
            if not failed:
                raise StoreError(f"{again}; nothing of it was saved, try again") from None
            return
        self._flush()

    def _flush(self) -> None:
        deferred, self._deferred = self._deferred, []
        for effect in deferred:
            effect()
