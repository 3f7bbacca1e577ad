"""Framework-free HTTP request and response, so dialects never import Flask."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mockagent.engine.compact_json import compact_json

JSON_TYPES = ("application/json", "application/a2a+json")
WRITE_BYTES = 64 * 1024
"""Most bytes a streamed answer hands its server at once. The server holds a few writes for a
client that does not read (granian: 4 in its queue, plus its 64 KB buffer), so a small write
bounds what such a client costs; events already there are joined up to this size, and one
larger event is cut (`mockagent.server.wsgi.droppable`)."""


@dataclass(slots=True)  # not frozen: see engine/call.py
class HttpRequest:
    """A request as a dialect sees it: `path` is relative to the agent's mount (starts with /)."""

    method: str
    path: str
    base_url: str  # the agent's URL, no trailing slash; the card's interfaces point here
    headers: dict[str, str] = field(default_factory=dict)  # names lowercased
    query: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def media_type(self) -> str:
        """The Content-Type without parameters, lowercased; "" when absent."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass
class HttpResponse:
    """Status, headers and body bytes."""

    status: int
    body: bytes | Iterator[bytes] = b""  # an iterator is streamed, each chunk sent as it comes
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(
        cls, payload: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> HttpResponse:
        """Compact JSON, keys in insertion order, so equal answers are equal bytes."""
        body = compact_json(payload).encode()
        return cls(status, body, {"Content-Type": "application/json", **(headers or {})})


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (JSON numbers are finite: no NaN or Infinity)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: a number no double holds, read as infinity
        raise ValueError(f"the number {text[:40]} is out of range (past a double's 1.8e308)")
    return value


MAX_DEPTH = 64
"""How deeply a request's JSON may nest arrays and objects. A2A's deepest field (a part's data
in a message's metadata) is a handful of levels; past a few hundred, code that walks the value
(renaming keys, matching, the journal) would exhaust Python's recursion limit: a 500."""


def _nested_deeper(value: Any, limit: int) -> bool:
    """Whether `value` nests arrays and objects more than `limit` deep; a loop, not a
    recursion, so that any depth is measured."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        stack += [(child, depth + 1) for child in children if isinstance(child, (dict, list))]
    return False


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
"""RFC 8259 JSON only: Python's reader takes NaN, Infinity and -Infinity, which we would then
echo into task history, the journal and gRPC Structs, where no strict reader takes them back."""


def parse_json(body: bytes) -> Any:
    """Decode a JSON body strictly; ValueError for bad UTF-8, bad JSON, NaN or an infinite
    number, JSON nested too deeply, or a lone surrogate escape alike. Every JSON body a client
    sends is read here (A2A, Agentex, the admin API, the recording proxy)."""
    too_deep = f"the JSON is nested too deeply (more than {MAX_DEPTH} levels of arrays and objects)"
    try:
        text = body.decode("utf-8")
        value = _DECODER.decode(text)
    except RecursionError:  # e.g. 10,000 nested lists: a bad body, not a crash of ours
        raise ValueError(too_deep) from None
    # Fewer brackets than the limit cannot nest past it: most bodies skip the walk.
    deep = text.count("[") + text.count("{") > MAX_DEPTH and isinstance(value, (dict, list))
    if deep and _nested_deeper(value, MAX_DEPTH):
        raise ValueError(too_deep)
    # json accepts "\ud800" and gives a str that no answer can carry back as UTF-8: a body
    # the client got wrong, so a parse error now rather than a crash when the reply is written.
    # Only an escape can make a surrogate (strict UTF-8 decoding refuses encoded ones).
    if "\\u" in text:
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("the JSON holds a lone surrogate escape (\\ud800-\\udfff)") from None
    return value
