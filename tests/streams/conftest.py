"""Streams over real HTTP: a server thread per module and a small raw SSE reader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockagent.server.thread import serve_in_thread

AGENT = """\
version: 1
agent:
  name: streamer
  description: Streams task scripts.
  capabilities: {streaming: true, pushNotifications: true}
  skills: [{id: s, name: S, description: Streams.}]
clock: {start: 2026-10-06T09:00:00Z, pace: recorded}
interactions:
  - name: hello
    match: {text: {endswith: "?"}}
    reply: {message: "Hi."}
  - name: drop
    match: {text: drop}
    fault: {dropAfter: 2}
    reply: {task: {steps: [{state: TASK_STATE_SUBMITTED}, {state: TASK_STATE_WORKING}, {state: TASK_STATE_COMPLETED}]}}
  - name: error
    match: {text: error}
    fault: {errorAfter: 1, error: {name: InvalidAgentResponse, message: the agent broke}}
    reply: {task: {steps: [{state: TASK_STATE_SUBMITTED}, {state: TASK_STATE_WORKING}, {state: TASK_STATE_COMPLETED}]}}
  - name: unavailable
    match: {text: unavailable}
    fault: {status: 503}
  - name: slow
    match: {text: slow}
    fault: {delayMs: 150}
    reply: {message: "Finally."}
  - name: wait
    match: {text: wait}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which one?
  - name: answer
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: wait}}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: out, parts: [{text: done}]}
            lastChunk: true
          - state: TASK_STATE_COMPLETED
  - name: forever
    match: {text: forever}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
            after: {ms: 600000}
  - name: paced
    match: {text: paced}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: out, parts: [{text: half}]}
            after: {ms: 300}
          - state: TASK_STATE_COMPLETED
            after: {ms: 300}
  - name: work
    match: {text: work}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
            message: Working
          - artifact: {artifactId: log, name: log.txt, parts: [{text: "one\\n"}]}
          - artifact: {artifactId: log, parts: [{text: "two\\n"}]}
            append: true
            lastChunk: true
          - state: TASK_STATE_COMPLETED
"""
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    path = Path(tmp_path_factory.mktemp("streams")) / "streamer.yaml"
    path.write_text(AGENT)
    with serve_in_thread(path, keepalive_s=0.2) as running:
        yield running


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


def stream(server: Any, path: str, body: Any = None, method: str = "POST", stop_after: int | None = None,
           timeout: float = 10) -> Sse:
    with httpx.stream(method, server.url + path, json=body, headers=V1, timeout=timeout) as response:
        return read_sse(response, stop_after)


def rpc_stream(server: Any, method: str, params: Any, request_id: Any = 7, **kwargs: Any) -> Sse:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return stream(server, "/", body, **kwargs)


def send(server: Any, text: str, **config: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message(text)}
    if config:
        body["configuration"] = config
    return httpx.post(server.url + "/message:send", json=body, headers=V1).json()
