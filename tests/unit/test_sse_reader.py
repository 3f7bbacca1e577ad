"""One SSE reader (mockagent.dialects.sse_read) for the recording proxy and the verify tools.

There were four: the proxy's `_sse_event`, `verify/observe.parse_sse`, the verify tool's watch
for a streamed task (`verify/calls._TaskWatch`) and its arrival clock (`verify/timing.Arrivals`),
each with its own idea of line ends, `event:` names and comments.
"""

from __future__ import annotations

import re
from pathlib import Path

from mockagent.dialects import sse, sse_read
from mockagent.verify.timing import Arrivals

PACKAGE = Path(__file__).resolve().parents[2] / "mockagent"


def test_the_reader_reads_what_the_writer_writes() -> None:
    body = sse.frame({"a": 1}) + sse.KEEPALIVE + sse.frame({"b": [2]}, event="error")
    assert sse_read.events_of(body) == [
        sse_read.Event("message", '{"a":1}'),
        sse_read.Event("error", '{"b":[2]}'),
    ]


def test_events_come_as_their_blank_line_does_whatever_the_line_ends() -> None:
    reader = sse_read.Reader()
    # a CRLF split across chunks: the CR alone must not end the block with the LF after it
    assert reader.feed(b"event: error\r\ndata: 1\r") == []
    assert reader.feed(b"\n") == []
    assert reader.feed(b"\r\n: ping\r\rdata:2\ndata: 3\n") == [sse_read.Event("error", "1")]
    assert reader.feed(b"\nid: 7\n\n") == [sse_read.Event("message", "2\n3")]
    assert reader.feed(b"data: {") == []
    assert reader.end() == [sse_read.Event("message", "{")]


def test_json_event_skips_comments_and_data_that_is_not_json() -> None:
    assert sse_read.json_event(b'event: error\ndata: {"a":\ndata: 1}') == ("error", {"a": 1})
    assert sse_read.json_event(b": keepalive") is None
    assert sse_read.json_event(b"data: not json") is None


def test_verify_clocks_each_event_not_each_comment() -> None:
    arrivals = Arrivals()
    for chunk in (b": ping\r\n\r\n", b"data: 1\r", b"\n\r\n", b"data: 2\r\rdata: 3"):
        arrivals(chunk)
    assert len(arrivals.offsets) == 2  # CR alone ends a line too: the old clock dropped CRs


# Parsing SSE by hand: a `data:`/`event:` field test or a split on blank lines.
HAND_PARSING = re.compile(r"""startswith\(b?["'](data|event):|split\(b?["']\\n\\n["']\)""")


def test_nothing_in_mockagent_reads_sse_but_the_reader() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "dialects" / "sse_read.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if HAND_PARSING.search(line)
    ]
    assert offenders == []
