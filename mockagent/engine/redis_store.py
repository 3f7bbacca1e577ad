"""A task store in Redis, shared by every process that serves the same cassette.

A transaction takes a lock in Redis, loads the engine's counters (clock, ids, reset generation)
and then the tasks it touches, and writes everything back in one round trip as it ends. So
worker processes and hosts answer one after another as a single agent would, poll counters and
the journal included. Needs the `redis` package (`pip install mockagent[scale]`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, MutableSequence
from typing import Any

import redis

from mockagent.engine.call import Call
from mockagent.engine.codec import StepTable, dump_entry, dump_task, load_entry, load_task
from mockagent.engine.delivery import Delivery
from mockagent.engine.journal import Journal, JournalEntry
from mockagent.engine.tasks import Task
from mockagent.engine.taskstore import Counters, StoreFactory, TaskStore
from mockagent.errors import StoreError

LOCK_MS = 30_000  # a process that dies holding the lock blocks the others this long at most
POLL_S = 0.02  # streams look for events made by other processes this often
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class RedisStore(TaskStore):
    """Keys under `mockagent:<key>:`: head (counters), task:<id>, order, names, uses, journal, lock."""

    shared = True
    poll_s = POLL_S

    def __init__(self, client: redis.Redis, url: str, key: str, interactions: list[Any], fresh: bool) -> None:
        self._redis = client
        self._url = url
        self._prefix = f"mockagent:{key}:"
        self._steps = StepTable(interactions)
        self._fresh = fresh
        self._token = uuid.uuid4().hex
        self._release = client.register_script(_RELEASE)
        self._open = False
        self._loaded: dict[str, Task] = {}
        self._saved: dict[str, str] = {}  # what each loaded task was, so unchanged ones are not written
        self._created: list[Task] = []
        super().__init__(len(interactions))

    def _k(self, name: str) -> str:
        return self._prefix + name

    # -- transactions -------------------------------------------------------------------------

    def attach(self, counters: Counters) -> None:
        """Start afresh (the first process) or join the state another process started."""
        fresh = (counters.clock.state(), counters.ids.count, counters.generation)
        try:
            self._redis.ping()
        except redis.RedisError as exc:
            raise StoreError(f"cannot use the store at {self._url}: {exc}") from None
        self.begin(counters)  # joining: the counters now hold what the store had, if anything
        if self._fresh:
            self._wipe()
            clock, counters.ids.count, counters.generation = fresh
            counters.clock.restore(*clock)
        self.commit(counters)

    def begin(self, counters: Counters) -> None:
        pause = 0.0002
        while True:  # one round trip per try: the lock and the counters together
            pipe = self._redis.pipeline(transaction=False)
            pipe.set(self._k("lock"), self._token, nx=True, px=LOCK_MS)
            pipe.hgetall(self._k("head"))
            pipe.llen(self._k("journal"))
            acquired, head, journal_length = pipe.execute()
            if acquired:
                break
            time.sleep(pause)  # another process holds the lock for one call: back off briefly
            pause = min(pause * 2, 0.005)
        self._open = True
        self._loaded, self._saved, self._created = {}, {}, []
        self._journal.begin(journal_length)
        self._uses.begin()
        if head:
            counters.clock.restore(float(head["offset"]), float(head["advanced"]), float(head["origin"]))
            counters.ids.count = int(head["ids"])
            counters.generation = int(head["generation"])

    def commit(self, counters: Counters) -> None:
        pipe = self._redis.pipeline(transaction=False)
        offset, advanced, origin = counters.clock.state()
        pipe.hset(self._k("head"), mapping={"offset": repr(offset), "advanced": repr(advanced),
                                            "origin": repr(origin), "ids": counters.ids.count,
                                            "generation": counters.generation})
        for task_id, task in self._loaded.items():
            text = dump_task(task, self._steps)
            if text != self._saved.get(task_id):
                pipe.set(self._k(f"task:{task_id}"), text)
        for task in self._created:
            pipe.rpush(self._k("order"), task.id)
            if task.name is not None:
                pipe.hset(self._k("names"), task.name, task.id)
        self._uses.flush(pipe)
        self._journal.flush(pipe)
        self._release(keys=[self._k("lock")], args=[self._token], client=pipe)
        self._open = False
        self._loaded, self._saved, self._created = {}, {}, []
        pipe.execute()

    def clear(self) -> None:
        """Forget everything; in Redis only inside a transaction (the engine's reset)."""
        self._journal = RedisJournal(self._redis, self._k("journal"))
        self._uses = RedisUses(self._redis, self._k("uses"), self._size)
        self.journal: Journal = self._journal
        self.uses: MutableSequence[int] = self._uses
        if self._open:
            self._wipe()

    def _wipe(self) -> None:
        ids = self._order()
        pipe = self._redis.pipeline(transaction=False)
        for start in range(0, len(ids), 1000):
            pipe.delete(*(self._k(f"task:{i}") for i in ids[start:start + 1000]))
        pipe.delete(*(self._k(name) for name in ("order", "names", "uses", "journal", "head")))
        pipe.execute()
        self._loaded, self._saved, self._created = {}, {}, []
        self._journal.begin(0)
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
            text = self._redis.get(self._k(f"task:{task_id}"))
            if text is None:
                return None
            self._loaded[task_id] = load_task(text, self._steps)
            self._saved[task_id] = str(text)
        return self._loaded[task_id]

    def peek(self, task_id: str) -> Task | None:
        text = self._redis.get(self._k(f"task:{task_id}"))
        return None if text is None else load_task(text, self._steps)

    def named(self, name: Any) -> Task | None:
        known = next((t for t in self._created if t.name is not None and t.name == name), None)
        if known is not None or not isinstance(name, str):
            return known
        task_id = self._redis.hget(self._k("names"), name)
        return None if task_id is None else self.get(str(task_id))

    def all(self) -> list[Task]:
        ids = self._order()
        missing = [i for i in ids if i not in self._loaded]
        texts = self._redis.mget([self._k(f"task:{i}") for i in missing]) if missing else []
        for task_id, text in zip(missing, texts, strict=True):
            if text is not None:
                self._loaded[task_id] = load_task(text, self._steps)
                self._saved[task_id] = str(text)
        return [self._loaded[i] for i in ids if i in self._loaded] + self._created

    def __len__(self) -> int:
        return int(self._redis.llen(self._k("order"))) + len(self._created)

    def _order(self) -> list[str]:
        """Ids of the tasks saved so far, oldest first."""
        return [str(task_id) for task_id in self._redis.lrange(self._k("order"), 0, -1)]

    def close(self) -> None:
        self._redis.close()


class RedisUses(MutableSequence[int]):
    """Use counts, read from Redis as needed and added to it when the transaction ends."""

    def __init__(self, client: redis.Redis, key: str, size: int) -> None:
        self._redis, self._key, self._size = client, key, size
        self._seen: dict[int, int] = {}
        self._added: dict[int, int] = {}

    def begin(self) -> None:
        self._seen, self._added = {}, {}

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index not in self._seen:
            self._seen[index] = int(self._redis.hget(self._key, str(index)) or 0) + self._added.get(index, 0)
        return self._seen[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self._added[index] = self._added.get(index, 0) + value - self[index]
        self._seen[index] = value

    def add(self, index: int) -> None:
        self._added[index] = self._added.get(index, 0) + 1
        if index in self._seen:
            self._seen[index] += 1

    def __iter__(self) -> Iterator[int]:
        stored = {int(k): int(v) for k, v in self._redis.hgetall(self._key).items()}
        return iter([self._seen.get(i, stored.get(i, 0) + self._added.get(i, 0)) for i in range(self._size)])

    def __len__(self) -> int:
        return self._size

    def __delitem__(self, index: Any) -> None:
        raise TypeError("use counts cannot be deleted")

    def insert(self, index: int, value: int) -> None:
        raise TypeError("use counts cannot be inserted")

    def flush(self, pipe: Any) -> None:
        for index, added in self._added.items():
            pipe.hincrby(self._key, str(index), added)
        self.begin()


class RedisJournal(Journal):
    """Journal entries in a Redis list; webhook deliveries stay with the process that sent them."""

    def __init__(self, client: redis.Redis, key: str) -> None:
        self.deliveries: list[Delivery] = []  # not Journal.__init__: the entries live in Redis
        self._redis, self._key = client, key
        self._length = 0
        self._pending: list[JournalEntry] = []

    def begin(self, length: int) -> None:
        self._length, self._pending = length, []

    def record(self, call: Call, **outcome: Any) -> JournalEntry:
        entry = JournalEntry(self._length + len(self._pending) + 1, call.operation, call.binding,
                             call.params, **outcome)
        self._pending.append(entry)
        return entry

    @property
    def entries(self) -> list[JournalEntry]:
        stored = self._redis.lrange(self._key, 0, -1)
        return [load_entry(text, seq) for seq, text in enumerate(stored, 1)] + self._pending

    def flush(self, pipe: Any) -> None:
        if self._pending:
            pipe.rpush(self._key, *(dump_entry(entry) for entry in self._pending))
        self._pending = []


def redis_store(url: str, fresh: bool = True) -> StoreFactory:
    """A factory of Redis stores on `url`; `fresh` wipes what an earlier run left there."""
    client = redis.Redis.from_url(url, decode_responses=True)

    def make(key: str, interactions: Any) -> TaskStore:
        return RedisStore(client, url, key, list(interactions), fresh)

    return make
