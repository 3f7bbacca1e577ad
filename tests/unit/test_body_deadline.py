"""The request body deadline (mockagent.server.deadline) and the bounded writes of a stream: a
body read that does not end in time is a BodyTimeout, answered 408 in the protocol's shape, and
its answer lasts until the read is over; reads reuse their reader threads; a large stream is
handed to the server in writes of at most WRITE_BYTES."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from mockagent.dialects.http import WRITE_BYTES
from mockagent.server.app import create_app
from mockagent.server.deadline import BodyTimeout, read_within
from mockagent.server.trim import TRIM_AFTER, Trimmer
from mockagent.server.wsgi import droppable, read_body

CASSETTE = """\
version: 1
protocol: a2a
agent:
  {name: a, description: d, version: '1', skills: [{id: s, name: s, description: d, tags: [t]}]}
interactions:
  - {name: ping, match: {text: ping?}, reply: {message: pong}}
"""
SEND = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "ping?"}]}
        },
    }
).encode()


class StalledInput:
    """A wsgi.input whose read blocks until `release` (as a client that stopped sending)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.ended = threading.Event()

    def read(self, size: int = -1) -> bytes:
        self.release.wait(30)
        self.ended.set()
        return b""


def environ(stream: Any, length: int) -> dict[str, Any]:
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(length),
        "wsgi.input": stream,
        "wsgi.url_scheme": "http",
    }


def test_a_read_within_its_deadline_gives_its_bytes_or_its_error() -> None:
    assert read_within(lambda: b"body", 5.0) == b"body"
    with pytest.raises(ValueError, match="broken framing"):
        read_within(lambda: (_ for _ in ()).throw(ValueError("broken framing")), 5.0)


def test_a_read_past_its_deadline_is_a_body_timeout() -> None:
    stalled = StalledInput()
    with pytest.raises(BodyTimeout, match="did not arrive within 0.05 s"):
        read_body(environ(stalled, 1000), 4096, timeout=0.05)
    stalled.release.set()
    assert stalled.ended.wait(5)


def readers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "mockagent-body-reader"}


def test_reads_reuse_their_reader_threads() -> None:
    before = readers()  # an earlier test's, in this process, may be reused or end meanwhile
    for _ in range(50):
        assert read_within(lambda: b"x", 5.0) == b"x"
    assert readers() and len(readers() - before) <= 4  # not one a read


def test_a_request_without_a_body_needs_no_reader() -> None:
    class Untouchable:
        def read(self, size: int = -1) -> bytes:
            raise AssertionError("read")

    get = {**environ(Untouchable(), 0), "REQUEST_METHOD": "GET", "CONTENT_LENGTH": ""}
    assert read_body(get, 4096, timeout=0.01) == b""


def test_a_stalled_body_is_answered_408_in_shape_and_the_answer_waits_for_the_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(CASSETTE)
    app = create_app(path, body_timeout=0.05)
    stalled = StalledInput()
    seen: dict[str, Any] = {}
    chunks = iter(
        app.wsgi_app(
            environ(stalled, 1000),
            lambda status, headers: seen.update(status=status, headers=dict(headers)),
        )
    )
    payload = next(chunks)
    assert seen["status"].startswith("408")
    assert seen["headers"]["Connection"] == "close"
    assert seen["headers"]["Content-Length"] == str(len(payload))
    error = json.loads(payload)["error"]
    assert error["code"] == -32600 and "did not arrive within 0.05 s" in error["message"]
    # the answer ends only once the read is over (granian deadlocked on an answer that ended
    # while its body was still being read)
    ending = threading.Thread(target=lambda: seen.update(rest=list(chunks)))
    ending.start()
    ending.join(0.2)
    assert ending.is_alive()
    stalled.release.set()
    ending.join(5)
    assert seen["rest"] == []


def test_a_body_in_time_is_answered_as_ever(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(CASSETTE)
    app = create_app(path, body_timeout=5.0)
    seen: dict[str, Any] = {}
    answer = b"".join(
        app.wsgi_app(
            environ(io.BytesIO(SEND), len(SEND)), lambda status, headers: seen.update(s=status)
        )
    )
    assert seen["s"].startswith("200") and json.loads(answer)["result"]["message"]


def test_a_large_chunk_of_a_stream_goes_out_in_bounded_writes() -> None:
    big = b"x" * (WRITE_BYTES * 3 + 5)
    writes = list(droppable(iter([b"head", big])))
    assert writes[0] == b"head"
    assert all(len(w) <= WRITE_BYTES for w in writes)
    assert b"".join(writes[1:]) == big


def test_the_heap_is_trimmed_once_many_streams_have_ended() -> None:
    trimmed = threading.Event()
    trimmer = Trimmer(trim=trimmed.set, delays=(0.0,))
    for now_open in range(1, TRIM_AFTER + 1):
        trimmer.opened(now_open)
    assert not trimmer.ended(1)  # one still open
    assert trimmer.ended(0)
    assert trimmed.wait(5)
    few = Trimmer(trim=lambda: None, delays=(0.0,))
    few.opened(TRIM_AFTER - 1)
    assert not few.ended(0)  # a few streams: no walk over the heap
