"""What a journal entry keeps of a call, and how much memory it is counted for.

A journal is bounded by a byte budget besides its count of calls, so that 10,000 calls of a few
megabytes each cannot take gigabytes: an entry keeps at most about ENTRY_CHARS of the call's
params (a longer string is cut with a visible marker saying how much was cut, a list or object
with too many items ends with a marker item) and its near-miss report only the closest
interactions, each mismatch's value cut too. Nothing that counts or matches reads what is cut:
matching ran on the whole call before it was journaled, and use counts are kept apart from the
entries. Only what a person reads of the entry (`/_mockagent/calls`, the inspector, a test's
`mockagent.calls[i].params`) shows the marker.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mockagent.engine.diagnostics import NearMissReport

ENTRY_CHARS = 64 * 1024
"""About how much of a call's params a journal entry keeps: characters of strings and keys,
plus NODE for every value."""
VALUE_CHARS = 1024
"""How much of a mismatch's value a near-miss report keeps (reports show 120 characters)."""
NODE = 50
"""What one value counts for besides its characters: roughly what Python spends on an object."""
ENTRY = 500
"""What an entry counts for besides its params and report."""


def size(value: Any) -> int:
    """About the memory `value` (parsed JSON) takes: its strings' characters, NODE per value."""
    total, stack = 0, [value]  # a loop, not recursion: a call may nest as deep as JSON parses
    while stack:
        item = stack.pop()
        total += NODE
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += sum(len(k) if isinstance(k, str) else 0 for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total


def cut(value: Any, limit: int = ENTRY_CHARS) -> Any:
    """`value` itself when its `size` is within `limit`; otherwise a copy that keeps about the
    first `limit` of it, each cut string, list or object saying how much it lost."""
    if size(value) <= limit:
        return value
    try:
        return _Cutter(limit).value(value)
    except RecursionError:  # large and nested deeper than the stack allows: nothing to show
        return {"…": f"[{size(value):,} bytes, nested too deep, cut from the journal]"}


class _Cutter:
    def __init__(self, limit: int) -> None:
        self.left = limit

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            keep = max(self.left, 0)
            self.left -= NODE + len(value)
            if len(value) <= keep:
                return value
            return value[:keep] + f"… [{len(value) - keep:,} more characters cut from the journal]"
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for i, (key, item) in enumerate(value.items()):
                if self.left <= 0:
                    out["…"] = f"[{len(value) - i:,} more keys cut from the journal]"
                    break
                self.left -= size(key)
                out[key] = self.value(item)
            return out
        if isinstance(value, list):
            items: list[Any] = []
            for i, item in enumerate(value):
                if self.left <= 0:
                    items.append(f"[{len(value) - i:,} more items cut from the journal]")
                    break
                items.append(self.value(item))
            return items
        self.left -= NODE
        return value


def kept_report(report: NearMissReport | None) -> NearMissReport | None:
    """The report as the journal keeps it: the closest interactions only (all a report shows),
    each mismatch's value cut to VALUE_CHARS."""
    if report is None:
        return None
    changed = len(report.candidates) > len(report.closest)
    closest = []
    for cand in report.closest:
        mismatches = [replace(m, actual=cut(m.actual, VALUE_CHARS)) for m in cand.mismatches]
        changed = changed or any(
            a.actual is not b.actual for a, b in zip(mismatches, cand.mismatches, strict=True)
        )
        closest.append(replace(cand, mismatches=mismatches))
    return replace(report, candidates=closest) if changed else report  # the same when it can


def entry_size(params: Any, report: NearMissReport | None) -> int:
    """About the memory a journal entry takes, for the journal's byte budget."""
    total = ENTRY + size(params)
    if report is not None:
        total += len(report.call) + len(report.cassette)
        for cand in report.candidates:
            total += ENTRY + sum(
                size(m.path) + size(m.expected) + size(m.actual) for m in cand.mismatches
            )
    return total
