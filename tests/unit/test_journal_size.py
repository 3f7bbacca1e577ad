"""The journal alone: it keeps its last `size` calls, counts every call by interaction, and
remembers the fault kinds that fired on the calls it dropped."""

from __future__ import annotations

import pytest

from mockagent.engine.call import Call
from mockagent.engine.fault_part import FaultPart
from mockagent.engine.journal import Journal


def call(text: str) -> Call:
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    return Call(operation="SendMessage", params={"message": message})


def test_it_keeps_the_last_calls_numbered_as_they_came() -> None:
    journal = Journal(size=3)
    for i in range(7):
        journal.record(call(f"q{i}"), interaction="a" if i % 2 else None)
    assert [entry.seq for entry in journal.entries] == [5, 6, 7]
    assert (journal.recorded, journal.dropped) == (7, 4)
    assert journal.answered("a") == 3 and journal.answered("b") == 0


def test_a_size_of_zero_keeps_no_call_and_counts_them_all() -> None:
    journal = Journal(size=0)
    journal.record(call("q"), interaction="a")
    assert (journal.entries, journal.dropped, journal.answered("a")) == ([], 1, 1)


def test_the_fault_kinds_of_dropped_calls_are_remembered() -> None:
    journal = Journal(size=1)
    fired = [FaultPart("dropAfter", 2, fired=True), FaultPart("delayMs", 50, why="no")]
    journal.record(call("q"), interaction="cut", faults=fired)
    open_stream = [FaultPart("closeAfter", 1, settled=False)]
    journal.record(call("q"), interaction="cut", faults=open_stream)
    journal.record(call("q"), interaction="cut")
    # fired, or maybe still firing on a stream that was open: never reported as "not fired"
    assert journal.fired_before("cut") == {"dropAfter", "closeAfter"}


def test_a_negative_size_is_refused() -> None:
    with pytest.raises(ValueError, match="a journal keeps 0 calls or more, not -1"):
        Journal(size=-1)
