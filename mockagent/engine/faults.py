"""What became of an interaction's fault on one call: which of its parts fired, and why a part
did not.

The engine decides (`settle`): a status answers instead of everything else, a cut or an error
after N events applies to streams only, and a stream counts its events to the part that ends it
(`faulty`). A dialect only carries the decision out: it waits, drops the connection, sends the
status or renders the error. The journal entry keeps the parts, so a test and the inspector see
whether the fault a test relies on really happened.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from mockagent import errors
from mockagent.cassette.models import Fault
from mockagent.engine.call import Call
from mockagent.engine.fault_part import FaultPart

STREAM_PARTS = ("dropAfter", "closeAfter", "errorAfter")
PARTS = ("status", "body", "delayMs", *STREAM_PARTS)
GRPC = "GRPC"  # the binding that sends a status as a gRPC code, with no body


def parts_of(fault: Fault | None) -> list[FaultPart]:
    """The fields the fault sets, in a fixed order, none fired yet (a delay of 0 is none)."""
    if fault is None:
        return []
    parts = [
        FaultPart(kind, value)
        for kind in PARTS
        if (value := getattr(fault, kind)) is not None and (value or kind != "delayMs")
    ]
    for part in parts:
        if part.kind == "errorAfter":
            part.error = fault.error.name if fault.error is not None else "Internal"
    return parts


def settle(
    fault: Fault | None, operation: str, binding: str, answer: str, note: str = ""
) -> list[FaultPart]:
    """The parts of `fault` and what became of each on a call answered as `answer`: "status"
    (the scripted HTTP status), "error" (`note` names it), "response" (one body), "stream" (its
    parts fire as the stream goes: `faulty`), or "none" (the interaction's reply did not answer
    the call: `note` says why). With "response", `note` ends the sentence on why a stream part
    did not fire (which calls stream)."""
    parts = parts_of(fault)
    status = fault.status if fault is not None else None
    for part in parts:
        part.why = _why_not(part, status, operation, binding, answer, note)
        part.fired = part.why is None
        part.settled = answer != "stream"
    return parts


def _why_not(
    part: FaultPart, status: int | None, operation: str, binding: str, answer: str, note: str
) -> str | None:
    """Why `part` does not fire on a call answered as `answer`; None when it does (a stream's
    parts: not yet, `faulty` tells them)."""
    if answer == "status":
        if part.kind == "body" and binding == GRPC:
            return "gRPC sends the status as a status code, with no body"
        if part.kind in ("status", "body", "delayMs"):
            return None
        return f"the HTTP status {status} answered instead of a stream"
    if answer == "error":
        return f"the call was answered with the error {note} instead, at once and whole"
    if answer == "none":
        return note
    if part.kind in ("status", "body"):  # the engine raises every status: never seen here
        return f"the call was answered with a {answer}, not the status"
    if part.kind in STREAM_PARTS and answer == "response":
        return (
            f"{operation} is answered with one response, not a stream: {part.kind} applies to "
            f"streams only{note}"
        )
    if answer == "stream" and part.kind in STREAM_PARTS:
        return f"the stream has not started: 0 events sent so far, of {part.value}"
    return "the stream has not started" if answer == "stream" else None


def on_call(
    call: Call, fault: Fault | None, answer: str, error: str = "", streaming: bool = True
) -> list[FaultPart]:
    """`settle` for one call: `answer` as there ("error": `error` names it); `streaming` is the
    card's capability, which decides what an A2A client sends."""
    if fault is None:
        return []
    note = {"error": error, "none": NO_REPLY, "response": _streams(call, streaming)}.get(answer, "")
    return settle(fault, call.operation, call.binding, answer, note)


NO_REPLY = "the call was answered without the interaction's reply, so without its fault"


def _streams(call: Call, streaming: bool) -> str:
    """Which calls stream, ending the sentence on a stream-only part a response ignores."""
    if call.protocol != "a2a":
        return " (Agentex: message/send with stream: true, and a task's stream)"
    if call.operation == "SendMessage" and not streaming:
        return (
            " (SendStreamingMessage, SubscribeToTask); the card says capabilities.streaming:"
            " false, so a client sends SendMessage: set it true to stream"
        )
    return " (SendStreamingMessage, SubscribeToTask)"


