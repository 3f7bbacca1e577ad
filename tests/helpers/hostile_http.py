"""Hostile HTTP over raw sockets: requests no well-behaved client sends, a reader of the answers
that never waits longer than a deadline, and the two servers they go to: `mockagent serve` as a
process and the pytest fixture's server in a thread.

Every read has a deadline, so a server that hangs fails a probe instead of the suite.
"""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockagent.server.thread import serve_in_thread

HOST = "127.0.0.1"
TIMEOUT = 3.0  # the longest any probe waits for an answer: longer is a hang
SETTLE = 0.25  # after an answer, how long a second (smuggled) one gets to show up
MAX_BODY = 65536  # both servers run with this body limit
TICKS = 1200  # the ticker stream sends an event every 50 ms for a minute

AGENT = """\
version: 1
agent:
  name: probe
  description: Answers hostile HTTP.
  capabilities: {streaming: true}
  skills: [{id: s, name: S, description: Answers.}]
clock: {start: 2026-10-06T09:00:00Z, pace: recorded}
interactions:
  - name: ticker
    match: {text: tick}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
%s
  - name: hello
    reply: {message: Hi.}
"""
TICK = "          - {artifact: {artifactId: t, parts: [{text: .}]}, append: true, after: {ms: 50}}"


def write_agent(folder: Path) -> Path:
    """The probes' cassette (a greeting for any message, a minute-long stream for "tick")."""
    path = folder / "probe.yaml"
    path.write_text(AGENT % "\n".join([TICK] * TICKS))
    return path


