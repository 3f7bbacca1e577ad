"""Server-Sent Events read: the one reader the recording proxy and the verify tools share (the
writer is `sse`). A leaf: it imports nothing of mockagent, so a tool that reads streams does not
load the engine with it."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

_LINE_END = re.compile("\r\n|\r|\n")  # not str.splitlines: JSON text may hold U+2028 raw


class Event(NamedTuple):
    """One event as read: its name (`message` unless an `event:` line names another) and its
    data (the block's `data:` lines, joined by newlines)."""

    name: str
    data: str


def event_of(block: bytes) -> Event | None:
    """The event of one block (the lines before a blank line), or None for a block with no
    `data:` line (a comment such as a keep-alive). Fields as the SSE specification reads them:
    one space after the colon is not part of the value; `id:` and `retry:` are not kept."""
    name, data = "message", []
    for line in _LINE_END.split(block.decode("utf-8", "replace")):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value or "message"
        elif field == "data":
            data.append(value)
    return Event(name, "\n".join(data)) if data else None


def json_event(block: bytes) -> tuple[str, Any] | None:
    """(name, JSON data) of one block; None for a comment or data that is not JSON."""
    event = event_of(block)
    return None if event is None else json_data(event)


def json_data(event: Event) -> tuple[str, Any] | None:
    """(name, JSON data) of an event; None for data that is not JSON."""
    try:
        return event.name, json.loads(event.data)
    except ValueError:
        return None


class Reader:
    """Told a stream's chunks as they arrive; answers the events each chunk completed, so a
    caller sees an event as soon as its blank line is in (never the whole body first)."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[Event]:
        """The events `chunk` completed. Lines may end in CRLF, LF or CR: a CR at the end of a
        chunk waits for the next one, which may hold its LF."""
        data = self._pending + chunk
        held = b"\r" if data.endswith(b"\r") else b""
        data = data[: len(data) - len(held)].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *blocks, rest = data.split(b"\n\n")
        self._pending = rest + held
        return [event for event in map(event_of, blocks) if event is not None]

    def end(self, unterminated: bool = True) -> list[Event]:
        """The events left when the stream ends: a block a held CR completes, and (unless
        `unterminated` is False, as the SSE specification would have it) the last block the
        stream ended without its blank line."""
        data, self._pending = self._pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n"), b""
        *blocks, last = data.split(b"\n\n")
        events = [event for event in map(event_of, blocks) if event is not None]
        tail = event_of(last) if unterminated else None
        return events if tail is None else [*events, tail]


def events_of(body: bytes) -> list[Event]:
    """The events of a whole text/event-stream body."""
    reader = Reader()
    return reader.feed(body) + reader.end()