def scripted_error(fault: Fault) -> errors.ProtocolError:
    """The error an `errorAfter` fault sends (Internal unless the fault names one)."""
    if fault.error is None:
        return errors.InternalError("mockagent: scripted error mid-stream")
    return errors.scripted(fault.error.name, fault.error.message, fault.error.details)


def faulty(
    items: Iterable[Any], fault: Fault | None, parts: list[FaultPart] | None = None
) -> Iterator[Any]:
    """A stream's items with its fault applied: first the delay; after `dropAfter` items the
    connection drops (DropConnection); after `errorAfter` items the scripted ProtocolError is the
    last item, also when the stream would end there; after `closeAfter` items the stream ends.
    Keep-alive ticks (None) pass through and are not counted. `parts` (from `settle`) learn what
    fired, and after how many events."""
    if fault is None:
        return iter(items)  # nearly every stream: no layer
    return _Counted(fault, parts or []).run(items)


class _Counted:
    """One faulty stream: counts its events and tells its parts what happened."""

    def __init__(self, fault: Fault, parts: list[FaultPart]) -> None:
        self.fault = fault
        self.parts = parts
        self.sent = 0
        self.ended: str | None = None  # the part that ended the stream

    def due(self, kind: str, exact: bool = False) -> bool:
        after = getattr(self.fault, kind)
        return after is not None and (self.sent == after if exact else self.sent >= after)

    def fire(self, kind: str) -> None:
        if kind in STREAM_PARTS:
            self.ended = kind
        for part in self.parts:
            if part.kind == kind:
                part.fired, part.why, part.settled = True, None, True
            elif not part.fired and part.kind in STREAM_PARTS and kind in STREAM_PARTS:
                part.why = f"{kind} ended the stream first, after {_events(self.sent)}"
                part.settled = True

    def run(self, items: Iterable[Any]) -> Iterator[Any]:
        if self.fault.delayMs:  # before the first byte: the client waits for the headers too
            self.fire("delayMs")
            time.sleep(self.fault.delayMs / 1000)
        how = "the stream ended"
        try:
            for item in items:
                if item is not None:
                    if self.due("dropAfter"):
                        self.fire("dropAfter")
                        raise errors.DropConnection(f"scripted drop after {self.sent} events")
                    if self.due("errorAfter"):
                        self.fire("errorAfter")
                        yield scripted_error(self.fault)
                        return
                    if self.due("closeAfter"):
                        self.fire("closeAfter")
                        return  # a recorded upstream that ended the stream there
                yield item
                if item is not None:
                    self.sent += 1
                    self.progress()
                if self.due("closeAfter"):
                    self.fire("closeAfter")
                    return  # at once: the next event may never come
            # A stream that ends right at its fault still has it: a recorded cut-off stream ends
            # with the last event the client got, and the connection dropped (or the error
            # came) after it.
            if self.due("dropAfter", exact=True):
                self.fire("dropAfter")
                raise errors.DropConnection(f"scripted drop after {self.sent} events")
            if self.due("errorAfter", exact=True):
                self.fire("errorAfter")
                yield scripted_error(self.fault)
        except GeneratorExit:
            how = "the client closed the stream"
            raise
        finally:
            self.progress(how)

    def progress(self, ended: str | None = None) -> None:
        """Say, on every stream part not fired, how far the stream got (`ended`: how it ended)."""
        if self.ended is not None:
            return
        for part in self.parts:
            if part.kind in STREAM_PARTS and not part.fired:
                part.why = (
                    f"the stream is open: {_events(self.sent)} sent so far, of {part.value}"
                    if ended is None
                    else f"{ended} after {_events(self.sent)}, before the {part.value} it waits for"
                )
                part.settled = ended is not None


def _events(count: int) -> str:
    return f"{count} event{'' if count == 1 else 's'}"
