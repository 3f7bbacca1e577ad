"""One slow or dead webhook receiver never delays another, each delivery ends at its total
deadline, and what is queued or kept is bounded (and what does not fit is reported).

Every receiver is on 127.0.0.1; every wait is a poll with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mockagent.engine.webhooks.delivery import Deliverer, Delivery, DeliveryLog

CUT = "no complete reply within {:g} s: cut at the delivery deadline"


class Trickler:
    """Listening sockets whose every connection gets its reply one byte per `gap` seconds, never
    finishing: a receiver that trickles. One thread serves them all."""

    REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 1_000_000

    def __init__(self, ports: int, gap: float = 0.1) -> None:
        self._selector = selectors.DefaultSelector()
        self._open: dict[socket.socket, int] = {}  # connection → bytes of the reply sent
        self.listeners = []
        for _ in range(ports):
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(16)
            listener.setblocking(False)
            self._selector.register(listener, selectors.EVENT_READ)
            self.listeners.append(listener)
        self.urls = [f"http://127.0.0.1:{s.getsockname()[1]}/hook" for s in self.listeners]
        self._gap, self._stop = gap, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(self._gap):
                conn, _ = key.fileobj.accept()  # type: ignore[union-attr]
                self._open[conn] = 0
            for conn, sent in list(self._open.items()):
                try:  # the request: read and ignored
                    conn.recv(65536, socket.MSG_DONTWAIT)
                except OSError:  # nothing more to read (BlockingIOError), or cut
                    pass
                try:
                    conn.send(self.REPLY[sent : sent + 1])
                    self._open[conn] = sent + 1
                except OSError:  # the deliverer cut it
                    conn.close()
                    del self._open[conn]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock in [*self.listeners, *self._open]:
            sock.close()


class _Healthy(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def healthy() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Healthy)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_ports() -> Iterator[Callable[[], int]]:
    """Ports that accept connections (backlog) but never read or answer."""
    socks: list[socket.socket] = []

    def make() -> int:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        socks.append(sock)
        return int(sock.getsockname()[1])

    yield make
    for sock in socks:
        sock.close()


def poll(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def post(d: Deliverer, url: str, task_id: str = "t") -> None:
    d.post(url, b"{}", {}, task_id=task_id, config_id="c", event="e")


def of(d: Deliverer, task_id: str) -> list[Delivery]:
    return [r for r in d.results() if r.task_id == task_id]


def test_tricklers_are_cut_at_the_deadline_and_never_delay_a_healthy_receiver(
    healthy: str,
) -> None:
    # 40 trickling destinations, more than the 32 workers there once were to share.
    trickler = Trickler(40)
    d = Deliverer(timeout=1.0)
    try:
        for i in range(9):
            for url in trickler.urls if i == 0 else []:
                post(d, url, "slow")
            post(d, healthy, "fast")
        assert poll(lambda: len(of(d, "fast")) == 9, 3.0), (
            f"{len(of(d, 'fast'))} of 9 healthy deliveries after 3 s"
        )
        assert all(r.ok for r in of(d, "fast"))

        # Each trickle is cut at its own 1 s deadline, in parallel (a trickle's whole reply would
        # take days): all of them within a few seconds.
        assert poll(lambda: len(of(d, "slow")) == 40, 4.0), (
            f"{len(of(d, 'slow'))} of 40 trickles ended after 4 s"
        )
        assert {r.error for r in of(d, "slow")} == {CUT.format(1.0)}
    finally:
        d.close()
        trickler.close()


def test_a_full_destination_queue_drops_and_reports(silent_ports: Callable[[], int]) -> None:
    url = f"http://127.0.0.1:{silent_ports()}/hook"
    d = Deliverer(timeout=0.3, queue_size=3)
    try:
        for _ in range(10):
            post(d, url)
        dropped = [r for r in d.results() if r.error and r.error.startswith("dropped:")]
        assert 6 <= len(dropped) <= 7  # 3 waiting, and one in flight if the worker took it
        assert dropped[0].error == (
            f"dropped: 3 deliveries to {url.removesuffix('/hook')} are already waiting "
            "(the receiver is slow or down)"
        )
        assert d.wait_idle(6)
    finally:
        d.close()


def test_too_many_busy_destinations_drop_and_report(
    silent_ports: Callable[[], int], healthy: str
) -> None:
    d = Deliverer(timeout=1.0, max_destinations=2)
    try:
        for _ in range(2):
            post(d, f"http://127.0.0.1:{silent_ports()}/hook", "slow")
        post(d, healthy, "third")
        [third] = of(d, "third")
        assert third.error == (
            "dropped: 2 other webhook destinations are busy (slow or dead receivers)"
        )
        assert d.wait_idle(5)
        post(d, healthy, "later")  # the busy ones are done: room again
        assert d.wait_idle(5)
        assert [r.ok for r in of(d, "later")] == [True]
    finally:
        d.close()


def test_deliveries_waiting_over_all_destinations_are_bounded(
    silent_ports: Callable[[], int],
) -> None:
    d = Deliverer(timeout=0.3, max_queued=3)
    try:
        for _ in range(2):
            url = f"http://127.0.0.1:{silent_ports()}/hook"
            post(d, url, "a")
            post(d, url, "b")
        assert [r.error for r in of(d, "b")][-1:] == [
            "dropped: 3 deliveries are already waiting (slow or dead receivers)"
        ]
        assert d.wait_idle(5)
    finally:
        d.close()


def test_results_kept_are_bounded_and_the_dropped_counted(healthy: str) -> None:
    d = Deliverer(results_kept=5)
    try:
        for i in range(8):
            post(d, healthy, f"t{i}")
        assert d.wait_idle(5)
        assert [r.task_id for r in d.results()] == [f"t{i}" for i in range(3, 8)]
        assert d.results_dropped == 3
    finally:
        d.close()


def test_a_delivery_log_keeps_the_last_ones() -> None:
    log = DeliveryLog(size=2)
    for seq in range(1, 5):
        log.append(Delivery(seq, "u", "t", "c", "e", 204, None))
    assert [d.seq for d in log] == [3, 4]
    assert (len(log), log.dropped) == (2, 2)


def test_bytes_waiting_over_all_destinations_are_bounded(
    silent_ports: Callable[[], int],
) -> None:
    d = Deliverer(timeout=0.3, max_queued_bytes=1_000_000)
    try:
        url = f"http://127.0.0.1:{silent_ports()}/hook"
        for i in range(10):  # a v0.3 task's body is the whole task: it can be large
            d.post(url, b"x" * 300_000 + bytes([i]), {}, task_id="big", config_id="c", event="e")
        dropped = [r.error for r in of(d, "big") if r.error and r.error.startswith("dropped:")]
        assert len(dropped) == 7  # 3 of 300 KB fit in 1 MB, whether waiting or in flight
        assert dropped[0] == (
            "dropped: 900,003 bytes of deliveries are already waiting, and this body of "
            "300,001 bytes would go past 1,000,000 (slow or dead receivers)"
        )
        shared = b"y" * 300_000  # one event's body, posted to each of a task's webhooks
        for _ in range(3):
            d.post(url, shared, {}, task_id="shared", config_id="c", event="e")
        assert len(of(d, "shared")) == 3  # all dropped: no room for it
        assert d.wait_idle(6)
        for _ in range(5):  # room again; a body shared by POSTs counts once (not 1.5 MB)
            d.post(url, shared, {}, task_id="again", config_id="c", event="e")
        assert not [r for r in of(d, "again") if r.error and r.error.startswith("dropped:")]
        assert d.wait_idle(6)
    finally:
        d.close()


def test_one_body_past_the_byte_bound_is_still_sent(healthy: str) -> None:
    d = Deliverer(max_queued_bytes=10)
    try:
        d.post(healthy, b"{}" * 100, {}, task_id="big", config_id="c", event="e")
        assert d.wait_idle(5)
        assert [r.ok for r in of(d, "big")] == [True]
    finally:
        d.close()
