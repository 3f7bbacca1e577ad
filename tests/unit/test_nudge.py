"""A worker with streams open nudges granian's thread pool (mockagent.server.nudge): while it is
busy, a request for the health route reaches the listening socket every interval; while it is
not, nothing does. tests/scale/test_slow_clients.py is the stream that waited for ever without."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from mockagent.server.health import HEALTH_PATH
from mockagent.server.nudge import Nudge

EVERY_S = 0.02
WAIT_S = 10.0


@contextmanager
def listening() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(WAIT_S)
    with server:
        yield server


def request_of(conn: socket.socket) -> bytes:
    conn.settimeout(WAIT_S)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(1024)
        assert chunk, data
        data += chunk
    return data


def test_a_busy_worker_asks_its_health_route_every_interval() -> None:
    with listening() as server:
        port = server.getsockname()[1]
        nudge = Nudge(server.getsockname(), lambda: True, every_s=EVERY_S).start()
        try:
            for _ in range(2):  # again after a nudge that got no answer
                conn, _ = server.accept()
                with conn:
                    request = request_of(conn)
                assert request.startswith(f"OPTIONS {HEALTH_PATH} HTTP/1.1\r\n".encode()), request
                assert f"\r\nHost: 127.0.0.1:{port}\r\n".encode() in request
        finally:
            nudge.stop()


def test_an_idle_worker_sends_nothing() -> None:
    asked = threading.Semaphore(0)

    def busy() -> bool:
        asked.release()
        return False

    with listening() as server:
        nudge = Nudge(server.getsockname(), busy, every_s=EVERY_S).start()
        try:
            for _ in range(3):
                assert asked.acquire(timeout=WAIT_S)
            server.setblocking(False)
            try:
                conn, _ = server.accept()
            except BlockingIOError:
                pass  # nothing connected
            else:
                conn.close()
                raise AssertionError("an idle worker nudged its pool")
        finally:
            nudge.stop()


def test_a_socket_on_every_address_is_nudged_on_loopback() -> None:
    assert Nudge(("0.0.0.0", 8000), lambda: False).address == ("127.0.0.1", 8000)
    assert Nudge(("::", 8000, 0, 0), lambda: False).address == ("::1", 8000)
    assert Nudge(("10.0.0.5", 8000), lambda: False).address == ("10.0.0.5", 8000)
