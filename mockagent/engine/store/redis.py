"""A task store in Redis, shared by every process that serves the same cassette, with no lock.

A call reads what it needs (the counters, when this process has no copy of them, and the task it
names) in one round trip, is computed in this process, and is written by one script that checks
what the computation assumed (`engine/store/commit.py`): the task versions it read, the `times`
it spends, the reset generation and the counters. Calls that touch different tasks never wait for
each other; a process that stalled between its read and its write finds its write refused and
computes the call again (or, past the wait bound, answers Unavailable). So worker processes and
hosts answer as a single agent would: exact `times`, unique ids, a poll counted once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from mockagent import errors
from mockagent.engine.codec import StepTable
from mockagent.engine.journal import Journal
from mockagent.engine.store import commit
from mockagent.engine.store.client import Client, wait_bound
from mockagent.engine.store.commit import Counts
from mockagent.engine.store.memory import Counters, StoreFactory, TaskStore
from mockagent.engine.store.redis_changes import FALLBACK_S, Changes
from mockagent.engine.store.redis_head import Head, fields, flat, head_of, parsed, read_head
from mockagent.engine.store.redis_records import NUMBERING_KEY, RedisJournal, RedisUses
from mockagent.engine.store.redis_tasks import TaskTable
from mockagent.engine.store.transactions import Again
from mockagent.engine.tasks import Task

DATA = (
    *("head", "tasks", "versions", "polls", "order", "finished", "names"),
    *("gone", "gone:order", "gone:count"),
    *("uses", "journal", "journal_bytes", "calls", "answered"),
)
WHY = {
    commit.CHANGED: "a task of this call was changed in {} since this process read it",
    commit.USED_UP: "an interaction's `times` was used up in {} since this process read it",
    commit.RESET: "the agent was reset in {} since this process read it",
}


class RedisStore(TaskStore):
    """Keys under `mockagent:<key>:`: head (the counters: ids, the clock's offset, advanced and
    origin, tasks made, the reset generation), the tasks (`redis_tasks.TaskTable`: tasks,
    versions, polls, order, names), uses (count by interaction index), journal (a list of the
    last calls), calls (how many calls, kept or not), answered (calls by interaction name), and
    the channel `changed`. Past `--task-cap` tasks, the write script evicts the task that finished
    longest ago, or when none has, the oldest (`commit.CAPPED`); past the bytes of client messages,
    none (that budget is the in-memory store's)."""

    shared = True
    kind = "redis"
    poll_s = FALLBACK_S  # and at once when the store's channel tells of a change

    def __init__(self, client: Client, key: str, interactions: list[Any], fresh: bool) -> None:
        self._redis = client
        self._prefix = f"mockagent:{key}:"
        self.wait_s = wait_bound()
        # Each use of these is spent by the script only while below the interaction's `times`:
        # another process may have used it up since this one read the count.
        self._limits = {i: it.times for i, it in enumerate(interactions) if it.times is not None}
        self._fresh = fresh
        self._head: Head | None = None  # the counters as this process last knew them
        self._open = False
        self._found: Counts = (0, 0.0, 0)  # the counters as the transaction found them
        self._reserved: Counts | None = None  # where the reserved counters end
        self._generation = self._made = 0
        self._advanced = 0.0
        self._table = TaskTable(client, self._prefix, StepTable(interactions))
        self._changes = Changes(client.pool, self._k("changed"))
        super().__init__(len(interactions))

    def _k(self, name: str) -> str:
        return self._prefix + name

    # -- transactions -------------------------------------------------------------------------

    def attach(self, counters: Counters) -> None:
        """Start afresh (the first process) or join the state another process started."""
        if self._fresh:  # nobody else is serving yet: what an earlier run left goes
            head = head_of(counters, 0)
            keys = [self._k(name) for name in DATA]
            self._redis.pipeline(
                ("DEL", *keys, NUMBERING_KEY), ("HSET", self._k("head"), *flat(head))
            )
            self._head = head
        else:
            self._head = self._read_head(counters)
        self._apply(counters, self._head)

    def _read_head(self, counters: Counters) -> Head:
        """The counters in Redis, or this process's own where it lost them: the loss counts as
        a reset (a new generation), so what each process kept of the tasks goes."""
        mine = head_of(counters, self._made, self._generation + 1)
        return read_head(self._redis, self._k("head"), mine)

    def _apply(self, counters: Counters, head: Head) -> None:
        where = f"{self._k('head')} in the store at {self._redis.shown}"
        offset, advanced, origin, ids, generation, made = parsed(head, where)
        counters.clock.restore(offset, advanced, origin)
        counters.ids.count = ids
        counters.generation = self._generation = generation
        self._made = made
        self._found = (counters.ids.count, offset, self._made)
        self._advanced = advanced

    def begin(self, counters: Counters, task_id: Any = None, fresh: bool = False) -> None:
        named = task_id if isinstance(task_id, str) else None
        self._table.forget()
        if fresh:
            self._head = None
        reads = [] if named is None else self._table.reads(named)  # none: a copy is at hand
        if self._head is None or reads:  # a task is read with the counters
            stored, *task = self._redis.pipeline(("HGETALL", self._k("head")), *reads)
            self._head = fields(stored) or self._read_head(counters)
            if self._head.get("generation") != str(self._generation):  # reset elsewhere: its
                self._table.stale(everything=True)  # ids start again, so a copy may share one
                self._table.forget()
            if named is not None and task:
                self._table.fetched(named, task)
        self._apply(counters, self._head)
        self._open, self._reserved = True, None
        self._journal.begin()
        self._uses.begin()

    def commit(self, counters: Counters) -> None:
        if not self._open:
            return
        self._open = False
        offset, advanced, _ = counters.clock.state()
        left: Counts = (counters.ids.count, offset, self._made)
        writes = self._table.writes() + self._uses.flush() + self._journal.flush()
        fresh: Head | None = None
        if self._table.wiped:  # a reset: every key afresh, the counters as the reset left them
            fresh = head_of(counters, self._made)
            keys = [self._k(name) for name in DATA]
            writes = [("DEL", *keys), ("HSET", self._k("head"), *flat(fresh)), *writes]
        moved = left != self._found
        advance = 0.0 if self._table.wiped else advanced - self._advanced
        if not writes and not moved and not advance:
            return
        if self._reserved is not None and not _same(left, self._reserved):
            raise Again("the call used other counters when computed again", read=True)
        cas = moved and self._reserved is None and not self._table.wiped
        answer, bases = commit.write(
            self._redis,
            self._k("head"),
            self._generation,
            self._found,
            left if cas else None,
            advance,
            writes,
            self._advanced,
        )
        if answer == commit.WRITTEN:  # the counters as this call left them are Redis's now
            self._head = fresh or {**self._head_after(left), "advanced": repr(advanced)}
            self._table.kept()
            return
        if bases is None:
            self._table.stale(everything=answer == commit.RESET)
            self._head = None  # read again, with the task the call names
            raise Again(WHY[answer].format(f"the store at {self._redis.shown}"), read=True)
        self._again(counters, bases, left)

    def _head_after(self, left: Counts) -> Head:
        assert self._head is not None
        ids, offset, made = left
        return {**self._head, "ids": str(ids), "offset": repr(offset), "made": str(made)}

    def _again(self, counters: Counters, bases: Counts, left: Counts) -> None:
        """The counters had moved: the script reserved what the call used from `bases`. The call
        is computed again from what it read, with the counters at the bases."""
        found = self._found
        self._reserved = (
            bases[0] + left[0] - found[0],
            bases[1] + left[1] - found[1],
            bases[2] + left[2] - found[2],
        )
        self._head = self._head_after(self._reserved)
        self._table.again()
        self._journal.begin()
        self._uses.again()
        _, _, origin = counters.clock.state()
        counters.clock.restore(bases[1], self._advanced, origin)
        counters.ids.count, self._made = bases[0], bases[2]
        counters.generation = self._generation
        self._found, self._open = bases, True
        raise Again("the store's counters moved since this process read them", read=False)

    def clear(self) -> None:
        """Forget everything; in Redis as the open transaction is written (the engine's reset)."""
        self._journal = RedisJournal(self._redis, self._k("journal"), self.journal_size)
        self._uses = RedisUses(self._redis, self._k("uses"), self._size, self._limits)
        self.journal: Journal = self._journal
        self.uses: Sequence[int] = self._uses
        self._table.cap = self.task_cap
        if self._open:
            self._table.forget()
            self._table.wiped = True
            self._made = 0

    def use(self, index: int) -> None:
        self._uses.add(index)  # no read: a use count is only read when `times` limits it

    def unlimited(self) -> None:
        self._limits.clear()

    # -- tasks --------------------------------------------------------------------------------

    def add(self, task: Task) -> None:
        self._table.add(task)
        self._made += 1

    def next_seq(self) -> int:
        return self._made + 1

    def finished(self, task: Task) -> None:
        """The write script learns it from the task's state (`redis_tasks.TaskTable.writes`)."""

    def charge(self, task: Task, sent: Any) -> None:
        """Tasks are not evicted for their size from a shared store: only past the cap."""

    def not_found(self, task_id: Any) -> errors.TaskNotFound | None:
        return self._table.not_found(task_id)

    def get(self, task_id: Any) -> Task | None:
        return self._table.get(task_id)

    def notes(self, wake: Callable[[], None]) -> Callable[[str], int]:
        self._changes.wake = wake
        return self._changes.count

    def peek(self, task_id: str) -> Task | None:
        return self._table.peek(task_id)

    def named(self, name: Any) -> Task | None:
        return self._table.named(name)

    def all(self) -> list[Task]:
        return self._table.all()

    def __len__(self) -> int:
        return self._table.count()

    def ping(self, timeout_s: float) -> None:
        self._redis.ping(timeout_s)

    def close(self) -> None:
        self._redis.close()


def _same(left: Counts, reserved: Counts) -> bool:
    """Whether the counters ended where the reservation does (the offset within float error)."""
    return left[0::2] == reserved[0::2] and math.isclose(left[1], reserved[1], abs_tol=1e-6)


def redis_store(url: str, fresh: bool = True) -> StoreFactory:
    """A factory of Redis stores on `url`; `fresh` wipes what an earlier run left there. The
    wait bound comes from the environment (`client.wait_bound`); ValueError for a bad one."""
    client = Client(url, timeout_s=wait_bound() + 10)

    def make(key: str, interactions: Any) -> TaskStore:
        return RedisStore(client, key, list(interactions), fresh)

    return make
