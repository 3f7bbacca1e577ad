"""mockagent's own HTTP/1.1 server (`serve` and the pytest fixture run on it), over real sockets."""

from __future__ import annotations

import http.client
import io
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from mockagent import waiting
from mockagent.server.exchange import HOLD_MAX, Exchange
from mockagent.server.http import HttpServer

App = Callable[[dict[str, Any], Callable[..., Any]], Any]


def echo(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """Answers with what it was asked: method, path, query, the body and two headers."""
    body = environ["wsgi.input"].read()
    text = "|".join(
        [
            environ["REQUEST_METHOD"],
            environ["PATH_INFO"],
            environ["QUERY_STRING"],
            environ.get("CONTENT_TYPE", ""),
            environ.get("HTTP_X_ONE", ""),
            body.decode("latin-1"),
        ]
    )
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [text.encode("latin-1")]


@pytest.fixture(params=[False, True], ids=["threads", "loop"])
def serve(request: pytest.FixtureRequest) -> Iterator[Callable[..., HttpServer]]:
    """Every test runs on both ways of serving: a thread per connection, and the event loop."""
    servers: list[tuple[HttpServer, threading.Thread]] = []

    def start(app: App = echo, **options: Any) -> HttpServer:
        server = HttpServer(app, "127.0.0.1", 0, loop=request.param, **options)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        servers.append((server, thread))
        return server

    yield start
    for server, thread in servers:
        server.shutdown()
        thread.join(timeout=10)
        assert not thread.is_alive()


def raw(server: HttpServer, data: bytes) -> bytes:
    """Send `data` on a new connection and read until the server closes it."""
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_keep_alive_serves_several_requests_on_one_connection(serve):
    server = serve()
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.request(
        "POST",
        "/a%20b/c?x=1&y=2",
        body=b'{"a":1}',
        headers={"Content-Type": "application/json", "X-One": "1"},
    )
    first = conn.getresponse()
    assert first.status == 200 and first.getheader("Content-Length") == str(len(first.read()))
    local = conn.sock.getsockname()
    conn.request("GET", "/again")
    second = conn.getresponse()
    assert second.read() == b"GET|/again||||"
    assert conn.sock.getsockname() == local  # the same connection carried both
    assert second.getheader("Date", "").endswith(" GMT")
    conn.close()


def test_the_environ_carries_decoded_path_query_type_headers_and_body(serve):
    server = serve()
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.request(
        "POST",
        "/a%20b/c?x=1&y=2",
        body=b'{"a":1}',
        headers={"Content-Type": "application/json", "X-One": "1"},
    )
    assert conn.getresponse().read() == b'POST|/a b/c|x=1&y=2|application/json|1|{"a":1}'


def test_pipelined_requests_are_answered_in_order(serve):
    server = serve()
    data = raw(
        server,
        b"GET /one HTTP/1.1\r\nHost: x\r\n\r\n"
        b"POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
        b"\r\nabcGET /three HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    assert data.count(b"HTTP/1.1 200 OK") == 3
    assert data.index(b"GET|/one") < data.index(b"POST|/two||||abc") < data.index(b"GET|/three")
    assert data.rstrip().endswith(b"GET|/three||||") and b"Connection: close" in data


def test_a_chunked_request_body_is_decoded(serve):
    server = serve()
    data = raw(
        server,
        b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        b"3\r\nabc\r\n5;ext=1\r\ndefgh\r\n0\r\nTrailer: t\r\n\r\n",
    )
    assert data.endswith(b"POST|/c||||abcdefgh")


def test_expect_100_continue_is_answered_before_the_body_is_read(serve):
    server = serve()
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"
        )
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"hi")
        assert sock.recv(1000).endswith(b"POST|/||||hi")


def test_http_1_0_gets_close_delimited_or_asked_for_keep_alive(serve):
    server = serve()
    closed = raw(server, b"GET /old HTTP/1.0\r\n\r\n")
    assert closed.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in closed
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn._http_vsn, conn._http_vsn_str = 10, "HTTP/1.0"
    conn.request("GET", "/kept", headers={"Connection": "keep-alive"})
    response = conn.getresponse()
    assert response.getheader("Connection") == "keep-alive" and response.read() == b"GET|/kept||||"