def rpc(method: str = "SendMessage", text: str = "hello", request_id: int = 1) -> bytes:
    """A JSON-RPC call of `method` with a user message."""
    message = {"messageId": f"m-{request_id}", "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


def post(body: bytes, path: str = "/", extra: str = "", version: str = "HTTP/1.1") -> bytes:
    """A POST with a Content-Length (`extra`: more header lines, each ending in CRLF)."""
    return (
        f"POST {path} {version}\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    ).encode() + body


def get(path: str = "/.well-known/agent-card.json", method: str = "GET", extra: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\n{extra}\r\n".encode()


def chunked(*chunks: bytes) -> bytes:
    """`chunks` framed as a chunked body, ending with the last chunk."""
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks if c) + b"0\r\n\r\n"


SMUGGLED = get(extra="X-Smuggled: yes\r\n")
"""A request hidden in a body: the server must never answer it."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # names lowercased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answers:
    """What came back on one connection."""

    responses: list[Response] = field(default_factory=list)
    interim: list[int] = field(default_factory=list)  # 1xx statuses
    closed: bool = False  # the server closed (or reset) the connection
    hung: bool = False  # the deadline passed before an answer (or before the expected ones)
    rest: bytes = b""  # bytes that are not (yet) a whole response

    @property
    def statuses(self) -> list[int]:
        return [r.status for r in self.responses]

    def __str__(self) -> str:
        return (
            f"statuses {self.statuses}, interim {self.interim}, closed {self.closed}, "
            f"hung {self.hung}, first bytes {self._first!r}"
        )

    @property
    def _first(self) -> bytes:
        return (self.responses[0].body if self.responses else self.rest)[:200]


HEAD_END = re.compile(rb"\r?\n\r?\n")
STATUS_LINE = re.compile(r"HTTP/1\.[01] (\d{3})")


def parse(data: bytes, closed: bool, heads: int = 0, answers: Answers | None = None) -> Answers:
    """Whole responses at the start of `data`; the first `heads` answer HEAD requests."""
    out = answers or Answers()
    out.responses, out.interim = [], []
    while (end := HEAD_END.search(data)) is not None:
        lines = data[: end.start()].decode("latin-1").splitlines()
        if not (status_line := STATUS_LINE.match(lines[0])):
            break  # not a response: left in `rest` for the probe to show
        status = int(status_line.group(1))
        headers = dict(
            (name.strip().lower(), value.strip())
            for name, _, value in (line.partition(":") for line in lines[1:])
        )
        rest = data[end.end() :]
        if 100 <= status < 200:
            out.interim.append(status)
            data = rest
            continue
        if len(out.responses) < heads or status in (204, 304):
            body, data = b"", rest
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            found = _dechunk(rest)
            if found is None:
                break
            body, data = found
        elif "content-length" in headers:
            size = int(headers["content-length"])
            if len(rest) < size:
                break
            body, data = rest[:size], rest[size:]
        elif closed:  # the body runs to the end of the connection
            body, data = rest, b""
        else:
            break
        out.responses.append(Response(status, headers, body))
    out.rest, out.closed = data, closed
    return out


def _dechunk(data: bytes) -> tuple[bytes, bytes] | None:
    body = b""
    while (line_end := data.find(b"\r\n")) >= 0:
        size = int(data[:line_end].split(b";")[0], 16)
        start = line_end + 2
        if size == 0:
            trailer_end = data.find(b"\r\n\r\n", line_end)
            return (body, data[trailer_end + 4 :]) if trailer_end >= 0 else None
        if len(data) < start + size + 2:
            return None
        body += data[start : start + size]
        data = data[start + size + 2 :]
    return None


def connect(port: int, timeout: float = TIMEOUT) -> socket.socket:
    sock = socket.create_connection((HOST, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def reset(sock: socket.socket) -> None:
    """Close with a TCP reset, as a client that crashed or gave up does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def receive(
    sock: socket.socket,
    expect: int = 1,
    heads: int = 0,
    timeout: float = TIMEOUT,
    settle: float = SETTLE,
) -> Answers:
    """Read until the server closes, or until `expect` responses came and nothing more for
    `settle` seconds; `hung` when `timeout` passes first."""
    data, closed = b"", False
    answers = Answers()
    deadline = time.monotonic() + timeout
    quiet_until: float | None = None  # set once the expected answers are in
    while True:
        now = time.monotonic()
        if quiet_until is not None and now >= quiet_until:
            break
        if now >= deadline:
            answers.hung = quiet_until is None
            break
        sock.settimeout(min(deadline, quiet_until or deadline) - now)
        try:
            got = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionError:  # a reset: the server is gone from this connection
            closed = True
            break
        if not got:
            closed = True
            break
        data += got
        parse(data, False, heads, answers)
        if quiet_until is None and len(answers.responses) >= expect:
            quiet_until = time.monotonic() + settle
    return parse(data, closed, heads, answers)


def exchange(
    port: int, data: bytes, expect: int = 1, heads: int = 0, settle: float = SETTLE
) -> Answers:
    """Send `data` on a new connection and read the answers (see `receive`)."""
    with connect(port) as sock:
        try:
            sock.sendall(data)
        except ConnectionError:  # refused half way: what it answered is still to be read
            pass
        return receive(sock, expect, heads, settle=settle)


def timed_call(port: int) -> float:
    """Seconds a new client takes to connect, send a call and have its whole answer."""
    start = time.perf_counter()
    answers = exchange(port, post(rpc(), extra="Connection: close\r\n"), settle=0)
    elapsed = time.perf_counter() - start
    assert answers.statuses == [200], str(answers)
    return elapsed


@dataclass
class Target:
    """A server under probe: its port, how many threads it runs now, and how many it ran when
    idle (taken once it served a call and a stream)."""

    name: str
    port: int
    threads: Callable[[], int]
    idle: int = 0
    grpc: int | None = None  # the gRPC port, when it serves gRPC


def process_threads(pid: int) -> int:
    """Threads of process `pid` and all its descendants (Linux /proc)."""
    total, pids = 0, [pid]
    while pids:
        current = pids.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
            total += len(tasks)
            for task in tasks:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
                pids.extend(int(child) for child in children)
        except (FileNotFoundError, ProcessLookupError):
            pass  # gone meanwhile
    return total


def serve_command(cassette: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mockagent.cli",
        "serve",
        str(cassette),
        "--port",
        "0",
        "--max-body",
        str(MAX_BODY),
        *extra,
    ]


@contextmanager
def serve_process(cassette: Path, *extra: str) -> Iterator[Target]:
    """`mockagent serve` (with the options `extra`) on port 0 in a subprocess, once it printed
    its ready line. Its output goes to files: a pipe nobody reads would fill and stop the
    server."""
    out, err = cassette.with_suffix(".out"), cassette.with_suffix(".err")
    with out.open("wb") as stdout, err.open("wb") as stderr:
        server = subprocess.Popen(serve_command(cassette, *extra), stdout=stdout, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        while not (ready := re.search(r"mockagent ready on http://[^:]+:(\d+)", out.read_text())):
            assert server.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "no ready line: " + err.read_text()
            time.sleep(0.01)  # polling the output for the line, not sleeping for readiness
        grpc = re.search(r"and gRPC on [^ ]+:(\d+)", out.read_text())
        yield Target(
            "serve",
            int(ready.group(1)),
            lambda: process_threads(server.pid),
            grpc=int(grpc.group(1)) if grpc else None,
        )
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def fixture_server(cassette: Path, grpc_port: int | None = None) -> Iterator[Target]:
    """The pytest fixture's server (in this process: its threads are this process's), with
    gRPC beside it on `grpc_port` (0: a free one)."""
    with serve_in_thread(cassette, max_body=MAX_BODY, grpc_port=grpc_port) as server:
        grpc = int(server.grpc_target.rsplit(":", 1)[1]) if grpc_port is not None else None
        yield Target("fixture", server.port, threading.active_count, grpc=grpc)


TARGETS: dict[str, Callable[[Path], Any]] = {"serve": serve_process, "fixture": fixture_server}
"""How each target starts, by name (a probe run against another server replaces an entry)."""
