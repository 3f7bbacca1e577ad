"""Streams over real HTTP: a server thread per module serving AGENT (the SSE reader and the
calls are in tests/helpers/streams.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
  - name: error
    match: {text: error}
    fault: {errorAfter: 1, error: {name: InvalidAgentResponse, message: the agent broke}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
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
            after: {ms: 600000}  # the test moves the clock on: no race with a loaded machine
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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    path = Path(tmp_path_factory.mktemp("streams")) / "streamer.yaml"
    path.write_text(AGENT)
    with serve_in_thread(path, keepalive_s=0.2) as running:
        yield running


@pytest.fixture(scope="module")
def grpc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """AGENT served over gRPC too (needs mockagent-server[grpc])."""
    path = Path(tmp_path_factory.mktemp("streams")) / "streamer.yaml"
    path.write_text(AGENT)
    with serve_in_thread(path, grpc_port=0, keepalive_s=0.2) as running:
        yield running
