"""Near-miss reports: why no interaction answered a call, closest interactions first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockagent.engine.mismatch import Mismatch, show

SHOWN = 3  # closest interactions in a report; more would bury the useful ones


@dataclass(frozen=True)
class Candidate:
    """One interaction and how it differs from the call."""

    name: str
    line: int | None
    mismatches: list[Mismatch]
    used_up: bool = False
    uses: int = 0
    matchers: int = 1  # how many matchers the interaction has, the operation included

    @property
    def rank(self) -> tuple[int, int, int]:
        # A used-up exact match is the most useful lead; an interaction for another operation
        # was never meant for this call; otherwise fewer differences, then more matchers that held.
        wrong_op = any(m.path == "operation" for m in self.mismatches)
        held = self.matchers - len(self.mismatches)
        return (0 if self.used_up else 2 if wrong_op else 1, len(self.mismatches), -held)


@dataclass(frozen=True)
class NearMissReport:
    """Everything a developer needs to fix an unmatched call."""

    cassette: str
    record_mode: str
    operation: str
    call: str
    candidates: list[Candidate] = field(default_factory=list)
    no_file: bool = False  # no cassette at `cassette` yet: the agent is one made to fill

    @property
    def closest(self) -> list[Candidate]:
        return sorted(self.candidates, key=lambda c: c.rank)[
            :SHOWN
        ]  # stable: cassette order breaks ties

    def headline(self) -> str:
        return f"No interaction in {self.cassette} matches this {self.operation} call"

    def hint(self) -> str:
        closest = self.closest
        if not closest and self.no_file:
            return (
                f"There is no cassette at {self.cassette} yet: record it (record mode once, "
                "with an upstream), or add an interaction whose `match` fits this call."
            )
        if not closest:
            return "The cassette has no interactions: add one whose `match` fits this call."
        best = closest[0]
        if best.used_up:
            return (  # a test that replays twice may only have missed the reset between
                f"Interaction {best.name!r} matches but was already used {best.uses} time"
                f"{'s' if best.uses != 1 else ''}: raise its `times`, add another interaction, or "
                "start the count again with `POST /_mockagent/reset` (in pytest, "
                "`mockagent.reset()`)."
            )
        if all(any(m.path == "operation" for m in c.mismatches) for c in closest):
            operation = self.operation
            return f"No interaction handles {operation}: add one with `operation: {operation}`."
        count = len(best.mismatches)
        return (
            f"The closest interaction, {best.name!r}, differs in {count} place"
            f"{'s' if count != 1 else ''}: change its `match` or the call."
        )

    def text(self) -> str:
        """The readable multi-line report, as the fixture and the server log print it."""
        lines = [f"{self.headline()} (record mode: {self.record_mode}).", f"Call: {self.call}"]
        if self.closest:
            lines.append("Closest interactions:")
        for i, cand in enumerate(self.closest, 1):
            where = f" (line {cand.line})" if cand.line else ""
            lines.append(f"  {i}. {cand.name}{where}")
            if cand.used_up:
                lines.append(
                    f"       matched, but already used up ({cand.uses} of {cand.uses} uses)"
                )
            lines.extend(f"       {m.describe()}" for m in cand.mismatches)
        lines.append(f"Hint: {self.hint()}")
        if self.record_mode == "once":  # VCR.py's CannotOverwriteExistingCassetteException
            lines.append(
                "Record mode once records only a cassette that is not there yet: record the calls "
                "it lacks with new_episodes, or all of them anew with all."
            )
        return "\n".join(lines)

    def as_detail(self) -> dict[str, Any]:
        """A typed error detail (JSON) carrying the report, for the protocol error's data."""
        return {
            "@type": "type.googleapis.com/mockagent.v1.NearMissReport",
            "cassette": self.cassette,
            "recordMode": self.record_mode,
            "call": self.call,
            "closest": [
                {
                    "interaction": c.name,
                    **({"line": c.line} if c.line else {}),
                    "usedUp": c.used_up,
                    "mismatches": [
                        {"path": m.path, "expected": m.expected, "actual": show(m.actual)}
                        for m in c.mismatches
                    ],
                }
                for c in self.closest
            ],
            "hint": self.hint(),
            "report": self.text(),
        }
