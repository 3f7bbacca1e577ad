"""Cassette regexes: the language of Python's `re`, run by the `regex` module under a time bound.

A regex with a repeat inside a repeat (`^(a|a)+$`) can backtrack for hours on a short text, and
`re` holds the GIL all the while: one such call stalled every thread of a worker (a card GET
waited 11 s). The `regex` module takes a `timeout` and releases the GIL while it matches
(`concurrent=True`). A search that runs out of time raises `RegexTimeout`: the matcher counts it
as no match and the near-miss report says so.

What a cassette means stays what it meant: `re` still decides which patterns are valid (and
words their errors), and the few places where the `regex` module reads a valid `re` pattern
otherwise are escaped before it compiles: a `{` that `re` takes literally (`a{e<=1}` is
`regex`'s fuzzy matching) and, inside a set, a `[` or a doubled `&`, `~` or `|` (`regex`'s
nested sets and set operations). One difference is left: case-insensitive matches of the
Turkish dotted and dotless i (`(?i)ı`) follow `regex`'s case folding.
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

TIMEOUT = 0.1
"""Seconds one search may take, on the `regex` module's clock: the process's CPU time, so other
processes on a busy machine take none of it, and other threads of a server take at most as much
as the search itself while it runs (one Python thread at a time, beside the searches). A regex
that needs more on a call's text is broken, not slow: legitimate ones take microseconds."""

_REPEAT = re.compile(r"\{\d*(,\d*)?\}")
"""What `re` reads as a repeat after a `{` (`{}` aside): any other `{` is a literal brace."""


class RegexTimeout(Exception):
    """A cassette regex ran out of time on a text; the match counts it as no match."""

    def __init__(self, pattern: str, seconds: float = TIMEOUT) -> None:
        self.pattern = pattern
        self.ms = round(seconds * 1000)
        super().__init__(f"regex {pattern!r} timed out after {self.ms} ms")


def regex_problem(pattern: str) -> str | None:
    """Why `pattern` is not a valid cassette regex (`re`'s words), or None."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"bad regex {pattern!r}: {exc}"
    try:
        regex.compile(for_regex(pattern))
    except regex.error as exc:  # a pattern the two engines read differently: never ambiguous
        return f"bad regex {pattern!r}: {exc}"
    return None


class BoundedRegex:
    """A compiled cassette regex whose `search` gives up after `timeout` seconds."""

    __slots__ = ("pattern", "_compiled", "_timeout")

    def __init__(self, pattern: str, timeout: float = TIMEOUT) -> None:
        problem = regex_problem(pattern)
        if problem is not None:
            raise ValueError(problem)
        self.pattern = pattern
        self._compiled = regex.compile(for_regex(pattern))
        self._timeout = timeout

    def search(self, text: str) -> bool:
        """Whether the regex finds a match anywhere in `text`, as `re.search` does; raise
        RegexTimeout when the search takes longer than the bound."""
        try:
            return self._compiled.search(text, timeout=self._timeout, concurrent=True) is not None
        except TimeoutError:
            raise RegexTimeout(self.pattern, self._timeout) from None


@lru_cache(maxsize=4096)
def bounded(pattern: str) -> BoundedRegex:
    """The compiled BoundedRegex of `pattern` (with the default bound), cached by pattern."""
    return BoundedRegex(pattern)


def for_regex(pattern: str) -> str:
    """`pattern` as the `regex` module must read it to mean what `re` reads in it."""
    out: list[str] = []
    i, n, in_set = 0, len(pattern), False
    verbose = _verbose(pattern)
    while i < n:
        char = pattern[i]
        if verbose and char == "#" and not in_set:  # a comment, to the end of its line, left
            end = i  # out: `re` reads a backslash in it with the character after, so a newline
            while end < n and pattern[end] != "\n":  # escaped does not end it, where it
                end += 2 if pattern[end] == "\\" else 1  # would end `regex`'s comment
            i = min(end, n)
            continue
        if char == "\\":
            end = _escape_end(pattern, i)
            out.append(pattern[i:end])
            i = end
            continue
        if in_set:
            if char == "]":
                in_set = False
            elif char == "[" or (char in "&~|" and pattern[i + 1 : i + 2] == char):
                out.append("\\")
        elif char == "[":
            in_set = True
            start = i + 1 + (pattern[i + 1 : i + 2] == "^")
            if pattern[start : start + 1] == "]":  # a `]` first in a set is a member
                out.append(pattern[i : start + 1])
                i = start + 1
                continue
        elif char == "{":
            repeat = _REPEAT.match(pattern, i)
            if repeat is None or repeat.group() == "{}":
                out.append("\\")
            else:
                out.append(repeat.group())
                i = repeat.end()
                continue
        out.append(char)
        i += 1
    return "".join(out)


def _verbose(pattern: str) -> bool:
    """Whether a `#` outside a set starts a comment: `(?x)` for the whole pattern. (A comment
    in a scoped `(?x:…)` is read as pattern: a `[` there may hide a later fuzzy `{`.)"""
    return bool(re.compile(pattern).flags & re.VERBOSE)


def _escape_end(pattern: str, i: int) -> int:
    """Where the escape that starts at `i` ends (`\\N{NAME}` runs to its brace)."""
    if pattern[i + 1 : i + 3] == "N{":
        close = pattern.find("}", i + 3)
        return close + 1 if close != -1 else i + 2
    return i + 2
