"""A task store in Redis, shared by every process that serves the same cassette.

A transaction takes the store's lock (`lease.Lease`) and, in the same round trip, loads the
engine's counters (clock, ids, reset generation) and the task the call names; it loads other
tasks as it needs them and writes everything back in one round trip as it ends, refused if its
lease ran out meanwhile or a task it writes was written since it read it (each task's version).
So worker processes and hosts answer one after another as a single agent would, poll counters and
the journal included.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from mockagent.engine.call import Call
from mockagent.engine.codec import StepTable, dump_entry, dump_task, load_entry, load_task
from mockagent.engine.journal import Journal, JournalEntry, kept
from mockagent.engine.store.lease import (
    NUMBERED,
    SPEND,
    VERSIONED,
    Client,
    Command,
    Lease,
    settings,
)
from mockagent.engine.store.memory import Counters, StoreFactory, TaskStore
from mockagent.engine.tasks import Task
from mockagent.engine.webhooks.delivery_log import DeliveryLog

log = logging.getLogger("mockagent")
POLL_S = 0.02  # streams look for events made by other processes this often
CHUNK = 500  # fields per write command: a script's commands have a bounded number of arguments
DATA = ("head", "tasks", "versions", "order", "names", "uses", "journal", "calls", "answered")


class RedisStore(TaskStore):
    """Keys under `mockagent:<key>:`: head (the counters, a hash), tasks (each task's JSON by id),
    versions (each task's version by id: how often it was written, checked as it is written
    again), order (task ids, oldest first), names (task id by name), uses (count by interaction
    index), journal (a list of the last calls), calls (how many calls, kept or not), answered
    (calls by interaction name); and the lock's own (see `Lease`). Finished tasks are not
    evicted."""

    shared = True
    kind = "redis"
    poll_s = POLL_S

    def __init__(
        self, client: Client, key: str, interactions: list[Any], fresh: bool, lease: Lease
    ) -> None:
        self._redis = client
        self._prefix = f"mockagent:{key}:"
        self._lease = lease
        self.wait_s = lease.wait_s
        self._steps = StepTable(interactions)
        # Each use of these is spent by the commit script only while below the interaction's
        # `times`: another process may have used it up since this one read the count.
        self._limits = {i: it.times for i, it in enumerate(interactions) if it.times is not None}
        self._fresh = fresh
        self._token: str | None = None  # the lock's, while this process holds it
        self._count = 0  # tasks saved before the open transaction
        self._loaded: dict[str, Task] = {}
        self._saved: dict[str, str] = {}  # each loaded task as saved
        self._versions: dict[str, int] = {}  # each loaded task's version as read
        self._fetched: dict[str, list[str | None]] = {}  # read with the lock, not loaded yet
        self._created: list[Task] = []
        super().__init__(len(interactions))

    def _k(self, name: str) -> str:
        return self._prefix + name

    @property
    def _open(self) -> bool:
        return self._token is not None

    # -- transactions -------------------------------------------------------------------------

    def attach(self, counters: Counters) -> None:
        """Start afresh (the first process) or join the state another process started."""
        fresh = (counters.clock.state(), counters.ids.count, counters.generation)
        if self._fresh:  # nobody else is serving yet: whoever held the lock is gone
            self._lease.drop()
        self.begin(counters)  # joining: the counters now hold what the store had, if anything
        if self._fresh:
            self._wipe()
            self._redis.call("DEL", NUMBERING_KEY)  # every agent does so as the server starts
            clock, counters.ids.count, counters.generation = fresh
            counters.clock.restore(*clock)
        self.commit(counters)

    def begin(self, counters: Counters, task_id: Any = None, deadline: float | None = None) -> None:
        reads: list[Command] = [("HGETALL", self._k("head")), ("LLEN", self._k("order"))]
        named = task_id if isinstance(task_id, str) else None
        if named is not None:
            reads += [("HGET", self._k("tasks"), named), ("HGET", self._k("versions"), named)]
        if deadline is None:
            deadline = time.monotonic() + self.wait_s
        self._token, (head, count, *task) = self._lease.acquire(reads, deadline)
        self._count = int(count)  # tasks saved before this transaction: no round trip per new task
        self._loaded, self._saved, self._versions, self._created = {}, {}, {}, []
        self._fetched = {named: task} if named is not None else {}  # loaded when asked for
        self._journal.begin()
        self._uses.begin()
        if head:
            fields = dict(zip(head[::2], head[1::2], strict=True))
            counters.clock.restore(
                float(fields["offset"]), float(fields["advanced"]), float(fields["origin"])
            )
            counters.ids.count = int(fields["ids"])
            counters.generation = int(fields["generation"])

    def commit(self, counters: Counters) -> None:
        offset, advanced, origin = counters.clock.state()
        head = ("offset", repr(offset), "advanced", repr(advanced), "origin", repr(origin))
        counts = ("ids", counters.ids.count, "generation", counters.generation)
        writes: list[Command] = [("HSET", self._k("head"), *head, *counts)]
        fields: list[Any] = []  # each changed task with the version it was read at (new: 0)
        for task_id, task in self._loaded.items():
            text = dump_task(task, self._steps)
            if text != self._saved.get(task_id):
                fields += (task_id, self._versions.get(task_id, 0), text)
        if fields:  # refused, with nothing written, if any of them was written meanwhile
            writes.append((VERSIONED, self._k("tasks"), self._k("versions"), *fields))
        writes += _chunked(("RPUSH", self._k("order")), [task.id for task in self._created], 1)
        named = [f for t in self._created if t.name is not None for f in (t.name, t.id)]
        writes += _chunked(("HSET", self._k("names")), named, 2)
        writes += self._uses.flush() + self._journal.flush()
        token, self._token = self._token, None
        if token is None:
            return
        try:
            self._lease.commit(token, writes, keep=False)
        finally:
            self._forget()

    def _forget(self) -> None:
        self._loaded, self._saved, self._versions, self._fetched = {}, {}, {}, {}
        self._created = []

    def clear(self) -> None:
        """Forget everything; in Redis only inside a transaction (the engine's reset)."""
        self._journal = RedisJournal(self._redis, self._k("journal"), self.journal_size)
        self._uses = RedisUses(self._redis, self._k("uses"), self._size, self._limits)
        self.journal: Journal = self._journal
        self.uses: Sequence[int] = self._uses
        if self._open:
            self._wipe()

    def _wipe(self) -> None:
        """Delete the data now, as a write of the open transaction (refused if it lost the lock),
        which goes on holding it."""
        token, self._token = self._token, None
        assert token is not None
        self._lease.commit(token, [("DEL", *(self._k(name) for name in DATA))], keep=True)
        self._token = token
        self._count = 0
        self._forget()
        self._journal.begin()
        self._uses.begin()

    def use(self, index: int) -> None:
        self._uses.add(index)  # no read: a use count is only read when `times` limits it

    def unlimited(self) -> None:
        self._limits.clear()

    # -- tasks --------------------------------------------------------------------------------

    def add(self, task: Task) -> None:
        self._loaded[task.id] = task
        self._created.append(task)

    def next_seq(self) -> int:
        return len(self) + 1

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
            if task_id in self._fetched:  # read as the transaction began
                text, version = self._fetched.pop(task_id)
            else:
                text, version = self._redis.pipeline(
                    ("HGET", self._k("tasks"), task_id), ("HGET", self._k("versions"), task_id)
                )
            if text is None:
                return None
            self._keep(task_id, text, version)
        return self._loaded[task_id]

    def _keep(self, task_id: str, text: str, version: str | None) -> None:
        self._loaded[task_id] = load_task(text, self._steps)
        self._saved[task_id] = text
        self._versions[task_id] = int(version or 0)

    def peek(self, task_id: str) -> Task | None:
        # As saved: not what a call of this lease changed, whose batch may yet be refused.
        text = self._redis.call("HGET", self._k("tasks"), task_id)
        return None if text is None else load_task(text, self._steps)

    def named(self, name: Any) -> Task | None:
        known = next((t for t in self._created if t.name is not None and t.name == name), None)
        if known is not None or not isinstance(name, str):
            return known
        task_id = self._redis.call("HGET", self._k("names"), name)
        return None if task_id is None else self.get(task_id)

    def all(self) -> list[Task]:
        ids = self._order()
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
                self._keep(task_id, text, version)
        return [self._loaded[i] for i in ids if i in self._loaded] + self._created

    def __len__(self) -> int:
        saved = self._count if self._open else int(self._redis.call("LLEN", self._k("order")))
        return saved + len(self._created)

    def _order(self) -> list[str]:
        """Ids of the tasks saved so far, oldest first."""
        return list(self._redis.call("LRANGE", self._k("order"), 0, -1))

    def ping(self, timeout_s: float) -> None:
        self._redis.ping(timeout_s)

    def close(self) -> None:
        self._redis.close()


def _chunked(command: Command, items: list[Any], size: int) -> list[Command]:
    """`command` with `items` appended, split so that no command has more than CHUNK of them
    (`size`: items that belong together, such as a field and its value)."""
    step = CHUNK * size
    return [command + tuple(items[i : i + step]) for i in range(0, len(items), step)]


class RedisUses(Sequence[int]):
    """Use counts, read from Redis as needed and added to it when the transaction ends; those of
    the interactions in `limits` (index → `times`) only while they stay within it."""

    def __init__(self, client: Client, key: str, size: int, limits: dict[int, int]) -> None:
        self._redis, self._key, self._size, self._limits = client, key, size, limits
        self._seen: dict[int, int] = {}
        self._added: dict[int, int] = {}

    def begin(self) -> None:
        self._seen, self._added = {}, {}

    def add(self, index: int) -> None:
        self._added[index] = self._added.get(index, 0) + 1
        if index in self._seen:
            self._seen[index] += 1

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index not in self._seen:
            stored = self._redis.call("HGET", self._key, str(index))
            self._seen[index] = int(stored or 0) + self._added.get(index, 0)
        return self._seen[index]

    def __iter__(self) -> Iterator[int]:
        flat = self._redis.call("HGETALL", self._key)
        stored = {int(k): int(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
        return iter(
            [self._seen.get(i, stored.get(i, 0) + self._added.get(i, 0)) for i in range(self._size)]
        )

    def __len__(self) -> int:
        return self._size

    def flush(self) -> list[Command]:
        limits = self._limits
        commands: list[Command] = [
            ("HINCRBY", self._key, str(i), n) for i, n in self._added.items() if i not in limits
        ]
        spent = [f for i, n in self._added.items() if i in limits for f in (str(i), n, limits[i])]
        if spent:  # refused, with nothing written, if one would go past its `times`
            commands.append((SPEND, self._key, *spent))
        self.begin()
        return commands


NUMBERING_KEY = "mockagent:journal:seq"
"""The count every agent's journal in one Redis database numbers its calls from."""


class RedisJournal(Journal):
    """The last `size` journal entries in a Redis list, each with its number in NUMBERING_KEY's
    sequence, and the counts over every call beside it (`<key>` → `calls`, `answered`); webhook
    deliveries stay with the process that sent them."""

    def __init__(self, client: Client, key: str, size: int) -> None:
        self.deliveries = DeliveryLog()  # not Journal.__init__: the entries live in Redis
        self._redis, self._key, self.size = client, key, size
        base = key.removesuffix("journal")
        self._calls_key, self._answered_key = base + "calls", base + "answered"
        self._pending: list[JournalEntry] = []

    def begin(self) -> None:
        self._pending = []

    def record(self, call: Call, seq: int | None = None, **outcome: Any) -> JournalEntry:
        # `seq` is not kept: Redis numbers the entry as the transaction commits.
        entry = kept(call, 0, outcome)  # cut as in memory: each stored entry stays small
        self._pending.append(entry)
        return entry

    @property
    def entries(self) -> list[JournalEntry]:
        stored = []
        for text in self._redis.call("LRANGE", self._key, 0, -1):
            seq, _, entry = text.partition(" ")
            stored.append(load_entry(entry, int(seq)))
        # Not committed yet, so not numbered yet: after the last number this journal knows.
        last = stored[-1].seq if stored else 0
        pending = [replace(entry, seq=last + i) for i, entry in enumerate(self._pending, 1)]
        return (stored + pending)[-self.size :] if self.size else []

    @property
    def recorded(self) -> int:
        return int(self._redis.call("GET", self._calls_key) or 0) + len(self._pending)

    @property
    def dropped(self) -> int:
        kept = int(self._redis.call("LLEN", self._key)) + len(self._pending)
        return self.recorded - min(kept, self.size)

    def answered(self, name: str) -> int:
        stored = self._redis.call("HGET", self._answered_key, name)
        return int(stored or 0) + sum(e.interaction == name for e in self._pending)

    def flush(self) -> list[Command]:
        pending, self._pending = self._pending, []
        if not pending:
            return []
        entries = [dump_entry(e) for e in pending]
        named: dict[str, int] = {}
        for entry in pending:
            if entry.interaction is not None:
                named[entry.interaction] = named.get(entry.interaction, 0) + 1
        # Numbered on the server as they are appended, so that the agents of a folder (and every
        # process and host sharing the store) number their calls in one sequence.
        return [
            (NUMBERED, self._key, NUMBERING_KEY, *entries),
            ("LTRIM", self._key, -self.size, -1) if self.size else ("DEL", self._key),
            ("INCRBY", self._calls_key, len(entries)),
            *[("HINCRBY", self._answered_key, name, n) for name, n in named.items()],
        ]


def redis_store(url: str, fresh: bool = True) -> StoreFactory:
    """A factory of Redis stores on `url`; `fresh` wipes what an earlier run left there. The lock's
    lease and wait bound come from the environment (`lease`); ValueError for a bad one."""
    lease_ms, wait_s = settings()
    client = Client(url, timeout_s=wait_s + 10)  # a blocking wait for the lock lasts wait_s

    def make(key: str, interactions: Any) -> TaskStore:
        prefix = f"mockagent:{key}:"
        lease = Lease(client, prefix, lease_ms, wait_s)
        return RedisStore(client, key, list(interactions), fresh, lease)

    return make
