"""The recording proxy records each frame of a stream before the client has it, read by the one
SSE reader.

A client that acts on an event (opens a subscription once the streamed Task came) must find
the proxy already knowing that event; recorded after, the subscription's opening raced the
stream's Task in the proxy, and under load a recording lost its `after: {subscribers: 1}`
gate, so its replay played the streamed task to the end before the subscription could open.
The proxy once split SSE on `\\n\\n` itself: a CRLF stream whose `\\r\\n` fell across two
chunks, or a CR-only one, lost its events from the recording.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx

from mockagent.dialects.sse_read import Event
from mockagent.proxy.upstream import Lines, SseEvents, tee


class _Chunked(httpx.SyncByteStream):
    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks


def _teed(frames: SseEvents | Lines, *chunks: bytes) -> tuple[list[tuple[bytes, list]], list]:
    """(each chunk passed on with the frames recorded by then, every frame recorded)."""
    seen: list = []
    response = httpx.Response(200, stream=_Chunked(*chunks))
    passed = [(chunk, list(seen)) for chunk in tee(response, frames, seen.append, lambda: None)]
    return passed, seen


def test_each_event_is_recorded_before_its_chunk_is_passed_on() -> None:
    passed, _ = _teed(SseEvents(), b"data: 1\n\n", b"data: 2\n", b"\ndata: 3")
    assert passed == [
        (b"data: 1\n\n", [Event("message", "1")]),
        (b"data: 2\n", [Event("message", "1")]),
        (b"\ndata: 3", [Event("message", "1"), Event("message", "2")]),
    ]


def test_crlf_split_across_chunks_and_cr_only_line_ends_keep_their_events() -> None:
    _, crlf = _teed(SseEvents(), b'data: {"a":1}\r\n\r', b"\n", b'data: {"b":2}\r\n\r\n')
    assert crlf == [Event("message", '{"a":1}'), Event("message", '{"b":2}')]
    _, cr = _teed(SseEvents(), b'event: error\rdata: {"a":1}\r\r', b'data: {"b":2}\r\r')
    assert cr == [Event("error", '{"a":1}'), Event("message", '{"b":2}')]


def test_an_event_the_stream_never_ended_is_not_recorded() -> None:
    _, seen = _teed(SseEvents(), b"data: 1\n\ndata: 2\n")
    assert seen == [Event("message", "1")]  # as the client's reader: it never dispatches it


def test_ndjson_lines_and_an_unterminated_last_one() -> None:
    closed: list[bool] = []
    response = httpx.Response(200, stream=_Chunked(b'{"a": 1}\r\n{"b"', b": 2}"))
    frames: list[bytes] = []
    passed = b"".join(tee(response, Lines(), frames.append, lambda: closed.append(True)))
    assert passed == b'{"a": 1}\r\n{"b": 2}'
    assert frames == [b'{"a": 1}', b'{"b": 2}'] and closed == [True]
