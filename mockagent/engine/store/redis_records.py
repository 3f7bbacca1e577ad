"""What a shared store counts and journals, in Redis: the use count of each interaction and the
last calls of every process, numbered in one sequence.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from mockagent.engine.call import Call
from mockagent.engine.codec import dump_entry, load_entry
from mockagent.engine.journal import JOURNAL_BYTES, Journal, JournalEntry, kept
from mockagent.engine.store.client import Client, Command
from mockagent.engine.store.commit import NUMBERED, SPEND
from mockagent.engine.webhooks.delivery_log import DeliveryLog


class RedisUses(Sequence[int]):
    """Use counts, read from Redis as needed and added to it when the call is written; those of
    the interactions in `limits` (index → `times`) only while they stay within it."""

    def __init__(self, client: Client, key: str, size: int, limits: dict[int, int]) -> None:
        self._redis, self._key, self._size, self._limits = client, key, size, limits
        self._read: dict[int, int] = {}  # as read from Redis in this transaction
        self._added: dict[int, int] = {}

    def begin(self) -> None:
        self._read, self._added = {}, {}

    def again(self) -> None:
        """The call is computed again from what it read: its uses are not spent yet."""
        self._added = {}

    def add(self, index: int) -> None:
        self._added[index] = self._added.get(index, 0) + 1

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index not in self._read:
            self._read[index] = int(self._redis.call("HGET", self._key, str(index)) or 0)
        return self._read[index] + self._added.get(index, 0)

    def __iter__(self) -> Iterator[int]:
        flat = self._redis.call("HGETALL", self._key)
        stored = {int(k): int(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
        return iter([stored.get(i, 0) + self._added.get(i, 0) for i in range(self._size)])

    def __len__(self) -> int:
        return self._size

    def flush(self) -> list[Command]:
        """The writes that spend this call's uses."""
        limits = self._limits
        commands: list[Command] = [
            ("HINCRBY", self._key, str(i), n) for i, n in self._added.items() if i not in limits
        ]
        spent = [f for i, n in self._added.items() if i in limits for f in (str(i), n, limits[i])]
        if spent:  # refused, with nothing written, if one would go past its `times`
            commands.append((SPEND, self._key, *spent))
        return commands


NUMBERING_KEY = "mockagent:journal:seq"
"""The count every agent's journal in one Redis database numbers its calls from."""


class RedisJournal(Journal):
    """The last `size` journal entries in a Redis list within about `budget` bytes (`<key>_bytes`
    counts them), each with its number in NUMBERING_KEY's sequence, and the counts over every call
    beside it (`<key>` → `calls`, `answered`); webhook deliveries stay with the process that sent
    them."""

    def __init__(self, client: Client, key: str, size: int, budget: int = JOURNAL_BYTES) -> None:
        self.deliveries = DeliveryLog()  # not Journal.__init__: the entries live in Redis
        self._redis, self._key, self.size, self.budget = client, key, size, budget
        base = key.removesuffix("journal")
        self._calls_key, self._answered_key = base + "calls", base + "answered"
        self._bytes_key = key + "_bytes"
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
            (NUMBERED, self._key, NUMBERING_KEY, self._bytes_key, self.size, self.budget, *entries),
            ("INCRBY", self._calls_key, len(entries)),
            *[("HINCRBY", self._answered_key, name, n) for name, n in named.items()],
        ]
