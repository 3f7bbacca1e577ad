"""What became of each field of a call's fault: the record the journal, its store codec and the
inspector keep. A leaf: the journal records fault parts without the code that fires them
(`faults`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class FaultPart:
    """One field of a fault (`dropAfter: 2`) and whether it fired on the call; `why` says why it
    did not (or not yet, while its stream is open)."""

    kind: str  # a field of the cassette's `fault`: status, body, delayMs, dropAfter, ...
    value: Any  # that field's value: the status, the body, the ms, the count of events
    fired: bool = False
    why: str | None = None
    error: str | None = None  # errorAfter: the error it sends
    settled: bool = True  # False while its stream may still fire it

    def view(self) -> dict[str, Any]:
        """The part as JSON: `{"kind": "dropAfter", "after": 2, "fired": true}`."""
        key = {"status": "status", "body": "body", "delayMs": "ms"}.get(self.kind, "after")
        out: dict[str, Any] = {"kind": self.kind, key: self.value, "fired": self.fired}
        if self.error is not None:
            out["error"] = self.error
        if self.why is not None:
            out["why"] = self.why
        return out

    def describe(self) -> str:
        """`dropAfter 2 fired`, `delayMs 50 not fired: …` for reports and the inspector."""
        words = f"{self.kind} {self.value}"
        return f"{words} fired" if self.fired else f"{words} not fired: {self.why}"
