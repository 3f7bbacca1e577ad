"""Server-Sent Events framing: one `data:` line of compact JSON per event. `sse_read` reads them."""

from __future__ import annotations

from typing import Any

from mockagent.engine.compact_json import compact_json

HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # a proxy in front must not hold events back either
}
KEEPALIVE = b": keepalive\n\n"
"""A comment line: clients ignore it, and writing it tells a server whether its client is gone."""


def frame(payload: Any, event: str | None = None) -> bytes:
    """One SSE event; `event` names it (`error`), otherwise it is a plain message event."""
    named = f"event: {event}\n" if event else ""
    return f"{named}data: {compact_json(payload)}\n\n".encode()
