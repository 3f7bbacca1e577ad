"""The fixture's server (werkzeug's, in a thread): quick to start and stop, and the HTTP
behaviour clients rely on. Streams going out event by event are tests/streams'."""

from __future__ import annotations

import http.client
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
from tests.helpers.http_checks import (
    check_body_over_the_limit,
    check_expect_100_continue,
)

KIT = Path(__file__).resolve().parents[2] / "cassettes" / "kit"


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
    check_expect_100_continue(server.host, server.port)


def test_a_body_over_the_limit_is_a_413_in_the_protocols_shape(server: ServerThread) -> None:
    check_body_over_the_limit(server.url)


def test_a_port_in_use_is_an_os_error_not_an_exit(app: Flask) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        with pytest.raises(OSError):
            ServerThread(app, port=taken.getsockname()[1])
