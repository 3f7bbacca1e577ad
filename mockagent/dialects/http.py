"""Framework-free HTTP request and response, so dialects never import Flask."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mockagent.engine.codec import compact_json

JSON_TYPES = ("application/json", "application/a2a+json")


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


def parse_json(body: bytes) -> Any:
    """Decode a JSON body; ValueError for bad UTF-8, bad JSON, JSON nested too deeply, or a
    lone surrogate escape alike."""
    try:
        text = body.decode("utf-8")
        value = json.loads(text)
    except RecursionError:  # e.g. 10,000 nested lists: a bad body, not a crash of ours
        raise ValueError("the JSON is nested too deeply") from None
    # json accepts "\ud800" and gives a str that no answer can carry back as UTF-8: a body
    # the client got wrong, so a parse error now rather than a crash when the reply is written.
    # Only an escape can make a surrogate (strict UTF-8 decoding refuses encoded ones).
    if "\\u" in text:
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("the JSON holds a lone surrogate escape (\\ud800-\\udfff)") from None
    return value
