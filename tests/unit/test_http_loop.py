"""The event loop of mockagent's HTTP server: many connections on one thread, and what waits
(`before_wait()`) or does not fit (big or chunked bodies, slow readers) goes to a thread of its own
while every other connection goes on being answered."""

from __future__ import annotations

import http.client
import io
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mockagent.server.http import HttpServer
from mockagent.server.loop import INLINE_MAX, whole
from mockagent.server.request import HEADERS, BadRequest, parse_request, read_request
from mockagent.server.wsgi import headers_of
from mockagent.waiting import before_wait


def hello(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"hello " + environ["PATH_INFO"].encode() + b" " + str(len(body)).encode()]


def waits_at(path: str, go_on: threading.Event) -> Callable[..., Any]:
    """An app whose answer to `path` is a stream that sends one event, says it waits (as the
    engine's streams do) and sends the second when `go_on` is set; `hello` for other paths."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ["PATH_INFO"] != path:
            return hello(environ, start_response)
        start_response("200 OK", [("Content-Type", "text/event-stream")])

        def pieces() -> Iterator[bytes]:
            yield b"data: 1\n\n"
            before_wait()
            assert go_on.wait(5)
            yield b"data: 2\n\n"

        return pieces()

    return app


@pytest.fixture
def serve() -> Iterator[Callable[..., HttpServer]]:
    servers: list[HttpServer] = []

    def start(app: Callable[..., Any] = hello, **options: Any) -> HttpServer:
        server = HttpServer(app, "127.0.0.1", 0, loop=True, **options)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()


def get(server: HttpServer, path: str, timeout: float = 5) -> bytes:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        conn.request("GET", path)
        return conn.getresponse().read()
    finally:
        conn.close()


def server_threads(server: HttpServer) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(f"mockagent:{server.port}")]


def test_sixteen_keep_alive_connections_are_answered_by_one_thread(serve):
    server = serve()
    conns = [http.client.HTTPConnection(server.host, server.port, timeout=5) for _ in range(16)]
    for round_ in range(3):
        for i, conn in enumerate(conns):
            conn.request("POST", f"/{i}", body=b"x" * round_)
        for i, conn in enumerate(conns):
            assert conn.getresponse().read() == f"hello /{i} {round_}".encode()
    assert server_threads(server) == [f"mockagent:{server.port}"]  # no thread per connection
    for conn in conns:
        conn.close()


def test_an_answer_that_waits_hands_the_loop_on_and_keeps_its_connection(serve):
    go_on = threading.Event()
    server = serve(waits_at("/wait", go_on))
    waiting = http.client.HTTPConnection(server.host, server.port, timeout=5)
    waiting.request("GET", "/wait")
    stream = waiting.getresponse()
    assert stream.read1() == b"data: 1\n\n"
    assert get(server, "/other", timeout=2) == b"hello /other 0"  # answered while the stream waits
    go_on.set()
    assert stream.read() == b"data: 2\n\n"
    waiting.request("GET", "/again")  # the connection goes on, now in the thread that waited
    assert waiting.getresponse().read() == b"hello /again 0"
    assert f"mockagent:{server.port}:{waiting.sock.getsockname()[1]}" in server_threads(server)
    waiting.close()


def test_a_client_that_does_not_read_holds_up_no_one_else(serve):
    big = b"x" * (32 << 20)  # more than both socket buffers hold

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/big":
            start_response("200 OK", [("Content-Length", str(len(big)))])
            return [big]
        return hello(environ, start_response)

    server = serve(app)
    with socket.create_connection((server.host, server.port), timeout=5) as slow:
        slow.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")  # and then reads nothing for now
        assert get(server, "/meanwhile", timeout=2) == b"hello /meanwhile 0"
        received = b""
        while b"\r\n\r\n" not in received:
            received += slow.recv(65536)
        left = len(big) - len(received.partition(b"\r\n\r\n")[2])
        while left:  # all of it still comes, from the thread that waited to send it
            left -= len(slow.recv(min(left, 1 << 20)))


def test_a_request_split_over_many_packets_is_answered_once_whole(serve):
    server = serve()
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        for piece in (
            b"POST /split HT",
            b"TP/1.1\r\nHost: x\r\nContent-Le",
            b"ngth: 4\r\n\r\nab",
            b"cd",
        ):
            sock.sendall(piece)
        answer = b""
        while not answer.endswith(b"hello /split 4"):
            answer += sock.recv(1000)
    assert server_threads(server) == [f"mockagent:{server.port}"]


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /next", 27),
        (b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", 0),
        (b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 41),
        (b"GET / HTTP/1.1\r\nHost", 0),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", -1),
        (b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n", -1),
        (b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", -1),
        (b"POST / HTTP/1.1\r\nContent-Length: ten\r\n\r\n", -1),
        (b"POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % INLINE_MAX, -1),
        (b"GET / HTTP/1.1\nHost: x\n\n", -1),
        (b"GET /" + b"a" * INLINE_MAX + b" HTTP/1.1", -1),
    ],
    ids=[
        "whole",
        "pipelined",
        "body to come",
        "body",
        "head to come",
        "chunked",
        "expect",
        "two lengths",
        "bad length",
        "big body",
        "bare LF",
        "long head",
    ],
)
def test_whole_takes_only_complete_simple_requests(data, size):
    assert whole(data)[0] == size


def test_a_head_trickling_in_is_searched_once():
    data, start, seen = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0, []
    for n in range(1, len(data) + 1):
        size, start = whole(data[:n], start)
        seen.append(start)
        if size:
            break
    assert size == len(data) and seen == sorted(seen) and seen[-2] == len(data) - 4


@pytest.mark.parametrize(
    "data",
    [
        b"POST /a%20b?x=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\n\r\n{}",
        b"GET / HTTP/1.0\r\nConnection: keep-alive\r\nX-Two: 1\r\nx-two:  2 \r\n\r\n",
        b"GET / HTTP/1.1\r\nX_Under: dropped\r\nHost: x\r\n\r\n",
        b"GET http://example/abs?q HTTP/1.1\r\nHost: x\r\n\r\n",
        b"\r\nGET /after-crlf HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
        b"GET / HTTP/2.0\r\n\r\n",
        b"G(T / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\n folded: no\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: ten\r\n\r\n",
    ],
    ids=[
        "plain",
        "repeated",
        "underscore",
        "absolute",
        "stray crlf",
        "no colon",
        "version",
        "method",
        "fold",
        "bad length",
    ],
)
def test_the_loops_parser_reads_what_the_line_by_line_parser_reads(data):
    base = {
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "1",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "2",
    }

    def parsed(parse: Callable[..., Any]) -> Any:
        try:
            request = parse(io.BytesIO(data), base)
        except BadRequest as exc:
            return exc.status, str(exc)
        environ = {k: v for k, v in request.environ.items() if k not in ("wsgi.input", HEADERS)}
        return environ, request.body.read(), request.version, request.keep_alive

    assert parsed(parse_request) == parsed(read_request)


def test_the_loops_parser_hands_the_app_its_headers_by_lowercased_name():
    data = (
        b"GET / HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nX-Two: 1\r\nX-Two: 2\r\n"
        b"Content-Type: text/plain\r\n\r\n"
    )
    request = parse_request(io.BytesIO(data), {})
    assert (
        request.environ[HEADERS]
        == headers_of({k: v for k, v in request.environ.items() if k != HEADERS})
        == {"host": "x", "a2a-version": "1.0", "x-two": "1,2", "content-type": "text/plain"}
    )


def test_a_bug_on_one_connection_drops_it_and_the_loop_goes_on(serve, monkeypatch, caplog):
    import mockagent.server.loop as loop

    def broken(buf: bytes, start: int = 0) -> tuple[int, int]:
        if b"/boom" in buf:
            raise RuntimeError("a bug in the loop")
        return whole(buf, start)

    monkeypatch.setattr(loop, "whole", broken)
    server = serve()
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(100) == b""  # dropped
    assert get(server, "/fine") == b"hello /fine 0"
    assert "the event loop failed on a connection" in caplog.text


def test_a_waiting_answer_takes_a_thread_slot_while_it_waits(serve):
    go_on = threading.Event()
    server = serve(waits_at("/wait", go_on), threads=2)
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.request("GET", "/wait")
    stream = conn.getresponse()
    assert stream.read1() == b"data: 1\n\n"
    assert until(lambda: server.slots._value == 1)  # one of two taken by the waiting stream
    go_on.set()
    assert stream.read() == b"data: 2\n\n"
    conn.close()
    assert until(lambda: server.slots._value == 2)  # given back when the answer ended


def until(condition: Callable[[], bool], seconds: float = 5) -> bool:
    """Poll `condition` until it holds or `seconds` pass."""
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.005)
    return condition()


@pytest.mark.skipif(
    not Path("/proc/self/task").exists(), reason="reads thread signal masks from /proc (Linux)"
)
def test_the_loop_and_connection_threads_leave_ctrl_c_and_sigterm_to_the_main_thread(serve):
    go_on = threading.Event()
    server = serve(waits_at("/wait", go_on))
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.request("GET", "/wait")
    assert conn.getresponse().read1() == b"data: 1\n\n"
    # The loop, and the stream's own thread (by full name: a thread of an earlier test's server on
    # the same port may still be ending).
    mine = {f"mockagent:{server.port}", f"mockagent:{server.port}:{conn.sock.getsockname()[1]}"}

    # A thread still starting is listed with no native_id yet: wait until both have one.
    def running() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name in mine and t.native_id is not None]

    assert until(lambda: len(running()) == 2)
    try:
        for thread in running():
            status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
            blocked = int(
                next(line for line in status.splitlines() if line.startswith("SigBlk:")).split()[1],
                16,
            )
            assert all(
                blocked & (1 << (signum - 1)) for signum in (signal.SIGINT, signal.SIGTERM)
            ), thread.name
    finally:
        go_on.set()
        conn.close()
