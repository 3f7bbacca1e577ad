"""Serving makes no reference cycles: what guards `serve`'s collector setting.

`mockagent serve` freezes whatever survives a collection (`cli._freeze_survivors`), so the
collector never walks the tasks again; frozen objects are still freed by reference counting.
A call whose garbage held a cycle would leak it. These calls, through the server's own
request handling and the app, must leave nothing for the collector.
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
from click.testing import CliRunner

from mockagent import cli
from mockagent.server.app import create_app
from mockagent.server.exchange import Exchange

ROOT = Path(__file__).resolve().parents[2]
BASE = {
    "SERVER_NAME": "127.0.0.1",
    "SERVER_PORT": "8000",
    "REMOTE_ADDR": "127.0.0.1",
    "REMOTE_PORT": "5",
}


class Sink:
    def __init__(self) -> None:
        self.data = b""

    def sendall(self, data: bytes) -> None:
        self.data += bytes(data)


def call(server: Any, path: str, body: Any, headers: str = "A2A-Version: 1.0\r\n") -> bytes:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"
        f"Content-Type: application/json\r\n{headers}"
        f"Content-Length: {len(raw)}\r\n\r\n"
    ).encode() + raw
    sink = Sink()
    Exchange(server, sink, io.BytesIO(request), BASE, inline=True).run()
    return sink.data


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


def test_serve_freezes_survivors_while_it_serves_and_leaves_the_collector_as_it_was(monkeypatch):
    seen: dict[str, Any] = {}

    def run(app: Any, sock: Any, announce: Any, threads: int = 32, **how: Any) -> None:
        gc.collect()
        seen.update(callback=cli._freeze_survivors in gc.callbacks, frozen=gc.get_freeze_count())

    monkeypatch.setattr(cli, "_listen", lambda host, port: None)
    monkeypatch.setattr(cli, "_announce", lambda sock, lines, how="": None)
    monkeypatch.setattr(cli, "_run", run)
    frozen_before = gc.get_freeze_count()
    result = CliRunner().invoke(cli.main, ["serve", str(ROOT / "cassettes" / "kit")])
    assert result.exit_code == 0, result.output
    assert seen["callback"] and seen["frozen"] > frozen_before
    assert cli._freeze_survivors not in gc.callbacks and gc.get_freeze_count() == frozen_before
