"""`mockagent lint`'s `slow-regex`: a matcher regex that runs out of its time bound on a short
text, so that a call with such a text is never matched by it (and waits for the bound).

The engine searches with a time bound (mockagent.cassette.regexes). Whether a regex backtracks
without end depends on the text, so lint tries each one on a few short probes: each character
the pattern names (and a few common ones) repeated, then a character that ends the match there.
A regex with a repeat inside a repeat that the engine cannot see through (`^(a|a)+$`) runs out
of time on one of them; a probe that runs out of time is a fact, so the finding is sure. A regex
slow only on other texts goes unsaid, and the bound still holds when a call brings one.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from mockagent.cassette.models import Match
from mockagent.cassette.regexes import RegexTimeout, bounded
from mockagent.cassette.rules import Loc
from mockagent.cassette.text_match import ARGUMENTS

PROBE_LENGTH = 40
"""Characters repeated in a probe: a nested repeat takes about 2**40 steps on them."""
COMMON = "a0 x"
"""Characters every probe set has, besides those the pattern names."""
ENDS = ("!", "\x00", "")
"""What follows the repeated character: something no class of the pattern is likely to take."""


def slow_regexes(match: Match) -> Iterator[tuple[Loc, str]]:
    """(location under `match`, message) for each regex of `match` that runs out of time."""
    found: list[tuple[Loc, str]] = []
    if match.text is not None:
        found += _regexes(match.text, ("text",))
    if match.parts is not None:
        found += _regexes(match.parts, ("parts",))
    for path, spec in match.where.items():
        found += _regexes(spec, ("where", path))
    for name, spec in match.headers.items():
        found += _regexes(spec, ("headers", name))
    for loc, pattern in found:
        stalled = stalls(pattern)
        if stalled is not None:
            probe, timed_out = stalled
            shown = f"{probe[:3]}…{probe[-1:]}" if len(probe) > 6 else probe
            yield (
                loc,
                f"{timed_out} on a {len(probe)}-character text ({shown!r}): it backtracks "
                "without end there (a repeat inside a repeat, such as `(a|a)+`), and a call "
                "with such a text never matches it; write it without the nested repeat",
            )


def _regexes(spec: Any, loc: Loc) -> list[tuple[Loc, str]]:
    """Every `regex` argument in a predicate, with its location."""
    if not (isinstance(spec, dict) and spec and all(key in ARGUMENTS for key in spec)):
        return []
    found: list[tuple[Loc, str]] = []
    for key, arg in spec.items():
        if key == "regex":
            found.append((loc + (key,), str(arg)))
        elif key == "not":
            found += _regexes(arg, loc + (key,))
        elif key in ("any", "all", "none") and isinstance(arg, dict):
            keywords = all(k in ARGUMENTS for k in arg)
            for path, sub in [(None, arg)] if keywords else list(arg.items()):
                found += _regexes(sub, loc + (key,) + ((path,) if path is not None else ()))
    return found


@lru_cache(maxsize=1024)
def stalls(pattern: str) -> tuple[str, str] | None:
    """The first probe on which the bounded search of `pattern` runs out of time, and the
    timeout's message; None when it runs out on none."""
    searcher = bounded(pattern)
    named = [c for c in pattern if c.isalnum() or c in " @.,:;_-/"]
    for char in dict.fromkeys([*named, *COMMON]):
        for end in ENDS:
            probe = char * PROBE_LENGTH + end
            try:
                searcher.search(probe)
            except RegexTimeout as exc:
                return probe, str(exc)
    return None
