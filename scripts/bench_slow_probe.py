"""Slow and silent clients against a real `mockagent serve`, over raw sockets, for
scripts/bench_slow.py: stalled uploads, open SSE streams, clients that never read; and how fast
fresh calls are answered meanwhile, and the serving process's memory.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import time
from pathlib import Path

BIG_EVENTS = 256
BIG_EVENT_BYTES = 32 * 1024
"""The big stream: 256 artifact events of 32 KB of text each, 8 MB in all."""
HEAD = (
    "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
)


def send_body(method: str, text: str, pad: int = 0) -> bytes:
    """A JSON-RPC request whose message says `text` (with `pad` bytes of metadata)."""
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    if pad:
        message["metadata"] = {"pad": "x" * pad}
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    return json.dumps(payload).encode()


def write_cassette(path: Path) -> Path:
    """A cassette with a direct reply (`ping?`), a stream that stays open for an hour
    (`hold`: WORKING, then nothing until its last step) and an 8 MB stream (`big`)."""
    big = [
        {
            "artifact": {
                "artifactId": "big",
                "parts": [{"text": f"{i:06d}" + "x" * (BIG_EVENT_BYTES - 6)}],
            },
            "append": i > 0,
            "lastChunk": i == BIG_EVENTS - 1,
        }
        for i in range(BIG_EVENTS)
    ]
    cassette = {
        "version": 1,
        "protocol": "a2a",
        "agent": {
            "name": "slow",
            "description": "slow clients",
            "version": "1",
            "capabilities": {"streaming": True},
            "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
        },
        "interactions": [
            {"name": "ping", "match": {"text": "ping?"}, "reply": {"message": "pong"}},
            {
                "name": "hold",
                "match": {"text": "hold"},
                "reply": {
                    "task": {
                        "steps": [
                            {"state": "TASK_STATE_WORKING"},
                            {"state": "TASK_STATE_COMPLETED", "after": {"ms": 3_600_000}},
                        ]
                    }
                },
            },
            {
                "name": "big",
                "match": {"text": "big"},
                "reply": {"task": {"steps": [*big, {"state": "TASK_STATE_COMPLETED"}]}},
            },
        ],
    }
    path.write_text(json.dumps(cassette))  # JSON is YAML, and far faster to write and load
    return path


class Serve:
    """`mockagent serve CASSETTE --port 0 FLAGS...` in a session of its own, ready."""

    def __init__(self, mockagent: str, cassette: Path, *flags: str) -> None:
        self.proc = subprocess.Popen(
            [mockagent, "serve", str(cassette), "--port", "0", *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("mockagent ready"):
                found = re.search(r":(\d+)", line.split(" on ")[1])
                assert found is not None, line
                self.port = int(found[1])
                return
        raise RuntimeError("mockagent serve did not start")

    def rss_mb(self) -> float:
        """The resident memory of the server's processes (serve and its workers), in MB."""
        pids = [self.proc.pid]
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        if children.exists():
            pids += [int(p) for p in children.read_text().split()]
        total = 0
        for pid in pids:
            status = Path(f"/proc/{pid}/status")
            found = re.search(r"VmRSS:\s+(\d+)", status.read_text()) if status.exists() else None
            total += int(found[1]) if found else 0
        return total / 1024

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def connect(port: int, rcvbuf: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:  # before connect: it sets the window the server may fill
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    return sock


def stalled_uploads(
    port: int, count: int, declared: int = 1000, sent: int = 5
) -> list[socket.socket]:
    """`count` connections that each sent a POST's head declaring `declared` body bytes, then
    `sent` of them, and nothing more."""
    out = []
    for _ in range(count):
        sock = connect(port)
        sock.sendall(f"{HEAD}Content-Length: {declared}\r\n\r\n".encode() + b"{" * sent)
        out.append(sock)
    return out


def streams(port: int, count: int, text: str, rcvbuf: int | None = None) -> list[socket.socket]:
    """`count` SendStreamingMessage calls whose answers nobody reads (`rcvbuf`: the client's
    receive buffer, small for a client that reads nothing)."""
    body = send_body("SendStreamingMessage", text)
    out = []
    for _ in range(count):
        sock = connect(port, rcvbuf)
        sock.sendall(f"{HEAD}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        out.append(sock)
    return out


def answered_with(socks: list[socket.socket], marker: bytes, timeout: float) -> int:
    """How many of `socks` got an answer whose status line holds `marker` (b" 408 ") within
    `timeout` seconds in all."""
    deadline, count = time.monotonic() + timeout, 0
    for sock in socks:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            count += marker in sock.recv(64).split(b"\r\n", 1)[0]
        except OSError:
            pass
    return count


def deadline_cost_us(cassette: Path, calls: int) -> dict[str, float]:
    """The p50 of a direct-reply SendMessage through the app's WSGI callable, in this process,
    with the body deadline (the default) and without (`body_timeout=None`), in alternating
    blocks of 100 calls so that both see the same load from the rest of the machine; µs."""
    from mockagent.server.app import create_app

    body = send_body("SendMessage", "ping?", pad=850)  # some 1 KB
    apps = {
        "without": create_app(cassette, body_timeout=None).wsgi_app,
        "with": create_app(cassette, body_timeout=10.0).wsgi_app,
    }
    times: dict[str, list[float]] = {name: [] for name in apps}
    for _ in range(max(calls // 100, 1)):
        for name, app in apps.items():
            for _ in range(100):
                environ = {
                    "REQUEST_METHOD": "POST",
                    "PATH_INFO": "/",
                    "SERVER_NAME": "127.0.0.1",
                    "SERVER_PORT": "80",
                    "HTTP_HOST": "127.0.0.1",
                    "CONTENT_TYPE": "application/json",
                    "CONTENT_LENGTH": str(len(body)),
                    "wsgi.input": io.BytesIO(body),
                    "wsgi.url_scheme": "http",
                }
                started = time.perf_counter()
                b"".join(app(environ, lambda status, headers: None))
                times[name].append((time.perf_counter() - started) * 1e6)
    return {name: statistics.median(found) for name, found in times.items()}


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def fresh_calls_ms(port: int, rounds: int, timeout: float = 30.0) -> list[float]:
    """The latency of each fresh call (agent SendMessage, card GET, admin GET), `rounds` times
    each, on a new connection per call; ms."""
    ping = send_body("SendMessage", "ping?")
    calls = [
        ("POST", "/", ping),
        ("GET", "/.well-known/agent-card.json", None),
        ("GET", "/_mockagent/calls", None),
    ]
    out = []
    for _ in range(rounds):
        for method, path, body in calls:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            started = time.perf_counter()
            conn.request(method, path, body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            answer.read()
            out.append((time.perf_counter() - started) * 1000)
            conn.close()
            if answer.status != 200:
                raise RuntimeError(f"{method} {path} answered {answer.status}")
    return out
