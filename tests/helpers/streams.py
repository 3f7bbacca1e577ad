"""Streams over real HTTP with a small raw SSE reader: what a stream sent, event by event."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}], **extra}


@dataclass
class Sse:
    """What a stream sent: events as (event name, data lines), comments, and how it ended."""

    status: int
    content_type: str
    events: list[tuple[str, list[str]]] = field(default_factory=list)
    comments: int = 0
    body: bytes = b""

    @property
    def payloads(self) -> list[Any]:
        return [json.loads(lines[0]) for _, lines in self.events]


def read_sse(response: httpx.Response, stop_after: int | None = None) -> Sse:
    """Parse SSE by the spec's line rules; stop early (abandoning the stream) after N events."""
    out = Sse(response.status_code, response.headers.get("content-type", ""))
    if "text/event-stream" not in out.content_type:
        out.body = response.read()
        return out
    name, data = "message", []
    for line in response.iter_lines():
        if line.startswith(":"):
            out.comments += 1
        elif line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data.append(line.split(":", 1)[1].removeprefix(" "))
        elif line == "" and data:
            out.events.append((name, data))
            name, data = "message", []
            if stop_after is not None and len(out.events) >= stop_after:
                break
    return out


def stream(
    server: Any,
    path: str,
    body: Any = None,
    method: str = "POST",
    stop_after: int | None = None,
    timeout: float = 10,
) -> Sse:
    with httpx.stream(
        method, server.url + path, json=body, headers=V1, timeout=timeout
    ) as response:
        return read_sse(response, stop_after)


def rpc_stream(server: Any, method: str, params: Any, request_id: Any = 7, **kwargs: Any) -> Sse:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return stream(server, "/", body, **kwargs)


def send(server: Any, text: str, **config: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message(text)}
    if config:
        body["configuration"] = config
    return httpx.post(server.url + "/message:send", json=body, headers=V1).json()
