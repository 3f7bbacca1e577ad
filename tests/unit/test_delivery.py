"""Deliverer: real webhook POSTs to receivers on 127.0.0.1, never blocking the caller.

No fixed sleeps: every wait is `wait_idle()` or a polling loop with a deadline, so the tests are as
fast as the machine allows and fail with a message instead of hanging.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mockagent.engine.webhooks.delivery import CLOSED, THREAD_PREFIX, Deliverer, Delivery


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A webhook receiver: records every request and answers `status`."""

    url: str
    status: int = 204
    requests: list[Received] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    server: _RecordingServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        receiver = self.server.receiver
        receiver.requests.append(
            Received(self.command, self.path, dict(self.headers.items()), body)
        )
        self.send_response(receiver.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass


class _RecordingServer(ThreadingHTTPServer):
    daemon_threads = True
    receiver: Receiver


@pytest.fixture
def make_receiver() -> Iterator[Callable[[], Receiver]]:
    """`make_receiver()` → a running Receiver on 127.0.0.1:<free port>; all stopped after the
    test."""
    servers: list[_RecordingServer] = []

    def make() -> Receiver:
        server = _RecordingServer(("127.0.0.1", 0), _Handler)
        server.receiver = Receiver(f"http://127.0.0.1:{server.server_address[1]}/hook")
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()
        servers.append(server)
        return server.receiver

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def receiver(make_receiver: Callable[[], Receiver]) -> Receiver:
    return make_receiver()


@pytest.fixture
def deliverer() -> Iterator[Deliverer]:
    d = Deliverer(timeout=2.0)
    yield d
    d.close()


@pytest.fixture
def closed_port() -> int:
    """A port nobody listens on: bound, then released."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that completes the TCP handshake (backlog) but never accepts, reads or answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock.getsockname()[1]
    sock.close()


def post(
    d: Deliverer, url: str, body: bytes = b"{}", headers: dict[str, str] | None = None, **ids: str
) -> None:
    d.post(
        url,
        body,
        headers or {},
        task_id=ids.get("task_id", "task-1"),
        config_id=ids.get("config_id", "cfg-1"),
        event=ids.get("event", "statusUpdate"),
    )


def poll(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """True as soon as `condition()` holds; False after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


CUT = "no complete reply within %g s: cut at the delivery deadline"


def push_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)}


def test_body_and_headers_arrive_exactly(deliverer: Deliverer, receiver: Receiver) -> None:
    body = b'{"statusUpdate":{"taskId":"task-1","status":{"state":"TASK_STATE_WORKING"}}}'
    headers = {"Authorization": "Bearer secret-x", "X-A2A-Notification-Token": "tok-1"}

    deliverer.post(
        receiver.url, body, headers, task_id="task-1", config_id="cfg-1", event="statusUpdate"
    )

    assert deliverer.wait_idle()
    [got] = receiver.requests
    assert (got.method, got.path, got.body) == ("POST", "/hook", body)
    assert got.headers["Authorization"] == "Bearer secret-x"
    assert got.headers["X-A2A-Notification-Token"] == "tok-1"
    assert got.headers["Content-Type"] == "application/json"
    assert deliverer.results() == [
        Delivery(1, receiver.url, "task-1", "cfg-1", "statusUpdate", status=204, error=None)
    ]
    assert deliverer.results()[0].ok


def test_content_type_is_always_json(deliverer: Deliverer, receiver: Receiver) -> None:
    post(deliverer, receiver.url, headers={"content-type": "text/plain"})

    assert deliverer.wait_idle()
    assert receiver.requests[0].headers["Content-Type"] == "application/json"


def test_order_is_kept_per_destination(deliverer: Deliverer, receiver: Receiver) -> None:
    for i in range(20):
        post(deliverer, receiver.url, body=f'{{"n":{i}}}'.encode(), event=f"e{i}")

    assert deliverer.wait_idle()
    assert [r.body for r in receiver.requests] == [f'{{"n":{i}}}'.encode() for i in range(20)]
    results = deliverer.results()
    assert [r.seq for r in results] == list(range(1, 21))
    assert [r.event for r in results] == [f"e{i}" for i in range(20)]
    assert all(r.ok for r in results)


def test_http_error_is_a_failed_result(deliverer: Deliverer, receiver: Receiver) -> None:
    receiver.status = 500
    post(deliverer, receiver.url)

    assert deliverer.wait_idle()
    [result] = deliverer.results()
    assert (result.status, result.error, result.ok) == (500, "HTTP 500", False)
    assert len(receiver.requests) == 1  # one attempt, no retries


def test_redirect_is_reported_not_followed(deliverer: Deliverer, receiver: Receiver) -> None:
    receiver.status = 302  # no Location: following it would turn the POST into a GET anyway
    post(deliverer, receiver.url)

    assert deliverer.wait_idle()
    [result] = deliverer.results()
    assert (result.status, result.error) == (302, "HTTP 302")


def test_closed_port_fails_quickly(deliverer: Deliverer, closed_port: int) -> None:
    post(deliverer, f"http://127.0.0.1:{closed_port}/hook")

    assert deliverer.wait_idle(timeout=1.0)  # well under the 2 s attempt timeout
    [result] = deliverer.results()
    assert (result.status, result.error, result.ok) == (None, "connection refused", False)


