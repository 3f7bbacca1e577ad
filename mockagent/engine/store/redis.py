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

from mockagent.engine.codec import StepTable, dump_task, load_task
from mockagent.engine.journal import Journal
from mockagent.engine.store import commit
from mockagent.engine.store.client import Client, Command, wait_bound
from mockagent.engine.store.commit import VERSIONED, Counts
from mockagent.engine.store.memory import Counters, StoreFactory, TaskStore
from mockagent.engine.store.redis_changes import FALLBACK_S, Changes
from mockagent.engine.store.redis_records import NUMBERING_KEY, RedisJournal, RedisUses
from mockagent.engine.store.transactions import Again
from mockagent.engine.tasks import Task

CHUNK = 500  # fields per write command: a script's commands have a bounded number of arguments
DATA = ("head", "tasks", "versions", "order", "names", "uses", "journal", "calls", "answered")
WHY = {
    commit.CHANGED: "a task of this call was changed in {} since this process read it",
    commit.USED_UP: "an interaction's `times` was used up in {} since this process read it",
    commit.RESET: "the agent was reset in {} since this process read it",
}


class RedisStore(TaskStore):
    """Keys under `mockagent:<key>:`: head (the counters: ids, the clock's offset, advanced and
    origin, tasks made, the reset generation), tasks (each task's JSON by id), versions (each
    task's version by id: how often it was written, checked as it is written again), order (task
    ids, oldest first), names (task id by name), uses (count by interaction index), journal (a
    list of the last calls), calls (how many calls, kept or not), answered (calls by interaction
    name). Finished tasks are not evicted."""

    shared = True
    kind = "redis"
    poll_s = FALLBACK_S  # and at once when the store's channel tells of a change

    def __init__(self, client: Client, key: str, interactions: list[Any], fresh: bool) -> None:
        self._redis = client
        self._prefix = f"mockagent:{key}:"
        self.wait_s = wait_bound()
        self._steps = StepTable(interactions)
        # Each use of these is spent by the script only while below the interaction's `times`:
        # another process may have used it up since this one read the count.
        self._limits = {i: it.times for i, it in enumerate(interactions) if it.times is not None}
        self._fresh = fresh
        self._head: dict[str, str] | None = None  # the counters as this process last knew them
        self._open = False
        self._found: Counts = (0, 0.0, 0)  # the counters as the transaction found them
        self._reserved: Counts | None = None  # where the reserved counters end
        self._generation = self._made = 0
        self._advanced = 0.0
        self._wipe = False
        self._loaded: dict[str, Task] = {}
        self._saved: dict[str, tuple[str, int]] = {}  # each loaded task as read, its version
        self._fetched: dict[str, tuple[str, int]] = {}  # read, not loaded yet
        self._created: list[Task] = []
        self._changes = Changes(client.pool, self._k("changed"))
        super().__init__(len(interactions))

    def _k(self, name: str) -> str:
        return self._prefix + name

    # -- transactions -------------------------------------------------------------------------

    def attach(self, counters: Counters) -> None:
        """Start afresh (the first process) or join the state another process started."""
        if self._fresh:  # nobody else is serving yet: what an earlier run left goes
            head = self._head_of(counters, 0)
            keys = [self._k(name) for name in DATA]
            self._redis.pipeline(
                ("DEL", *keys, NUMBERING_KEY), ("HSET", self._k("head"), *_flat(head))
            )
            self._head = head
        else:
            self._head = self._read_head(counters)
        self._apply(counters, self._head)

    def _head_of(self, counters: Counters, made: int) -> dict[str, str]:
        offset, advanced, origin = counters.clock.state()
        return {
            "ids": str(counters.ids.count),
            "offset": repr(offset),
            "advanced": repr(advanced),
            "origin": repr(origin),
            "made": str(made),
            "generation": str(counters.generation),
        }

    def _read_head(self, counters: Counters) -> dict[str, str]:
        """The counters in Redis; this process's own when there are none (a Redis that lost its
        data), set only where still missing: the first process to do so sets them for all."""
        head = _fields(self._redis.call("HGETALL", self._k("head")))
        if not head:
            mine = self._head_of(counters, self._made)
            missing = [("HSETNX", self._k("head"), k, v) for k, v in mine.items()]
            *_, flat = self._redis.pipeline(*missing, ("HGETALL", self._k("head")))
            head = _fields(flat)
        return head

    def _apply(self, counters: Counters, head: dict[str, str]) -> None:
        offset, advanced, origin = float(head["offset"]), float(head["advanced"]), head["origin"]
        counters.clock.restore(offset, advanced, float(origin))
        counters.ids.count = int(head["ids"])
        counters.generation = self._generation = int(head["generation"])
        self._made = int(head["made"])
        self._found = (counters.ids.count, offset, self._made)
        self._advanced = advanced

    def begin(self, counters: Counters, task_id: Any = None) -> None:
        named = task_id if isinstance(task_id, str) else None
        reads: list[Command] = []
        if self._head is None or named is not None:  # a task is read with the counters
            reads.append(("HGETALL", self._k("head")))
        if named is not None:
            reads += [("HGET", self._k("tasks"), named), ("HGET", self._k("versions"), named)]
        self._forget()
        if reads:
            flat, *task = self._redis.pipeline(*reads)
            self._head = _fields(flat) or self._read_head(counters)
            if named is not None and task[0] is not None:
                self._fetched[named] = (task[0], int(task[1] or 0))
        assert self._head is not None
        self._apply(counters, self._head)
        self._open, self._reserved, self._wipe = True, None, False
        self._journal.begin()
        self._uses.begin()

    def commit(self, counters: Counters) -> None:
        if not self._open:
            return
        self._open = False
        offset, advanced, _ = counters.clock.state()
        left: Counts = (counters.ids.count, offset, self._made)
        writes = self._writes()
        head = {**self._head_after(left), "advanced": repr(advanced)}
        if self._wipe:  # a reset: every key afresh, the counters as the reset left them
            head = self._head_of(counters, self._made)
            keys = [self._k(name) for name in DATA]
            writes = [("DEL", *keys), ("HSET", self._k("head"), *_flat(head)), *writes]
        moved = left != self._found
        advance = 0.0 if self._wipe else advanced - self._advanced
        if not writes and not moved and not advance:
            return
        if self._reserved is not None and not _same(left, self._reserved):
            raise Again("the call used other counters when computed again", read=True)
        cas = moved and self._reserved is None and not self._wipe
        answer, bases = commit.write(
            self._redis,
            self._k("head"),
            self._generation,
            self._found,
            left if cas else None,
            advance,
            writes,
        )
        if answer == commit.WRITTEN:
            self._head = head
            return
        if bases is None:
            self._head = None  # read again, with the task the call names
            raise Again(WHY[answer].format(f"the store at {self._redis.shown}"), read=True)
        self._again(counters, bases, left)

    def _head_after(self, left: Counts) -> dict[str, str]:
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
        self._fetched.update(self._saved)  # loaded again from the same text
        self._loaded, self._saved, self._created = {}, {}, []
        self._journal.begin()
        self._uses.again()
        _, _, origin = counters.clock.state()
        counters.clock.restore(bases[1], self._advanced, origin)
        counters.ids.count, self._made = bases[0], bases[2]
        counters.generation = self._generation
        self._found, self._open = bases, True
        raise Again("the store's counters moved since this process read them", read=False)

    def _writes(self) -> list[Command]:
        """What the transaction changed: tasks with the versions they were read at (new: 0),
        the new tasks' order and names, uses and the journal."""
        fields: list[Any] = []
        for task_id, task in self._loaded.items():
            text = dump_task(task, self._steps)
            saved, version = self._saved.get(task_id, (None, 0))
            if text != saved:
                fields += (task_id, version, text)
        writes: list[Command] = []
        if fields:
            writes.append((VERSIONED, self._k("tasks"), self._k("versions"), *fields))
            # Streams of these tasks, in every process, read them again (`redis_changes`).
            writes.append(("PUBLISH", self._k("changed"), " ".join(fields[::3])))
        writes += _chunked(("RPUSH", self._k("order")), [task.id for task in self._created], 1)
        named = [f for t in self._created if t.name is not None for f in (t.name, t.id)]
        writes += _chunked(("HSET", self._k("names")), named, 2)
        return writes + self._uses.flush() + self._journal.flush()

    def _forget(self) -> None:
        self._loaded, self._saved, self._fetched, self._created = {}, {}, {}, []

    def clear(self) -> None:
        """Forget everything; in Redis as the open transaction is written (the engine's reset)."""
        self._journal = RedisJournal(self._redis, self._k("journal"), self.journal_size)
        self._uses = RedisUses(self._redis, self._k("uses"), self._size, self._limits)
        self.journal: Journal = self._journal
        self.uses: Sequence[int] = self._uses
        if self._open:
            self._wipe = True
            self._forget()
            self._made = 0

    def use(self, index: int) -> None:
        self._uses.add(index)  # no read: a use count is only read when `times` limits it

    def unlimited(self) -> None:
        self._limits.clear()

    # -- tasks --------------------------------------------------------------------------------

    def add(self, task: Task) -> None:
        self._loaded[task.id] = task
        self._created.append(task)
        self._made += 1

    def next_seq(self) -> int:
        return self._made + 1

    def finished(self, task: Task) -> None:
        """Finished tasks are not evicted from a shared store: they live in Redis, not in the
        memory of the processes that serve them."""

    def charge(self, task: Task, sent: Any) -> None:
        """Nor are tasks evicted for their size."""

    def not_found(self, task_id: Any) -> None:
        return None

    def get(self, task_id: Any) -> Task | None:
        if not isinstance(task_id, str):
            return None
        if task_id not in self._loaded:
            read = self._fetched.pop(task_id, None)
            if read is None and not self._wipe:
                text, version = self._redis.pipeline(
                    ("HGET", self._k("tasks"), task_id), ("HGET", self._k("versions"), task_id)
                )
                read = None if text is None else (text, int(version or 0))
            if read is None:
                return None
            self._keep(task_id, read)
        return self._loaded[task_id]

    def _keep(self, task_id: str, read: tuple[str, int]) -> None:
        self._loaded[task_id] = load_task(read[0], self._steps)
        self._saved[task_id] = read

    def notes(self, wake: Callable[[], None]) -> Callable[[str], int]:
        self._changes.wake = wake
        return self._changes.count

    def peek(self, task_id: str) -> Task | None:
        # As saved: not what an open call changed, whose write may yet be refused.
        text = self._redis.call("HGET", self._k("tasks"), task_id)
        return None if text is None else load_task(text, self._steps)

    def named(self, name: Any) -> Task | None:
        known = next((t for t in self._created if t.name is not None and t.name == name), None)
        if known is not None or not isinstance(name, str) or self._wipe:
            return known
        task_id = self._redis.call("HGET", self._k("names"), name)
        return None if task_id is None else self.get(task_id)

    def all(self) -> list[Task]:
        ids = [] if self._wipe else self._redis.call("LRANGE", self._k("order"), 0, -1)
        missing = [i for i in ids if i not in self._loaded]
        texts, versions = (
            self._redis.pipeline(
                ("HMGET", self._k("tasks"), *missing), ("HMGET", self._k("versions"), *missing)
            )
            if missing
            else ([], [])
        )
        for task_id, text, version in zip(missing, texts, versions, strict=True):
            if text is not None:
                self._keep(task_id, (text, int(version or 0)))
        return [self._loaded[i] for i in ids if i in self._loaded] + self._created

    def __len__(self) -> int:
        saved = 0 if self._wipe else int(self._redis.call("LLEN", self._k("order")))
        return saved + len(self._created)

    def ping(self, timeout_s: float) -> None:
        self._redis.ping(timeout_s)

    def close(self) -> None:
        self._redis.close()


def _fields(flat: list[str]) -> dict[str, str]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _flat(fields: dict[str, str]) -> list[str]:
    return [item for pair in fields.items() for item in pair]


def _same(left: Counts, reserved: Counts) -> bool:
    """Whether the counters ended where the reservation does (the offset within float error)."""
    return left[0::2] == reserved[0::2] and math.isclose(left[1], reserved[1], abs_tol=1e-6)


def _chunked(command: Command, items: list[Any], size: int) -> list[Command]:
    """`command` with `items` appended, split so that no command has more than CHUNK of them
    (`size`: items that belong together, such as a field and its value)."""
    step = CHUNK * size
    return [command + tuple(items[i : i + step]) for i in range(0, len(items), step)]


def redis_store(url: str, fresh: bool = True) -> StoreFactory:
    """A factory of Redis stores on `url`; `fresh` wipes what an earlier run left there. The
    wait bound comes from the environment (`client.wait_bound`); ValueError for a bad one."""
    client = Client(url, timeout_s=wait_bound() + 10)

    def make(key: str, interactions: Any) -> TaskStore:
        return RedisStore(client, key, list(interactions), fresh)

    return make
