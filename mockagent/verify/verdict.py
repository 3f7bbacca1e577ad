"""What `mockagent verify` says of each interaction, and of the run: a green verify means it
verified, so the interactions it skipped are counted, and a run that compared none fails."""

from __future__ import annotations

from dataclasses import dataclass, field

HOW = {
    "stream": "streamed",
    "polls": "polled",
    "gated": "gated",
}  # how a verdict says it was verified


@dataclass
class Verdict:
    """One interaction: its name, the differences found ([] if it still matches), or why it was
    skipped."""

    name: str
    differences: list[str] = field(default_factory=list)
    skipped: str = ""
    mode: str = "block"  # how its message was sent: block, stream or polls

    @property
    def ok(self) -> bool:
        return not self.differences

    def __str__(self) -> str:
        """`ok NAME`, `drift NAME` or `skip NAME (why)`, saying how a message that was not
        blocking was sent: `ok NAME (streamed)`."""
        if self.skipped:
            return f"skip {self.name} ({self.skipped})"
        how = f" ({HOW[self.mode]})" if self.mode in HOW else ""
        return f"{'ok' if self.ok else 'drift'} {self.name}{how}"


def summary(verdicts: list[Verdict]) -> str | None:
    """`verified N of M interactions; K skipped: NAME, …` when any was skipped (None when none
    was): a verify that skipped what it could not send says so at the end, not only on the
    skipped lines."""
    skipped = [v.name for v in verdicts if v.skipped]
    if not skipped:
        return None
    done = len(verdicts) - len(skipped)
    return (
        f"verified {done} of {len(verdicts)} interactions; "
        f"{len(skipped)} skipped: {', '.join(skipped)}"
    )


def verified_none(verdicts: list[Verdict]) -> bool:
    """Whether verify compared nothing (every interaction skipped, or none there)."""
    return all(v.skipped for v in verdicts)
