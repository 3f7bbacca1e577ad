"""One difference between what an interaction expects and what a call has: what matchers return
and near-miss reports are made of. A leaf, so that reports and the journal need no matchers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Mismatch:
    """One difference between what an interaction expects and what the call has."""

    path: str
    expected: str
    actual: Any

    def describe(self) -> str:
        return f"{self.path}: {self.expected} ≠ {show(self.actual)}"


def show(value: Any) -> str:
    """Short JSON rendering of a value for reports."""
    if value is MISSING:
        return "(missing)"
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