def test_silent_destination_does_not_delay_others(receiver: Receiver, silent_port: int) -> None:
    slow_url = f"http://127.0.0.1:{silent_port}/hook"
    d = Deliverer(timeout=0.5)
    try:
        started = time.monotonic()
        post(d, slow_url, task_id="slow")
        took = time.monotonic() - started
        for _ in range(3):
            post(d, receiver.url, task_id="fast")

        # Blocking would take the whole 0.5 s attempt; the margin is for a loaded machine.
        assert took < 0.4, f"post() to a silent destination took {took:.3f} s"
        assert poll(lambda: len(d.results()) == 3), "the healthy receiver's deliveries never came"
        assert [r.task_id for r in d.results()] == ["fast"] * 3
        assert all(r.ok for r in d.results())
        assert not d.wait_idle(timeout=0)  # the silent one is still in flight

        assert d.wait_idle(timeout=3.0)
        slow = [r for r in d.results() if r.task_id == "slow"]
        assert [(r.status, r.error) for r in slow] == [(None, CUT % 0.5)]
    finally:
        d.close()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/hook", "unsupported URL scheme 'ftp'"),
        ("file:///etc/passwd", "unsupported URL scheme 'file'"),
        ("not a url", "unsupported URL scheme ''"),
        ("http:///no-host", "no host"),
        ("http://127.0.0.1:99999/hook", "invalid URL"),
        ("http://[::1/hook", "invalid URL"),
    ],
)
def test_unsendable_url_fails_cleanly(deliverer: Deliverer, url: str, reason: str) -> None:
    post(deliverer, url)  # must not raise

    assert deliverer.wait_idle()
    [result] = deliverer.results()
    assert result.url == url and result.status is None and not result.ok
    assert result.error is not None and reason in result.error


def test_bad_header_value_fails_cleanly(deliverer: Deliverer, receiver: Receiver) -> None:
    post(deliverer, receiver.url, headers={"X-A2A-Notification-Token": "a\r\nInjected: yes"})
    post(deliverer, receiver.url)

    assert deliverer.wait_idle()
    first, second = deliverer.results()
    assert first.error is not None and not first.ok
    assert second.ok
    assert len(receiver.requests) == 1


def test_on_result_runs_on_the_worker_and_its_errors_do_not_stop_it(receiver: Receiver) -> None:
    seen: list[tuple[int, str]] = []

    def on_result(delivery: Delivery) -> None:
        seen.append((delivery.seq, threading.current_thread().name))
        if delivery.seq == 1:
            raise RuntimeError("journal exploded")

    d = Deliverer(on_result=on_result)
    try:
        for _ in range(3):
            post(d, receiver.url)
        assert d.wait_idle()
    finally:
        d.close()

    assert [seq for seq, _ in seen] == [1, 2, 3]
    assert all(name.startswith(THREAD_PREFIX) for _, name in seen)
    assert len(receiver.requests) == 3 and all(r.ok for r in d.results())


def test_one_worker_per_destination_ending_when_idle(
    make_receiver: Callable[[], Receiver],
) -> None:
    before = push_threads()
    threads: dict[str, set[str]] = {}

    def on_result(delivery: Delivery) -> None:
        threads.setdefault(delivery.url.rsplit("/", 1)[0], set()).add(
            threading.current_thread().name
        )

    d = Deliverer(on_result=on_result)
    try:
        a, b = make_receiver(), make_receiver()
        for _ in range(3):
            post(d, a.url)
            post(d, b.url.replace("/hook", "/other"))  # same destination, other path
        assert d.wait_idle()
        assert (len(a.requests), len(b.requests)) == (3, 3)
        assert len(threads) == 2 and all(len(names) == 1 for names in threads.values())
        assert threads[a.url.rsplit("/", 1)[0]] != threads[b.url.rsplit("/", 1)[0]]
        assert poll(lambda: push_threads() - before == set()), "idle workers did not end"
    finally:
        d.close()


def test_close_is_idempotent_and_stops_every_worker(
    make_receiver: Callable[[], Receiver], closed_port: int, silent_port: int
) -> None:
    before = push_threads()
    d = Deliverer(timeout=0.5)
    post(d, make_receiver().url)
    post(d, f"http://127.0.0.1:{closed_port}/hook")
    post(d, "ftp://example.com/hook")
    post(d, f"http://127.0.0.1:{silent_port}/hook")
    assert poll(lambda: len(d.results()) == 3)
    workers = push_threads() - before
    assert len(workers) >= 1  # the silent destination's, at least

    d.close()
    d.close()

    assert not any(t.is_alive() for t in workers)
    post(d, make_receiver().url)  # after close: dropped (reported), no error, no new worker
    assert d.wait_idle(timeout=0)
    assert len(d.results()) == 5 and d.results()[-1].error == CLOSED
    assert push_threads() - before == set()


def test_close_with_a_silent_destination_in_flight(silent_port: int) -> None:
    before = push_threads()
    d = Deliverer(timeout=0.5)
    url = f"http://127.0.0.1:{silent_port}/hook"
    for _ in range(5):
        post(d, url)
    assert poll(lambda: bool(push_threads() - before))

    started = time.monotonic()
    d.close()

    assert time.monotonic() - started < 2.0  # the in-flight attempt times out, the rest are dropped
    assert push_threads() - before == set()
    # Every POST is reported: the one in flight (timed out, if it started) and the dropped ones.
    results = d.results()
    assert len(results) == 5, results
    assert sum(r.error == CLOSED for r in results) >= 4 and not any(r.ok for r in results)
    assert d.wait_idle(timeout=0)
