"""A task store in Redis, shared by every process that serves the same cassette.

A transaction takes a lock in Redis, loads the engine's counters (clock, ids, reset generation)
and then the tasks it touches, and writes everything back in one round trip as it ends. So
worker processes and hosts answer one after another as a single agent would, poll counters and
the journal included.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from mockagent.engine.call import Call
from mockagent.engine.codec import StepTable, dump_entry, dump_task, load_entry, load_task
from mockagent.engine.delivery import Delivery
from mockagent.engine.journal import Journal, JournalEntry
from mockagent.engine.resp import Redis
from mockagent.engine.tasks import Task
from mockagent.engine.taskstore import Counters, StoreFactory, TaskStore
from mockagent.errors import StoreError

log = logging.getLogger("mockagent")
LOCK_WAIT_S = 30  # a process that dies holding the lock holds up the others this long at most
POLL_S = 0.02  # streams look for events made by other processes this often
Command = tuple[Any, ...]


class RedisStore(TaskStore):
    """Keys under `mockagent:<key>:`: head (counters), task:<id>, order, names, uses, journal,
    lock."""

    shared = True
    poll_s = POLL_S

    def __init__(self, client: Redis, key: str, interactions: list[Any], fresh: bool) -> None:
        self._redis = client
        self._prefix = f"mockagent:{key}:"
        self._steps = StepTable(interactions)
        self._fresh = fresh
        self._open = False
        self._count = 0  # tasks saved before the open transaction
        self._lost = False  # the connection to Redis broke: look for the lock's token again
        self._loaded: dict[str, Task] = {}
        self._saved: dict[
            str, tuple[str, int]
        ] = {}  # each loaded task as it was, and its event count
        self._fetched: dict[str, str | None] = {}  # read with the lock, not loaded yet
        self._created: list[Task] = []
        super().__init__(len(interactions))

    def _k(self, name: str) -> str:
        return self._prefix + name

    # -- transactions -------------------------------------------------------------------------

    def attach(self, counters: Counters) -> None:
        """Start afresh (the first process) or join the state another process started."""
        fresh = (counters.clock.state(), counters.ids.count, counters.generation)
        if self._fresh:  # nobody else is serving yet: a new lock, free
            self._redis.call("DEL", self._k("lock"), self._k("lock:made"))
        self._make_lock()
        self.begin(counters)  # joining: the counters now hold what the store had, if anything
        if self._fresh:
            self._wipe()
            self._redis.call("DEL", NUMBERING_KEY)  # every agent does so as the server starts
            clock, counters.ids.count, counters.generation = fresh
            counters.clock.restore(*clock)
        self.commit(counters)

    def _make_lock(self) -> None:
        """The lock's token, unless the lock exists already (made by us or another process)."""
        if self._redis.call("SET", self._k("lock:made"), 1, "NX") is not None:
            self._redis.call("RPUSH", self._k("lock"), 1)

    def begin(self, counters: Counters, task_id: Any = None) -> None:
        # The lock is a list holding one token: BLPOP takes it, waiting in line without polling,
        # and Redis runs the reads queued behind it as soon as it has it: one round trip.
        commands: list[Command] = [
            ("BLPOP", self._k("lock"), LOCK_WAIT_S),
            ("HGETALL", self._k("head")),
            ("LLEN", self._k("order")),
        ]
        named = task_id if isinstance(task_id, str) else None
        if named is not None:
            commands.append(("GET", self._k(f"task:{named}")))
        try:
            if self._lost:  # Redis may have restarted empty, without the lock's token
                self._make_lock()
                self._lost = False
            token, head, count, *task = self._redis.pipeline(*commands)
        except StoreError:
            self._lost = True
            raise
        if token is None:
            log.warning(
                "mockagent: waited %s s for the store's lock at %s; going on without it "
                "(a process that held it has died?)",
                LOCK_WAIT_S,
                self._redis.shown,
            )
        self._open = True
        self._count = int(count)  # tasks saved before this transaction: no round trip per new task
        self._loaded, self._saved, self._created = {}, {}, []
        self._fetched = {named: task[0]} if named is not None else {}  # loaded when asked for
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
        commands: list[Command] = [
            (
                "HSET",
                self._k("head"),
                "offset",
                repr(offset),
                "advanced",
                repr(advanced),
                "origin",
                repr(origin),
                "ids",
                counters.ids.count,
                "generation",
                counters.generation,
            )
        ]
        # A stream of this process reads its task without the lock, on a connection of its own:
        # when it may find news (a new task, new events), wait until Redis has them.
        news = bool(self._created)
        changed: list[str] = []  # one MSET for them all: a reply to read per command, not per task
        for task_id, task in self._loaded.items():
            text = dump_task(task, self._steps)
            saved, events = self._saved.get(task_id, ("", -1))
            if text != saved:
                changed += (self._k(f"task:{task_id}"), text)
                news = news or len(task.events) != events  # not for a poll counted: GetTask
        if changed:
            commands.append(("MSET", *changed))
        if self._created:
            commands.append(("RPUSH", self._k("order"), *(task.id for task in self._created)))
        named = [
            field
            for task in self._created
            if task.name is not None
            for field in (task.name, task.id)
        ]
        if named:
            commands.append(("HSET", self._k("names"), *named))
        commands += self._uses.flush() + self._journal.flush()
        commands.append(("RPUSH", self._k("lock"), 1))  # the token back: the next in line goes on
        self._open = False
        self._loaded, self._saved, self._fetched, self._created = {}, {}, {}, []
        try:
            if news:
                self._redis.pipeline(*commands)
            else:  # no waiting: whoever takes the token next finds everything written
                self._redis.send(*commands)
        except StoreError:
            self._lost = True
            raise

    def clear(self) -> None:
        """Forget everything; in Redis only inside a transaction (the engine's reset)."""
        self._journal = RedisJournal(self._redis, self._k("journal"))
        self._uses = RedisUses(self._redis, self._k("uses"), self._size)
        self.journal: Journal = self._journal
        self.uses: Sequence[int] = self._uses
        if self._open:
            self._wipe()

    def _wipe(self) -> None:  # the lock stays: it is held
        ids = self._order()
        commands: list[Command] = [
            ("DEL", *(self._k(f"task:{i}") for i in ids[start : start + 1000]))
            for start in range(0, len(ids), 1000)
        ]
        commands.append(
            ("DEL", *(self._k(name) for name in ("order", "names", "uses", "journal", "head")))
        )
        self._redis.pipeline(*commands)
        self._count = 0
        self._loaded, self._saved, self._fetched, self._created = {}, {}, {}, []
        self._journal.begin()
        self._uses.begin()

    def use(self, index: int) -> None:
        self._uses.add(index)  # no read: a use count is only read when `times` limits it

    # -- tasks --------------------------------------------------------------------------------

    def add(self, task: Task) -> None:
        self._loaded[task.id] = task
        self._created.append(task)

    def get(self, task_id: Any) -> Task | None:
        if not isinstance(task_id, str):
            return None
        if task_id not in self._loaded:
            if task_id in self._fetched:  # read as the transaction began
                text = self._fetched.pop(task_id)
            else:
                text = self._redis.call("GET", self._k(f"task:{task_id}"))
            if text is None:
                return None
            self._keep(task_id, text)
        return self._loaded[task_id]

    def _keep(self, task_id: str, text: str) -> None:
        task = self._loaded[task_id] = load_task(text, self._steps)
        self._saved[task_id] = (text, len(task.events))

    def peek(self, task_id: str) -> Task | None:
        if self._open and task_id in self._loaded:  # changed in this process's lease, not yet saved
            return self._loaded[task_id]
        text = self._redis.call("GET", self._k(f"task:{task_id}"))
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
        texts = (
            self._redis.call("MGET", *(self._k(f"task:{i}") for i in missing)) if missing else []
        )
        for task_id, text in zip(missing, texts, strict=True):
            if text is not None:
                self._keep(task_id, text)
        return [self._loaded[i] for i in ids if i in self._loaded] + self._created

    def __len__(self) -> int:
        saved = self._count if self._open else int(self._redis.call("LLEN", self._k("order")))
        return saved + len(self._created)

    def _order(self) -> list[str]:
        """Ids of the tasks saved so far, oldest first."""
        return list(self._redis.call("LRANGE", self._k("order"), 0, -1))

    def close(self) -> None:
        self._redis.close()


