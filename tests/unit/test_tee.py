"""The recording proxy records each frame of a stream before the client has it.

A client that acts on an event (opens a subscription once the streamed Task came) must find
the proxy already knowing that event; recorded after, the subscription's opening raced the
stream's Task in the proxy, and under load a recording lost its `after: {subscribers: 1}`
gate, so its replay played the streamed task to the end before the subscription could open.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx

from mockagent.proxy.upstream import tee


class _Chunked(httpx.SyncByteStream):
    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks


def test_each_frame_is_recorded_before_its_chunk_is_passed_on() -> None:
    frames: list[bytes] = []
    response = httpx.Response(200, stream=_Chunked(b"data: 1\n\n", b"data: 2\n", b"\ndata: 3"))
    seen_when_passed = []
    for chunk in tee(response, b"\n\n", frames.append, lambda: None):
        seen_when_passed.append((chunk, list(frames)))
    assert seen_when_passed == [
        (b"data: 1\n\n", [b"data: 1"]),
        (b"data: 2\n", [b"data: 1"]),
        (b"\ndata: 3", [b"data: 1", b"data: 2"]),
    ]


def test_an_unterminated_last_ndjson_line_is_recorded_at_the_end() -> None:
    frames: list[bytes] = []
    closed: list[bool] = []
    response = httpx.Response(200, stream=_Chunked(b'{"a": 1}\n{"b"', b": 2}"))
    passed = b"".join(tee(response, b"\n", frames.append, lambda: closed.append(True)))
    assert passed == b'{"a": 1}\n{"b": 2}'
    assert frames == [b'{"a": 1}', b'{"b": 2}'] and closed == [True]
