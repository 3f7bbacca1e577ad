"""`Exchange` records from HTTP traffic: which operation a request was, and what came back.

Used by the fidelity tests (a capturing httpx transport under the official client) and by
`mockagent verify`, so both compare the same thing: what was on the wire.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mockagent import errors
from mockagent.dialects import sse_read
from mockagent.dialects.a2a.routes import Route, classify
from mockagent.verify.compare import Event, Exchange
from mockagent.vocabulary import CARD_PATH

# Agentex: the RPC endpoint of an agent, by id or by name; its operation is the RPC method.
AGENTEX_RPC = re.compile(r"/agents/(name/)?[^/]+/rpc/?$")
AGENTEX = "Agentex"


def parse_json(raw: bytes) -> Any:
    """The JSON in `raw`, or its text when it is not JSON (a malformed body is a difference)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return text


def parse_sse(raw: bytes) -> tuple[Event, ...]:
    """The events of a text/event-stream body; comments (`: ping`) are not events."""
    return tuple(Event(e.name, parse_json(e.data.encode())) for e in sse_read.events_of(raw))


def parse_ndjson(raw: bytes) -> tuple[Event, ...]:
    """The lines of an application/x-ndjson body (Agentex), each one event named "message"; the
    optional `data:` prefix the Agentex client tolerates is dropped, blank lines skipped."""
    lines = raw.decode("utf-8", errors="replace").splitlines()
    texts = [line.strip().removeprefix("data:").strip() for line in lines]
    return tuple(Event("message", parse_json(text.encode())) for text in texts if text)


def binding_of(method: str, body: Any, path: str = "") -> str:
    """`JSONRPC` for a JSON-RPC envelope, `Agentex` for an Agentex agent's RPC, else `HTTP+JSON`."""
    if method == "POST" and AGENTEX_RPC.search(path.split("?", 1)[0]):
        return AGENTEX  # the Agentex client sends neither `jsonrpc` nor `id`
    is_rpc = method == "POST" and isinstance(body, dict) and "jsonrpc" in body
    return "JSONRPC" if is_rpc else "HTTP+JSON"


def operation_of(method: str, path: str, body: Any) -> str:
    """The operation of a request: the JSON-RPC (or Agentex RPC) method, or the REST route's."""
    if binding_of(method, body, path) in ("JSONRPC", AGENTEX):
        return str(body.get("method") if isinstance(body, dict) else None)
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith(CARD_PATH):
        return "AgentCard"
    found = _route(method.upper(), path)
    return found.operation if found is not None else f"{method.upper()} {path or '/'}"


def _route(method: str, path: str) -> Route | None:
    """The HTTP+JSON route of a path seen on the wire. The agent's root may be anywhere above it
    (a mount, an upstream's base path), so each tail of the path is tried, the longest first:
    `/agents/a/v1/card` is v0.3's `/v1/card` below `/agents/a`."""
    segments = path.split("/")[1:]
    for start in range(len(segments)):
        try:
            found = classify(method, "/" + "/".join(segments[start:]))
        except errors.ProtocolError:  # a route's path with another verb: no operation of ours
            found = None
        if found is not None:
            return found
    return None


def exchange_from_http(
    method: str,
    path: str,
    request_body: bytes,
    status: int,
    content_type: str,
    response_body: bytes,
    dropped: bool = False,
) -> Exchange:
    """One call as the client saw it on the wire."""
    request = parse_json(request_body)
    operation = operation_of(method, path, request)
    binding = binding_of(method, request, path)
    if "application/x-ndjson" in content_type:
        events = parse_ndjson(response_body)
        return Exchange(operation, binding, status, events=events, dropped=dropped)
    if "text/event-stream" in content_type:
        return Exchange(
            operation, binding, status, events=parse_sse(response_body), dropped=dropped
        )
    return Exchange(operation, binding, status, body=parse_json(response_body), dropped=dropped)
