"""The fixture's server (werkzeug's, in a thread): quick to start and stop, and the HTTP
behaviour clients rely on. Streams going out event by event are tests/streams'."""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from flask import Flask

from mockagent.server.app import create_app
from mockagent.server.thread import ServerThread

KIT = Path(__file__).resolve().parents[2] / "cassettes" / "kit"
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def app() -> Iterator[Flask]:
    app = create_app(KIT, pace="instant", max_body=1000)
    yield app
    app.extensions["mockagent"].close()


@pytest.fixture
def server(app: Flask) -> Iterator[ServerThread]:
    running = ServerThread(app).start()
    yield running
    running.stop()


def message(text: str) -> dict[str, object]:
    return {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}}


def test_start_and_stop_take_at_most_20_ms(app: Flask) -> None:
    starts, stops = [], []
    with httpx.Client() as client:
        for _ in range(7):
            began = time.perf_counter()
            server = ServerThread(app).start()
            starts.append(time.perf_counter() - began)
            assert client.get(server.card_url("deployer")).status_code == 200
            began = time.perf_counter()
            server.stop()
            stops.append(time.perf_counter() - began)
    assert statistics.median(starts) <= 0.020 and statistics.median(stops) <= 0.020, (starts, stops)


def test_a_stopped_server_no_longer_listens(app: Flask) -> None:
    server = ServerThread(app).start()
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.card_url("deployer"), timeout=2)


def test_head_has_the_headers_and_no_body(server: ServerThread) -> None:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request("HEAD", "/deployer/.well-known/agent-card.json")
        response = connection.getresponse()
        assert response.status == 200 and int(response.getheader("content-length")) > 0
        assert response.read() == b""
    finally:
        connection.close()


def test_expect_100_continue(server: ServerThread) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message("hi?")}
    )
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(
            f"POST /test-runner/ HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Expect: 100-continue\r\n\r\n".encode()
        )
        reader = sock.makefile("rb")
        assert reader.readline().startswith(b"HTTP/1.1 100")
        assert reader.readline() == b"\r\n"
        sock.sendall(body.encode())
        answer = http.client.HTTPResponse(sock)
        answer.fp = reader
        answer.begin()
        assert answer.status == 200 and json.loads(answer.read())["id"] == 1


def test_a_body_over_the_limit_is_a_413_in_the_protocols_shape(server: ServerThread) -> None:
    big = {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": message("x" * 2000)}
    answer = httpx.post(f"{server.url}/test-runner/", headers=V1, json=big)
    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == -32600 and "1000 bytes" in answer.text
    chunked = httpx.post(
        f"{server.url}/test-runner/message:send",
        headers=V1,
        content=iter([json.dumps(message("y" * 2000)).encode()]),  # no length: chunked
    )
    assert chunked.status_code == 413 and chunked.json()["error"]["code"] == 413


def test_a_port_in_use_is_an_os_error_not_an_exit(app: Flask) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        with pytest.raises(OSError):
            ServerThread(app, port=taken.getsockname()[1])