def test_a_stream_goes_out_piece_by_piece_chunked(serve):
    go_on = threading.Event()
    finished = threading.Event()

    def stream(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/event-stream")])

        def pieces():
            try:
                yield b"data: 1\n\n"
                # as every wait in mockagent's app does: what was written goes out
                waiting.before_wait()
                assert go_on.wait(5)
                yield b"data: 2\n\n"
            finally:
                finished.set()

        return pieces()

    server = serve(stream)
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.request("GET", "/events")
    response = conn.getresponse()
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert response.read1() == b"data: 1\n\n"  # here while the app still waits
    go_on.set()
    assert response.read() == b"data: 2\n\n"
    assert finished.wait(5)


class Writes:
    """A connection that keeps each write apart."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.writes.append(bytes(data))


def written(app: App, conn: Writes | None = None) -> list[bytes]:
    """The writes of one answer of `app` to a GET."""
    conn = conn or Writes()
    base = {
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "5",
    }
    request = io.BytesIO(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    Exchange(SimpleNamespace(app=app), conn, request, base, inline=True).run()
    return conn.writes


def streaming(*steps: bytes | Callable[[], None]) -> App:
    """An app streaming the byte steps and calling the others in between."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        for step in steps:
            if isinstance(step, bytes):
                yield step
            else:
                step()

    return app


def test_a_stream_all_there_is_one_write_with_its_end():
    writes = written(streaming(b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"))
    assert len(writes) == 1
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert writes[0].endswith(
        b"\r\n\r\n9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n9\r\ndata: 3\n\n\r\n0\r\n\r\n"
    )


def test_what_was_written_goes_out_before_the_app_waits_and_a_long_stream_on_the_way():
    conn = Writes()
    sent_when_waiting: list[int] = []

    def wait() -> None:
        waiting.before_wait()
        sent_when_waiting.append(len(conn.writes))

    written(streaming(b"data: 1\n\n", wait, b"data: 2\n\n", *[b"x" * 1000] * 100), conn)
    assert sent_when_waiting == [
        1
    ]  # the head and the first piece went out as the app began to wait
    assert conn.writes[0].endswith(b"9\r\ndata: 1\n\n\r\n")
    assert conn.writes[1].startswith(b"9\r\ndata: 2\n\n\r\n")
    assert len(conn.writes) == 3 and len(conn.writes[1]) >= HOLD_MAX  # held back no more than that
    assert conn.writes[2].endswith(b"0\r\n\r\n")


def test_a_client_leaving_mid_stream_closes_the_apps_iterator(serve):
    closed = threading.Event()

    def forever(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/event-stream")])

        def pieces():
            try:
                while True:
                    yield b": keep-alive\n\n"
                    waiting.before_wait()
                    closed.wait(0.01)
            finally:
                closed.set()

        return pieces()

    server = serve(forever)
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(1000).startswith(b"HTTP/1.1 200 OK")
    assert closed.wait(5)


def test_head_and_204_have_no_body(serve):
    def no_content(environ, start_response):
        start_response("204 No Content", [])
        return iter([b""])

    assert raw(serve(), b"HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").endswith(
        b"\r\n\r\n"
    )
    answer = raw(serve(no_content), b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert (
        answer.endswith(b"\r\n\r\n")
        and b"Transfer-Encoding" not in answer
        and b"Content-Length" not in answer
    )


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NONSENSE\r\n\r\n", b"400 Bad Request"),
        (b"GET / HTTP/2.0\r\n\r\n", b"505 HTTP Version Not Supported"),
        (b"G(T / HTTP/1.1\r\n\r\n", b"400 Bad Request"),
        (b"GET nowhere HTTP/1.1\r\n\r\n", b"400 Bad Request"),
        (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", b"414 URI Too Long"),
        (
            b"GET / HTTP/1.1\r\n" + b"X-Big: " + b"b" * 9000 + b"\r\n\r\n",
            b"431 Request Header Fields Too Large",
        ),
        (
            b"GET / HTTP/1.1\r\n" + b"X-Many: many\r\n" * 6000 + b"\r\n",
            b"431 Request Header Fields Too Large",
        ),
        (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", b"400 Bad Request"),
        (b"POST / HTTP/1.1\r\nContent-Length: ten\r\n\r\n", b"400 Bad Request"),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"400 Bad Request",
        ),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", b"501 Not Implemented"),
    ],
    ids=[
        "request line",
        "version",
        "method",
        "target",
        "long target",
        "long header",
        "many headers",
        "header line",
        "content-length",
        "smuggling",
        "transfer-encoding",
    ],
)
def test_a_request_that_is_not_http_is_refused_plainly_and_closed(serve, request_bytes, status):
    answer = raw(serve(), request_bytes)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 " + status) and b"Connection: close" in head
    assert body and b"Traceback" not in body and len(body) < 200


def test_a_failing_app_is_a_500_without_a_traceback(serve, caplog):
    def broken(environ, start_response):
        raise RuntimeError("secret detail")

    with caplog.at_level(logging.ERROR, logger="mockagent"):
        answer = raw(serve(broken), b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 500 Internal Server Error")
    assert b"secret" not in answer and b"Traceback" not in answer
    assert "secret detail" in caplog.text  # logged for whoever runs the server


def test_an_app_dropping_the_connection_mid_stream_ends_it_without_the_last_chunk(serve):
    def drops(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/event-stream")])

        def pieces():
            yield b"data: 1\n\n"
            raise ConnectionResetError("scripted drop")

        return pieces()

    answer = raw(serve(drops), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.endswith(b"data: 1\n\n\r\n") and not answer.endswith(b"0\r\n\r\n")


def test_an_unread_body_is_skipped_when_small_and_closes_the_connection_when_large(serve):
    def ignores_body(environ, start_response):
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    server = serve(ignores_body)
    small = raw(
        server,
        b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
        b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    assert small.count(b"200 OK") == 2
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nContent-Length: 10000000\r\n\r\n")
        answer = sock.recv(1000)
        assert answer.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in answer


def test_shutdown_cuts_idle_connections_and_ends_serve_forever(serve):
    server = serve()
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.request("GET", "/")
    assert conn.getresponse().read()
    thread = threading.Thread(target=server.serve_forever)  # a second loop on the same server
    server.shutdown()
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert conn.sock.recv(10) == b""  # the idle keep-alive connection was closed by the server
    with pytest.raises(OSError):
        socket.create_connection((server.host, server.port), timeout=1).close()


def test_a_silent_client_is_disconnected_after_the_idle_timeout(serve):
    server = serve(idle_timeout=0.2)
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n")  # and then nothing more
        assert sock.recv(1000) == b""  # the server gave up on it (well before our 5 s)
