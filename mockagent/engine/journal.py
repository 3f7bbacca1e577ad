"""The journal: the latest calls, the interaction each matched or the near-miss report.

It keeps the last `size` calls (WireMock's `maxRequestJournalEntries`) within a byte budget
(`budget`, about JOURNAL_BYTES: an entry keeps at most about 64 KB of its call, see
`journal_cut`), so a long run's memory stays bounded whatever the calls hold, and says how many
older ones it dropped. What must stay exact however long the
run is kept apart from the entries: how many calls each interaction answered (`answered`), and
which fault kinds fired on calls no longer kept (`fired_before`).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from mockagent.engine.call import Call
from mockagent.engine.diagnostics import NearMissReport
from mockagent.engine.fault_part import FaultPart
from mockagent.engine.journal_cut import cut, entry_size, kept_report
from mockagent.engine.webhooks.delivery_log import DeliveryLog


@dataclass(frozen=True)
class JournalEntry:
    """One call as the engine saw it."""

    seq: int
    operation: str
    binding: str
    params: dict[str, Any]
    interaction: str | None = None
    error: str | None = None
    report: NearMissReport | None = None
    faults: list[FaultPart] = field(default_factory=list)
    """Each field of the matched interaction's `fault` and whether it fired on this call (a
    stream's parts learn it as the stream goes); empty when the interaction has no fault."""

    @property
    def matched(self) -> bool:
        """False only for a call that no interaction answered."""
        return self.report is None

    @property
    def fired(self) -> list[str]:
        """The kinds of the fault's parts that fired (`["dropAfter"]`), in the fault's order."""
        return [part.kind for part in self.faults if part.fired]


class Numbering:
    """Sequence numbers that the journals of several engines share (the agents of one folder), so
    that a call's number says where it came among the calls to every agent."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()  # the engines' own locks do not exclude one another

    def take(self) -> int:
        """The next number, from 1."""
        with self._lock:
            self._last += 1
            return self._last

    def restart(self) -> None:
        """Count from 1 again (every journal that shares the numbering was cleared)."""
        with self._lock:
            self._last = 0


JOURNAL_SIZE = 10_000
"""How many calls a journal keeps by default (`serve --journal-size`)."""
JOURNAL_BYTES = 64 * 2**20
"""About how much memory a journal's entries take at most (64 MB): past it, the oldest go."""


def kept(call: Call, seq: int, outcome: dict[str, Any]) -> JournalEntry:
    """The entry the journal keeps of `call`: its params and near-miss report cut to a size."""
    report = kept_report(outcome.pop("report", None))
    return JournalEntry(
        seq, call.operation, call.binding, cut(call.params), report=report, **outcome
    )


class Journal:
    """The last `size` calls in arrival order within about `budget` bytes (the newest is always
    kept), and exact counts over every call."""

    def __init__(self, size: int = JOURNAL_SIZE, budget: int = JOURNAL_BYTES) -> None:
        if size < 0:
            raise ValueError(f"a journal keeps 0 calls or more, not {size}")
        self.size, self.budget = size, budget
        self._entries: deque[tuple[JournalEntry, int]] = deque()  # each with its entry_size
        self._bytes = 0
        self._recorded = 0  # every call since the last reset, kept or dropped
        self._answered: dict[str, int] = {}  # interaction name → calls it answered
        self._fired: dict[str, set[str]] = {}  # interaction name → fault kinds of dropped calls
        self.deliveries = DeliveryLog()  # webhook POSTs (the last ones), from the delivery workers

    @property
    def entries(self) -> list[JournalEntry]:
        """The calls kept, oldest first (the last `size`)."""
        return [entry for entry, _ in self._entries]

    @property
    def recorded(self) -> int:
        """How many calls since the last reset, kept or dropped."""
        return self._recorded

    @property
    def dropped(self) -> int:
        """How many older calls are no longer kept."""
        return self._recorded - len(self._entries)

    def record(self, call: Call, seq: int | None = None, **outcome: Any) -> JournalEntry:
        """Add a call; `seq` is its number from a shared `Numbering` (default: its place here)."""
        self._recorded += 1
        number = self._recorded if seq is None else seq
        entry = kept(call, number, outcome)
        if entry.interaction is not None:
            self._answered[entry.interaction] = self._answered.get(entry.interaction, 0) + 1
        cost = entry_size(entry.params, entry.report)
        self._entries.append((entry, cost))
        self._bytes += cost
        while len(self._entries) > self.size or (
            self._bytes > self.budget and len(self._entries) > 1
        ):
            gone, gone_cost = self._entries.popleft()
            self._bytes -= gone_cost
            self._drop(gone)
        return entry

    def _drop(self, entry: JournalEntry) -> None:
        if entry.interaction is None or not entry.faults:
            return
        kinds = {part.kind for part in entry.faults if part.fired or not part.settled}
        if kinds:  # an open stream's part may still fire: counted as fired, never as a miss
            self._fired.setdefault(entry.interaction, set()).update(kinds)

    def answered(self, name: str) -> int:
        """How many calls interaction `name` answered, the dropped ones included."""
        return self._answered.get(name, 0)

    def fired_before(self, name: str) -> set[str]:
        """The fault kinds that fired (or might still) on dropped calls `name` answered."""
        return set(self._fired.get(name, ()))

    def unmatched(self) -> list[JournalEntry]:
        return [e for e in self.entries if not e.matched]
