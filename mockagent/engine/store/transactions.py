"""`with engine.locked():` and `engine.locked.run(fn)`: the engine's transactions.

In one process (the in-memory store) a transaction is the engine's lock, held while a call is
computed. A shared store has no lock of its own: a call is computed against what this process
read of the store, and its changes are written by one script that refuses them when another
process changed what the call assumed (see `engine/store/commit.py`). `run` then computes the
call again, until the store's wait bound; past it, StoreError (the client gets Unavailable).
Effects beyond the store (webhooks, a near-miss report) wait for the write that keeps the call:
`defer`.

Group commit: calls of one process that are computed while others wait for the engine share one
write (at most GROUP calls): a call that ends with others in line leaves its changes to the group
and waits; the next call to end with nobody in line (or any other transaction) writes them all in
one round trip. A refused write computes every call of the group again, in order, and each call
returns what its last computation gave. So the round trip and the script's own cost are paid once
per group, and no lock is held across processes: another process's group goes on meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mockagent import errors
from mockagent.engine.store.memory import Counters, TaskStore
from mockagent.errors import StoreError

T = TypeVar("T")
GROUP = 16
"""Calls one process writes together at most, while more of its own wait for the engine."""


class Again(Exception):
    """A shared store refused a call's write: compute it again, from a fresh read of the store
    (`read`), or from what was read, with the counters the store reserved (it has set them)."""

    def __init__(self, why: str, read: bool) -> None:
        super().__init__(why)
        self.read = read


@dataclass
class _Call:
    """One call of a group: what computes it, what it gave last, and its deferred effects."""

    compute: Callable[[], Any]
    result: Any = None
    deferred: list[Callable[[], None]] = field(default_factory=list)


@dataclass
class _Group:
    """Calls computed one after another on what the first one read, written together."""

    task_id: Any  # the first call's task: read again with the counters when the store says so
    deadline: float
    calls: list[_Call] = field(default_factory=list)
    written: threading.Event = field(default_factory=threading.Event)
    error: StoreError | None = None


class Transactions:
    """The engine's transactions on `store`, under the engine's `lock`, nesting."""

    def __init__(self, lock: threading.RLock, store: TaskStore, counters: Counters) -> None:
        self._lock = lock
        self._store = store
        self._counters = counters
        self._depth = 0
        self._owner: int | None = None  # the thread in a transaction
        self._deferred: list[Callable[[], None]] = []
        self._group: _Group | None = None  # computed, not written yet
        self._queue = 0  # threads waiting for the lock to begin one
        self._queue_lock = threading.Lock()

    @contextmanager
    def __call__(self, task_id: Any = None) -> Iterator[None]:
        """One transaction; `task_id`: the task the call names, if any (see `TaskStore.begin`).
        On a shared store a refused write is StoreError: use `run` to compute again instead."""
        self._enter(time.monotonic() + self._store.wait_s)
        try:
            if self._depth == 1:
                if self._group is not None:  # a group's calls go first
                    self._write(self._group)
                self._deferred = []
                # Not computed again when refused: so from the counters as they are now (another
                # process may have reset the agent or advanced its clock since this one read them).
                self._store.begin(self._counters, task_id, fresh=True)
            failed = True
            try:
                yield
                failed = False
            finally:
                if self._depth == 1:
                    self._end(failed)
        finally:
            self._leave()

    def run(
        self,
        compute: Callable[[], T],
        task_id: Any = None,
        group: bool = False,
        fresh: bool = False,
    ) -> T:
        """`compute()` in a transaction, its result or its ProtocolError or HttpFault (its
        changes are written either way; a StoreError's never); computed again as long as a
        shared store refuses the write, until the store's wait bound, then StoreError.
        `group`: its write may be left to the next call in line, which the caller must not hold
        the engine's lock for (a client's call; the player holds it across its own). `fresh`:
        read the counters though this process has a copy (see `TaskStore.begin`)."""
        if not self._store.shared or self._owner == threading.get_ident():  # nested: one write
            with self(task_id):
                return compute()
        call = _Call(compute)
        deadline = time.monotonic() + self._store.wait_s
        self._enter(deadline)
        left: _Group | None = None
        try:
            pending = self._group
            if pending is None:
                self._store.begin(self._counters, task_id, fresh)
                pending = self._group = _Group(task_id, deadline)
            try:
                self._compute(call)
            except BaseException:
                self._abandon(pending)
                raise
            pending.calls.append(call)
            if group and len(pending.calls) < GROUP and self._waiting():
                left = pending  # the next in line goes on with it, and writes it
            else:
                self._write(pending)
        finally:
            self._leave()
        if left is not None:
            self._wait_for(left)
        if isinstance(call.result, BaseException):
            raise call.result
        return call.result

    def defer(self, effect: Callable[[], None]) -> None:
        """Run `effect` once this transaction's changes are kept (at once in one process)."""
        if self._depth and self._store.shared:
            self._deferred.append(effect)
        else:
            effect()

    def _compute(self, call: _Call) -> None:
        self._deferred = call.deferred = []
        try:
            call.result = call.compute()
        except errors.StoreError:
            raise  # not the call's answer: the store failed it, and none of it may be written
        except (errors.ProtocolError, errors.HttpFault) as exc:
            call.result = exc

    def _abandon(self, group: _Group) -> None:
        """A call failed beyond the protocol (a store error on a read, say): it is answered so,
        and none of its changes may ride on the next call's write. The group's earlier calls are
        computed again from a fresh read (or fail with it); with none, the next call begins."""
        self._group = None
        if not group.calls:
            return
        try:
            self._store.begin(self._counters, group.task_id)
            for call in group.calls:
                self._compute(call)
            self._group = group
        except StoreError as exc:
            group.error = exc
            for call in group.calls:
                call.result = exc
            group.written.set()

    def _write(self, group: _Group) -> None:
        """Write `group` (the lock held), computing its calls again while the store refuses,
        until the group's deadline; then its calls fail with StoreError."""
        self._group = None
        kept = False
        try:
            while True:
                try:
                    self._store.commit(self._counters)
                    kept = True
                    break
                except Again as again:
                    if time.monotonic() > group.deadline:
                        why = f"{again}; nothing of this call was saved, try again"
                        group.error = StoreError(why)
                        return
                    if again.read:
                        self._store.begin(self._counters, group.task_id)
                    for call in group.calls:
                        self._compute(call)
            for call in group.calls:
                for effect in call.deferred:
                    effect()
        except StoreError as exc:  # the store is gone
            group.error = exc
        finally:
            if not kept and group.error is None:  # another error as the calls were computed again
                group.error = StoreError("the call failed; nothing of it was saved, try again")
            for call in group.calls:
                if group.error is not None:
                    call.result = group.error
            group.written.set()

    def _wait_for(self, group: _Group) -> None:
        """Back once `group` is written or failed, never before: a call answered Unavailable
        whose group is written later would make the client's retry a second call."""
        while not group.written.wait(self._store.wait_s):
            # Nobody in line wrote it (each gave up waiting for the engine): write it here.
            try:
                self._enter(time.monotonic() + self._store.wait_s)
            except StoreError:
                continue  # the holder writes it: a transaction begins by joining or writing it
            try:
                if self._group is group:
                    self._write(group)
            finally:
                self._leave()

    def _waiting(self) -> bool:
        with self._queue_lock:
            return self._queue > 0

    def _enter(self, deadline: float) -> None:
        if self._store.shared:
            with self._queue_lock:
                self._queue += 1
            try:
                if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0)):
                    raise StoreError(
                        f"waited {self._store.wait_s:g} s for the shared store behind this "
                        "process's other calls; try again"
                    )
            finally:
                with self._queue_lock:
                    self._queue -= 1
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
        for effect in self._deferred:
            effect()
        self._deferred = []
