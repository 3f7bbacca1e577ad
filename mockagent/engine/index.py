"""An index over a cassette's interactions: which of them could match a call, found in a few
dict lookups instead of a pass over every matcher.

Interactions are filed by the operations their matcher admits and, when a matcher pins a value
(a plain `text: "..."`, `text: {equals: …}` or `{in: […]}`, or such a `where`), by that value.
`candidates(call)` returns, in the order the engine tries them (those added at runtime first,
then the cassette's), every interaction that could match: the ones filed under the call's value
plus every one the index cannot narrow down. The engine checks them in that order, so
first-match-wins and `times` are as they were; the index only skips interactions that cannot
match.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mockagent.engine.call import Call
from mockagent.engine.matchers import CompiledMatch, ParsedPath, is_keyword_map, resolve_path

IndexKey = tuple[str] | tuple[str, ParsedPath]
"""Where a call's value for a pinned matcher is: `("text",)` or `("where", parsed path)`."""

_SCALARS = (str, int, float, bool, type(None))


def admitted_values(spec: Any) -> frozenset[Any] | None:
    """The only values a predicate spec can hold for, when it names them (a plain value,
    `equals`, `in`) and they are JSON scalars; None when it may hold for others.

    A dict lookup finds a call's value among these exactly when `==` would: scalars that compare
    equal hash alike (1, 1.0, true), and a list or mapping equals none of them. NaN equals
    nothing, so a spec naming it is left unindexed.
    """
    if is_keyword_map(spec):  # every keyword must hold: `equals` or `in` alone narrows it
        values = [spec["equals"]] if "equals" in spec else spec.get("in")
    else:
        values = [spec]
    if not isinstance(values, list) or not all(type(v) in _SCALARS and v == v for v in values):
        return None
    return frozenset(values)


def exact_key(matcher: CompiledMatch) -> tuple[IndexKey, frozenset[Any]] | None:
    """A value the call must have for `matcher` to match, if it pins one: its text first, else
    the first `where` that does."""
    spec = matcher.spec
    values = None if spec.text is None else admitted_values(spec.text)
    if values is not None:
        return ("text",), values
    for (_, steps, _), where in zip(matcher.where, spec.where.values(), strict=True):
        values = admitted_values(where)
        if values is not None:
            return ("where", steps), values
    return None


def key_value(call: Call, key: IndexKey) -> Any:
    """The call's value under `key`, computed as the matcher computes it for its check."""
    return call.text if key[0] == "text" else resolve_path(call.params, key[1])  # type: ignore[misc]


class _Bucket:
    """The interactions that admit one operation: filed by pinned value, or left unkeyed."""

    def __init__(self) -> None:
        self._unkeyed: list[int] = []
        self._keyed: dict[IndexKey, dict[Any, list[int]]] = {}
        self.unkeyed: tuple[int, ...] = ()  # a candidate for every call
        self.keyed: dict[IndexKey, dict[Any, tuple[int, ...]]] = {}

    def add(self, index: int, exact: tuple[IndexKey, frozenset[Any]] | None) -> None:
        if exact is None:
            self._unkeyed.append(index)
            return
        key, values = exact
        table = self._keyed.setdefault(key, {})
        for value in values:
            table.setdefault(value, []).append(index)

    def freeze(self) -> None:
        """Tuples from now on: `candidates` hands them out as they are, and nobody may change
        them."""
        self.unkeyed = tuple(self._unkeyed)
        self.keyed = {
            key: {value: tuple(hits) for value, hits in table.items()}
            for key, table in self._keyed.items()
        }
        self._unkeyed, self._keyed = [], {}

    def candidates(self, call: Call) -> Sequence[int]:
        found: list[tuple[int, ...]] = []
        for key, table in self.keyed.items():
            try:
                hit = table.get(key_value(call, key))
            except TypeError:  # an unhashable value (a list, a mapping) equals no scalar
                continue
            if hit:
                found.append(hit)
        if not found:
            return self.unkeyed
        if len(found) == 1 and not self.unkeyed:
            return found[0]
        # An interaction sits in one table, so the lists never overlap: no duplicates to drop.
        return sorted([*self.unkeyed, *(i for hit in found for i in hit)])


class InteractionIndex:
    """Which interactions could match a call; built once per engine from its matchers."""

    def __init__(self, matchers: Sequence[CompiledMatch]) -> None:
        self._buckets: dict[str, _Bucket] = {}
        for index, matcher in enumerate(matchers):
            exact = exact_key(matcher)
            for operation in matcher.operations:
                self._buckets.setdefault(operation, _Bucket()).add(index, exact)
        for bucket in self._buckets.values():
            bucket.freeze()

    def candidates(self, call: Call) -> Sequence[int]:
        """Indexes, ascending, of every interaction that could match `call`; one left out cannot
        match it (its operation or pinned value differs)."""
        bucket = self._buckets.get(call.operation)
        return () if bucket is None else bucket.candidates(call)
