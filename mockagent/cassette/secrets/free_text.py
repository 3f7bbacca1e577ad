"""Secrets by name in free text: `KEY=value` and `key: value` lines, connection strings, JSON
objects after prose, and URLs.

A key is secret by the same rule as a JSON key or header (`secret_names`): `DB_PASSWORD=…`,
`export DD_API_KEY=…`, `Password=…;` in a .NET connection string, a YAML `password: …` line or
a header line `X-Api-Key: …` in a log. A `key: value` pair counts only at the start of a line or
after a quote (a header in a `curl -H '…'`), so that prose (`Session: ended`) mostly keeps its
words; a `KEY=value` pair counts anywhere. A JSON object inside a text (`Result: {"token": …}`,
an SSE `data: {…}` line) is found by parsing from each `{`. A secret word followed by a token
(`token cBdum7dQ… expired`: 16 characters or more, a letter and a digit in them) is one too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+")
_ASSIGN = re.compile(
    r"(?:(?<=[\s;,'\"({\[&?])|^)(?:export[ \t]+)?(?P<key>[A-Za-z_][\w.\-]*)[ \t]*=[ \t]*"
    r"(?P<quote>[\"']?)(?P<value>[^\s\"';&,]+)"
)
_LINE = re.compile(
    r"(?m)(?:^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?|(?<=['\"]))(?P<key>[A-Za-z_][\w.\-]*)"
    r"[ \t]*:[ \t]*(?P<value>[^\n'\"]*[^\s'\"])"
)
# A secret word then a token: `token cBdum7dQ… expired`, `the api key is 9f8e…` (a letter and a
# digit in it, 16 characters or more: words and numbers after `token` stay).
_SAID = re.compile(
    r"\b(?P<key>[A-Za-z][\w\-]*(?:[ \t][A-Za-z][\w\-]*)?)[ \t]+(?:(?:is|was|=|:)[ \t]+)?"
    r"(?P<value>(?=[A-Za-z_\-.+/]*[0-9])(?=[0-9_\-.+/]*[A-Za-z])[A-Za-z0-9_\-.+/]{16,}=*)"
    r"(?![\w\-.+/=])"
)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
MAX_OBJECTS = 100  # `{` tried as the start of a JSON object, per text: code has many


class Rules(Protocol):
    """What free text is redacted with (a Redactor)."""

    def is_secret(self, name: str, query: bool = False) -> bool: ...
    def hide(self, value: str, name: str) -> str: ...
    def redact_url(self, url: str) -> str: ...
    def redact_json_text(self, text: str) -> str: ...


def _pairs(text: str, regex: re.Pattern[str], rules: Rules) -> str:
    def swap(match: re.Match[str]) -> str:
        key, value = match.group("key"), match.group("value")
        if "://" in value or not rules.is_secret(key):
            return match.group(0)
        start, end = match.span("value")
        hidden = rules.hide(value, key)
        return (
            match.group(0)[: start - match.start()] + hidden + match.group(0)[end - match.start() :]
        )

    return regex.sub(swap, text)


def _objects(text: str, redact: Callable[[str], str]) -> str:
    """`text` with each JSON object in it redacted as a JSON document."""
    decoder = json.JSONDecoder()
    out, at, tried = [], 0, 0
    while tried < MAX_OBJECTS:
        start = text.find("{", at)
        if start < 0:
            break
        tried += 1
        try:
            _, end = decoder.raw_decode(text, start)
        except ValueError:
            out.append(text[at : start + 1])
            at = start + 1
            continue
        out.append(text[at:start] + redact(text[start:end]))
        at = end
    return "".join(out) + text[at:]


def redact_free_text(text: str, rules: Rules) -> str:
    """`text` with the secrets its names point at replaced (see the module's docstring)."""
    if "://" in text:
        text = _URL.sub(lambda m: rules.redact_url(m.group(0)), text)
    if "{" in text:
        text = _objects(text, rules.redact_json_text)
    if "=" in text:
        text = _pairs(text, _ASSIGN, rules)
    if ":" in text:
        text = _pairs(text, _LINE, rules)
    return _pairs(text, _SAID, rules)


def _changed_strings(old: Any, new: Any) -> Iterable[tuple[str, str]]:
    """The strings of `old` that `new` (the same document, redacted) replaced."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            yield from _changed_strings(old[key], new.get(key))
    elif isinstance(old, list) and isinstance(new, list):
        for a, b in zip(old, new, strict=False):
            yield from _changed_strings(a, b)
    elif isinstance(old, str) and isinstance(new, str) and old != new:
        yield old, new


def in_place(text: str, document: Any, redacted: Any) -> str:
    """JSON `text` (of `document`) with the strings `redacted` changed replaced in place, in one
    pass over its string literals, so the rest keeps its layout; a text that spells a changed
    string otherwise (`\\/`, say) is written anew."""
    swaps: dict[str, tuple[str, str]] = {}
    for old, new in _changed_strings(document, redacted):
        for ascii_only in (True, False):
            swaps[json.dumps(old, ensure_ascii=ascii_only)] = (old, json.dumps(new))
    seen: set[str] = set()

    def swap(literal: re.Match[str]) -> str:
        if literal.group(0) not in swaps:
            return literal.group(0)
        old, new = swaps[literal.group(0)]
        seen.add(old)
        return new

    out = _JSON_STRING.sub(swap, text)
    return out if seen == {old for old, _ in swaps.values()} else json.dumps(redacted)
