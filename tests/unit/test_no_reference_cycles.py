"""Serving makes no reference cycles: what guards `serve`'s collector setting.

Each `mockagent serve` worker freezes whatever survives a collection (`host.freeze_survivors`),
so the collector never walks the tasks again; frozen objects are still freed by reference
counting. A call whose garbage held a cycle would leak it. These calls, through the app as a
WSGI server calls it, must leave nothing for the collector.
"""

from __future__ import annotations

import gc
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mockagent.server import host
from mockagent.server.app import create_app

ROOT = Path(__file__).resolve().parents[2]
BASE = {
    "SERVER_NAME": "127.0.0.1",
    "SERVER_PORT": "8000",
    "REMOTE_ADDR": "127.0.0.1",
    "REMOTE_PORT": "5",
}


def call(server: Any, path: str, body: Any, headers: str = "A2A-Version: 1.0\r\n") -> bytes:
    """One request as a WSGI server hands it to the app: the status line and the body read."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    environ: dict[str, Any] = {
        **BASE,
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(raw)),
        "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.input": io.BytesIO(raw),
        "wsgi.url_scheme": "http",
    }
    for line in headers.splitlines():
        name, _, value = line.partition(":")
        environ["HTTP_" + name.strip().upper().replace("-", "_")] = value.strip()
    status: list[str] = []
    body_out = server.app(environ, lambda line, headers, exc_info=None: status.append(line))
    try:
        data = b"".join(body_out)
    finally:
        close = getattr(body_out, "close", None)
        if close is not None:
            close()
    return f"HTTP/1.1 {status[0]}\r\n\r\n".encode() + data


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def send(text: str, method: str = "SendMessage") -> dict[str, Any]:
    return rpc(
        method, {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}
    )


@pytest.fixture
def no_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    logging.disable(
        logging.CRITICAL
    )  # a near-miss report is logged; the log is not what is looked at
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)
        if enabled:
            gc.enable()


def cyclic_garbage(calls: Any) -> int:
    gc.collect()
    for _ in range(20):
        calls()
    return gc.collect()


def test_a2a_calls_leave_no_cycles(no_collector):
    server = SimpleNamespace(
        app=create_app(ROOT / "bench" / "cassettes" / "bench.yaml", pace="instant")
    )
    answer = call(server, "/", send("run task"))
    task_id = json.loads(answer.partition(b"\r\n\r\n")[2])["result"]["task"]["id"]
    calls = {
        "direct reply": lambda: call(server, "/", send("ping?")),
        "blocking task": lambda: call(server, "/", send("run task")),
        "stream": lambda: call(server, "/", send("stream nine", "SendStreamingMessage")),
        "GetTask": lambda: call(server, "/", rpc("GetTask", {"id": task_id})),
        "CancelTask of a finished task": lambda: call(
            server, "/", rpc("CancelTask", {"id": task_id})
        ),
        "no interaction matches": lambda: call(server, "/", send("nothing like it")),
        "unknown method": lambda: call(server, "/", rpc("Nope", {})),
        "bad JSON": lambda: call(server, "/", b"{nope"),
        "unknown task": lambda: call(server, "/", rpc("GetTask", {"id": "no-such-task"})),
    }
    assert {name: cyclic_garbage(calls) for name, calls in calls.items()} == dict.fromkeys(calls, 0)


def test_agentex_calls_leave_no_cycles(no_collector):
    server = SimpleNamespace(
        app=create_app(ROOT / "cassettes" / "agentex" / "sync-agent.yaml", pace="instant")
    )
    content = {"type": "text", "author": "user", "content": "what is it?"}
    calls = {
        "message/send": lambda: call(
            server,
            "/agents/agent-sync-1/rpc",
            {"method": "message/send", "params": {"content": content}},
            "",
        ),
        "streamed message/send": lambda: call(
            server,
            "/agents/agent-sync-1/rpc",
            {"method": "message/send", "params": {"content": content, "stream": True}},
            "",
        ),
    }
    assert {name: cyclic_garbage(calls) for name, calls in calls.items()} == dict.fromkeys(calls, 0)


def test_a_worker_freezes_survivors_of_every_collection() -> None:
    frozen_before = gc.get_freeze_count()
    path = ROOT / "cassettes" / "kit"
    options = {"path": path, "store_url": None, "address": ("127.0.0.1", 9), "pace": "instant"}
    try:
        host.load(options, "mockagent")
        gc.collect()
        assert host.freeze_survivors in gc.callbacks and gc.get_freeze_count() > frozen_before
    finally:
        gc.callbacks.remove(host.freeze_survivors)
        gc.unfreeze()
        if host._answers is not None and host._answers.nudge is not None:
            host._answers.nudge.stop()
        host._answers = None
