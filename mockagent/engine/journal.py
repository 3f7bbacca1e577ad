"""The journal: every call, the interaction it matched or the near-miss report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent.engine.call import Call
from mockagent.engine.delivery import Delivery
from mockagent.engine.diagnostics import NearMissReport


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

    @property
    def matched(self) -> bool:
        """False only for a call that no interaction answered."""
        return self.report is None


class Journal:
    """Calls in arrival order."""

    def __init__(self) -> None:
        self._entries: list[JournalEntry] = []
        self.deliveries: list[Delivery] = []  # webhook POSTs, appended by the delivery workers

    @property
    def entries(self) -> list[JournalEntry]:
        return self._entries

    def record(self, call: Call, **outcome: Any) -> JournalEntry:
        entry = JournalEntry(len(self._entries) + 1, call.operation, call.binding, call.params, **outcome)
        self._entries.append(entry)
        return entry

    def unmatched(self) -> list[JournalEntry]:
        return [e for e in self.entries if not e.matched]
