"""`mockagent serve` on granian: the HTTP behaviour clients rely on, and the two private granian
hooks mockagent.server.host uses (a socket we listen on, and ending streams at a stop). A granian
release that changes either fails here."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mockagent.cli.main import READY
from mockagent.server.sockets import listen
from tests.helpers.http_checks import (
    V1,
    check_body_over_the_limit,
    check_expect_100_continue,
    message,
)

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "cassettes" / "kit"


class Served:
    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc, self.port = proc, port
        self.url = f"http://127.0.0.1:{port}"

    def stop(self, signum: int = signal.SIGTERM) -> tuple[float, str, str]:
        """Seconds the stop took, stdout after the ready line, stderr."""
        started = time.monotonic()
        self.proc.send_signal(signum)
        out, err = self.proc.communicate(timeout=30)
        return time.monotonic() - started, out, err


@contextlib.contextmanager
def serving(*args: str) -> Iterator[Served]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its workers too can be killed at the end, as a group
    )
    try:
        while not (line := proc.stdout.readline()).startswith(READY):  # type: ignore[union-attr]
            assert line, f"serve exited: {proc.wait()} {proc.stderr.read()}"  # type: ignore[union-attr]
        port = int(line.split()[3].rsplit(":", 1)[1])
        assert port not in (0, 8000)  # the port granian serves on is the one printed
        yield Served(proc, port)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()


@pytest.fixture(scope="module")
def server() -> Iterator[Served]:
    with serving("--max-body", "1000", "--pace", "scale=0.5") as running:
        yield running


def test_a_stop_ends_open_streams_and_the_workers_promptly() -> None:
    with serving() as served:
        sent = httpx.post(
            f"{served.url}/deployer/message:send", headers=V1, json=message("Deploy build 42")
        ).json()
        assert sent["task"]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
        ended = threading.Event()

        def subscribe() -> None:  # open until the task ends, and it never does by itself
            url = f"{served.url}/deployer/tasks/{sent['task']['id']}:subscribe"
            with httpx.stream("GET", url, headers=V1, timeout=30) as response:
                for _ in response.iter_lines():
                    pass
            ended.set()

        readers = [threading.Thread(target=subscribe, daemon=True) for _ in range(3)]
        for reader in readers:
            reader.start()
        time.sleep(0.3)  # the subscriptions reach the worker (nothing to poll for from here)
        took, out, err = served.stop()
    assert served.proc.returncode == 0 and out == "mockagent stopped\n", err
    assert took < 4, f"the stop took {took:.1f} s: it waited for the open streams"
    assert ended.wait(5), "the subscriptions were not ended"
    assert "Traceback" not in err


def test_keep_alive_answers_several_calls_on_one_connection(server: Served) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for _ in range(3):
            connection.request("GET", "/deployer/.well-known/agent-card.json")
            response = connection.getresponse()
            assert response.status == 200 and json.loads(response.read())["name"]
            local = connection.sock.getsockname()
            assert response.getheader("connection", "keep-alive").lower() != "close"
        assert connection.sock.getsockname() == local  # the same connection throughout
    finally:
        connection.close()


def test_head_has_the_headers_and_no_body(server: Served) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"HEAD /deployer/.well-known/agent-card.json HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        sock.sendall(b"GET /deployer/.well-known/agent-card.json HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        reader = sock.makefile("rb")
        head = http.client.HTTPResponse(sock, method="HEAD")
        head.fp = reader
        head.begin()
        assert head.status == 200 and int(head.getheader("content-length")) > 0
        after = http.client.HTTPResponse(sock, method="GET")
        after.fp = reader  # the next answer starts right after the head's headers: no body
        after.begin()
        assert json.loads(after.read())["name"]


def test_expect_100_continue(server: Served) -> None:
    check_expect_100_continue("127.0.0.1", server.port)


def test_a_body_over_the_limit_is_a_413_in_the_protocols_shape(server: Served) -> None:
    check_body_over_the_limit(server.url)


def test_a_paced_stream_goes_out_event_by_event(server: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage"}
    body["params"] = message("Run the tests at 9f3c2e1")
    arrived: list[float] = []
    with httpx.stream("POST", f"{server.url}/test-runner/", headers=V1, json=body) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                arrived.append(time.monotonic())
    assert len(arrived) == 9
    gaps = [b - a for a, b in zip(arrived, arrived[1:], strict=False)]
    assert sum(gap > 0.03 for gap in gaps) >= 5, gaps  # not all at once at the end


def test_fresh_calls_are_answered_while_forty_streams_are_open(server: Served) -> None:
    sent = httpx.post(
        f"{server.url}/deployer/message:send", headers=V1, json=message("Deploy build 7")
    ).json()
    url = f"{server.url}/deployer/tasks/{sent['task']['id']}:subscribe"
    with contextlib.ExitStack() as streams, httpx.Client(timeout=10) as client:
        for _ in range(40):  # each holds a thread until the task ends: it does not, here
            response = streams.enter_context(client.stream("GET", url, headers=V1))
            assert next(response.iter_lines()).startswith("data: ")
        with httpx.Client(timeout=5) as fresh:
            card = fresh.get(f"{server.url}/deployer/.well-known/agent-card.json")
            assert card.status_code == 200
            answered = fresh.post(
                f"{server.url}/test-runner/message:send", headers=V1, json=message("hi?")
            )
            assert answered.status_code == 200


def test_accepted_connections_write_at_once() -> None:
    """granian serves on the socket `serve` listens on: without TCP_NODELAY there (accepted
    connections inherit it), a stream's second write waited for the client's delayed ACK, and a
    9-event stream took 4–44 ms instead of 0.3."""
    sock = listen("127.0.0.1", 0)
    try:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        sock.close()
