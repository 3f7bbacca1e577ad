"""Whether one interaction takes every call another matches (`mockagent lint`'s `shadowed`).

An earlier interaction with no `times` always wins over a later one when each of its matchers
accepts whatever the later one's accepts: the operations that reach it cover the later one's,
and every other matcher of the earlier one is absent, written the same in the later one, or,
for `text` and `headers`, a string predicate that holds for every string the later one's
accepts. That last check knows a small, sure subset (a prefix, a suffix, a part, a regex that
matches anything, an exact value tried); anything else counts as different. So a `shadowed`
finding is always true, and a shadow it cannot prove goes unsaid.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Hashable, Iterator, Sequence
from itertools import islice
from typing import Any

from mockagent.cassette.models import Match
from mockagent.cassette.predicates import ARGUMENTS
from mockagent.cassette.regexes import RegexTimeout, bounded
from mockagent.lint.tasks import task_states

ANY_TEXT = frozenset({"", ".*", "^", "^.*", "$", ".*$", "(?s).*", "(?s)^.*", "(?s).*$", "(?s)^.*$"})
"""Regexes that find a match in every string (`search`, as the engine tries them). `^.*$` is
not one: it misses a text of several lines."""

STRING_KINDS = frozenset({"equals", "startswith", "endswith", "contains", "regex"})
"""Keywords that, with a string argument, only a string meets."""

Condition = tuple[str, Any]
"""One keyword of a predicate and its argument; a plain value is `("equals", value)`."""


def always_wins(
    earlier: Match, later: Match, earlier_ops: frozenset[str], later_ops: frozenset[str]
) -> bool:
    """Whether every call `later` matches is matched by `earlier` too; `…_ops`: the operations
    of the calls that reach each (none for `later`: it is never asked, and nothing shadows it)."""
    if not later_ops or not earlier_ops >= later_ops:
        return False
    if not text_covers(earlier.text, later.text):
        return False
    if earlier.parts is not None and earlier.parts != later.parts:
        return False
    if any(
        path not in later.where or later.where[path] != spec for path, spec in earlier.where.items()
    ):
        return False
    later_headers = {name.lower(): spec for name, spec in later.headers.items()}
    if any(
        name.lower() not in later_headers or not covers(spec, later_headers[name.lower()])
        for name, spec in earlier.headers.items()
    ):
        return False
    return _task_wins(earlier, later)


def _task_wins(earlier: Match, later: Match) -> bool:
    """Whether `earlier`'s follow-up matcher (if any) accepts every task `later`'s does."""
    if earlier.task is None:
        return True
    states = task_states(earlier)
    if later.task is None or (states is not None and all(s.terminal for s in states)):
        return False  # (an earlier matcher that can never match wins nothing)
    if earlier.task.known != later.task.known:
        return False  # a made-up id's matcher and a real task's share no call
    later_states = task_states(later)
    if states is not None and (later_states is None or not set(later_states) <= set(states)):
        return False
    return earlier.task.from_ is None or earlier.task.from_ == later.task.from_


def text_covers(earlier: Any, later: Any) -> bool:
    """Whether the `text` predicate `earlier` holds for every text `later` accepts (None: no
    predicate, any text; the engine's text is always a string, "" for none)."""
    if earlier is None:
        return True
    if later is None:
        return all(kind == "regex" and str(arg) in ANY_TEXT for kind, arg in conditions(earlier))
    return covers(earlier, later)


def covers(earlier: Any, later: Any) -> bool:
    """Whether the string predicate `earlier` holds for every string `later` accepts; False
    when that is not sure."""
    if earlier == later:
        return True
    exact = [arg for kind, arg in conditions(later) if kind == "equals" and isinstance(arg, str)]
    if exact:  # `later` accepts one text at most: try it
        return holds(earlier, exact[0]) is True
    return all(
        any(implies(want, have) for have in conditions(later)) for want in conditions(earlier)
    )


def conditions(spec: Any) -> list[Condition]:
    """The conditions that must all hold for a predicate to hold."""
    keywords = isinstance(spec, dict) and spec and all(key in ARGUMENTS for key in spec)
    return list(spec.items()) if keywords else [("equals", spec)]


def holds(spec: Any, text: str) -> bool | None:
    """Whether the predicate `spec` holds for `text`, as the engine tries it; None for a
    keyword this does not read."""
    results = [_holds(kind, arg, text) for kind, arg in conditions(spec)]
    if False in results:
        return False
    return None if None in results else True


def _holds(kind: str, arg: Any, text: str) -> bool | None:
    if kind == "equals":
        return bool(arg == text)
    if kind == "regex":
        try:
            return bounded(str(arg)).search(text)
        except RegexTimeout:  # not sure either way (`slow-regex` says why)
            return None
    if kind == "in":
        return isinstance(arg, list) and text in arg
    if kind == "not":
        inner = holds(arg, text)
        return None if inner is None else not inner
    if not isinstance(arg, str):
        return None
    if kind == "startswith":
        return text.startswith(arg)
    if kind == "endswith":
        return text.endswith(arg)
    return arg in text if kind == "contains" else None


def implies(want: Condition, have: Condition) -> bool:
    """Whether every string that meets `have` meets `want` too (a sure subset of the cases)."""
    kind, arg = want
    given, value = have
    if kind == "regex":  # only a string meets it: `have` must promise one
        return str(arg) in ANY_TEXT and given in STRING_KINDS and isinstance(value, str)
    if not isinstance(arg, str) or not isinstance(value, str):
        return want == have
    if kind == "startswith":
        return given == "startswith" and value.startswith(arg)
    if kind == "endswith":
        return given == "endswith" and value.endswith(arg)
    if kind == "contains":
        return given in ("startswith", "endswith", "contains") and arg in value
    return want == have


class Shadows:
    """`first(i)`: the first interaction before the one at `i` that always wins over it, as a
    scan of every earlier one with `always_wins` finds it, but compared only with those that
    can: an interaction whose `text` has an exact value (`equals`) wins only over one with the
    same value, one with a `where` path only over one with that path written the same, one with
    `parts` only over one with the same `parts`. Each is filed under one such key (its anchor),
    or with the few that have none, so a cassette of recorded calls costs a comparison or two per
    interaction, not one per earlier interaction.

    `matches`, `times`, `reach`: each interaction's matcher, `times` and the operations of the
    calls that reach it. `comparisons` counts the `always_wins` calls made.
    """

    def __init__(
        self,
        matches: Sequence[Match],
        times: Sequence[int | None],
        reach: Sequence[frozenset[str]],
    ) -> None:
        self.matches, self.reach = matches, reach
        self.comparisons = 0
        self._filed: dict[Hashable, list[int]] = {}  # anchor → indexes, in order
        for k, match in enumerate(matches):
            if times[k] is None and reach[k]:  # only these can win over anything
                self._filed.setdefault(_anchor(match), []).append(k)

    def first(self, i: int) -> int | None:
        """The index of the first interaction before `i` that takes every call it matches."""
        later, ops = self.matches[i], self.reach[i]
        if not ops:
            return None
        for k in heapq.merge(*(self._before(key, i) for key in _keys(later))):
            self.comparisons += 1
            if always_wins(self.matches[k], later, self.reach[k], ops):
                return k
        return None

    def _before(self, key: Hashable, i: int) -> Iterator[int]:
        filed = self._filed.get(key, [])
        return islice(filed, bisect_left(filed, i))


_NONE = ("none",)
"""The anchor of an interaction with no exact text, `where` or `parts`: compared with all."""


def _anchor(match: Match) -> Hashable:
    """One condition a later interaction must meet for `match` to win over it."""
    exact = _exact(match.text)
    if exact is not None:
        return ("text", exact)
    for path, spec in match.where.items():
        frozen = _frozen(spec)
        if frozen is not None:
            return ("where", path, frozen)
    frozen = _frozen(match.parts) if match.parts is not None else None
    return ("parts", frozen) if frozen is not None else _NONE


def _keys(match: Match) -> list[Hashable]:
    """Every anchor an earlier interaction that wins over `match` may have."""
    keys: list[Hashable] = [_NONE]
    exact = _exact(match.text)
    if exact is not None:
        keys.append(("text", exact))
    keys += [("where", path, _frozen(spec)) for path, spec in match.where.items()]
    if match.parts is not None:
        keys.append(("parts", _frozen(match.parts)))
    return keys


def _exact(text: Any) -> str | None:
    """The one text a `text` predicate accepts, when it has an `equals` (as `covers` reads it)."""
    if text is None:
        return None
    return next((a for k, a in conditions(text) if k == "equals" and isinstance(a, str)), None)


def _frozen(value: Any) -> Hashable | None:
    """A hashable value equal to another's exactly when the values are equal (None: none)."""
    try:
        if isinstance(value, dict):
            return frozenset((key, _frozen(item)) for key, item in value.items())
        if isinstance(value, list | tuple):
            return tuple(_frozen(item) for item in value)
        hash(value)
    except TypeError:
        return None
    return value
