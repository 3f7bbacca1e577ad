"""What a stream tells the parts of its fault (engine/faults.py): the part that ended it fired,
after its count of events; every other part says why it did not."""

from __future__ import annotations

import pytest

from mockagent import errors
from mockagent.cassette.models import Fault
from mockagent.engine.faults import faulty, settle


def run(fault: Fault, items: list[object]) -> tuple[list[object], list[dict[str, object]]]:
    parts = settle(fault, "SendStreamingMessage", "JSONRPC", "stream")
    got: list[object] = []
    try:
        got.extend(faulty(items, fault, parts))
    except errors.DropConnection:
        got.append("dropped")
    return got, [part.view() for part in parts]


def test_the_first_part_due_fires_and_the_others_say_it_ended_the_stream() -> None:
    fault = Fault(delayMs=1, closeAfter=1, dropAfter=2)
    got, views = run(fault, ["task", None, "working", "done"])
    assert got == ["task"]
    assert views == [
        {"kind": "delayMs", "ms": 1, "fired": True},
        {
            "kind": "dropAfter",
            "after": 2,
            "fired": False,
            "why": "closeAfter ended the stream first, after 1 event",
        },
        {"kind": "closeAfter", "after": 1, "fired": True},
    ]


def test_keepalives_are_not_events_and_a_cut_at_the_end_still_fires() -> None:
    got, views = run(Fault(dropAfter=2), ["task", None, None, "done"])
    assert got == ["task", None, None, "done", "dropped"]
    assert views == [{"kind": "dropAfter", "after": 2, "fired": True}]


def test_a_stream_the_client_leaves_says_so() -> None:
    fault = Fault(errorAfter=3)
    parts = settle(fault, "SubscribeToTask", "HTTP+JSON", "stream")
    assert parts[0].why == "the stream has not started: 0 events sent so far, of 3"
    stream = faulty(["task", "working", "done"], fault, parts)
    assert next(stream) == "task" and next(stream) == "working"
    assert parts[0].why == "the stream is open: 1 event sent so far, of 3"
    stream.close()  # type: ignore[attr-defined]
    assert not parts[0].fired and parts[0].settled
    assert parts[0].why == "the client closed the stream after 1 event, before the 3 it waits for"


@pytest.mark.parametrize("answer", ["response", "error", "status"])
def test_a_call_that_is_no_stream_settles_every_part_at_once(answer: str) -> None:
    parts = settle(Fault(status=502, dropAfter=1), "SendMessage", "JSONRPC", answer, "Internal")
    assert all(part.settled for part in parts)
    assert [part.fired for part in parts] == [answer == "status", False]