class RedisUses(Sequence[int]):
    """Use counts, read from Redis as needed and added to it when the transaction ends."""

    def __init__(self, client: Redis, key: str, size: int) -> None:
        self._redis, self._key, self._size = client, key, size
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
        commands: list[Command] = [
            ("HINCRBY", self._key, str(i), n) for i, n in self._added.items()
        ]
        self.begin()
        return commands


NUMBERING_KEY = "mockagent:journal:seq"
"""The count every agent's journal in one Redis database numbers its calls from."""

# Numbers the entries and appends them in one step on the server, so that the agents of a folder
# (and every process and host sharing the store) number their calls in one sequence.
APPEND_NUMBERED = (
    "local last = redis.call('INCRBY', KEYS[2], #ARGV) - #ARGV "
    "for i, entry in ipairs(ARGV) do redis.call('RPUSH', KEYS[1], (last + i) .. ' ' .. entry) end"
)


class RedisJournal(Journal):
    """Journal entries in a Redis list, each with its number in NUMBERING_KEY's sequence; webhook
    deliveries stay with the process that sent them."""

    def __init__(self, client: Redis, key: str) -> None:
        self.deliveries: list[Delivery] = []  # not Journal.__init__: the entries live in Redis
        self._redis, self._key = client, key
        self._pending: list[JournalEntry] = []

    def begin(self) -> None:
        self._pending = []

    def record(self, call: Call, seq: int | None = None, **outcome: Any) -> JournalEntry:
        # `seq` is not kept: Redis numbers the entry as the transaction commits.
        entry = JournalEntry(0, call.operation, call.binding, call.params, **outcome)
        self._pending.append(entry)
        return entry

    @property
    def entries(self) -> list[JournalEntry]:
        stored = []
        for text in self._redis.call("LRANGE", self._key, 0, -1):
            seq, _, entry = (text.decode() if isinstance(text, bytes) else text).partition(" ")
            stored.append(load_entry(entry, int(seq)))
        # Not committed yet, so not numbered yet: after the last number this journal knows.
        last = stored[-1].seq if stored else 0
        return stored + [replace(entry, seq=last + i) for i, entry in enumerate(self._pending, 1)]

    def flush(self) -> list[Command]:
        entries, self._pending = [dump_entry(e) for e in self._pending], []
        if not entries:
            return []
        return [("EVAL", APPEND_NUMBERED, 2, self._key, NUMBERING_KEY, *entries)]


def redis_store(url: str, fresh: bool = True) -> StoreFactory:
    """A factory of Redis stores on `url`; `fresh` wipes what an earlier run left there."""
    client = Redis(url)

    def make(key: str, interactions: Any) -> TaskStore:
        return RedisStore(client, key, list(interactions), fresh)

    return make
