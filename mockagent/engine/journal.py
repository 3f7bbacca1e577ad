"""The journal: every call, the interaction it matched or the near-miss report."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from mockagent.engine.call import Call
from mockagent.engine.delivery import DeliveryLog
from mockagent.engine.diagnostics import NearMissReport
from mockagent.engine.faults import FaultPart


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


class Journal:
    """Calls in arrival order."""

    def __init__(self) -> None:
        self._entries: list[JournalEntry] = []
        self.deliveries = DeliveryLog()  # webhook POSTs (the last ones), from the delivery workers

    @property
    def entries(self) -> list[JournalEntry]:
        return self._entries

    def record(self, call: Call, seq: int | None = None, **outcome: Any) -> JournalEntry:
        """Add a call; `seq` is its number from a shared `Numbering` (default: its place here)."""
        number = len(self._entries) + 1 if seq is None else seq
        entry = JournalEntry(number, call.operation, call.binding, call.params, **outcome)
        self._entries.append(entry)
        return entry

    def unmatched(self) -> list[JournalEntry]:
        return [e for e in self.entries if not e.matched]
