"""How an answer leaves, for both bindings: JSON, an SSE stream, or a scripted fault.

A binding passes `wrap` (result JSON → what goes on the wire: the JSON-RPC envelope, or the bare
REST body) and `wrap_error` (ProtocolError → error JSON); everything else is shared. `Edge` is
where a call of one A2A version meets the v1.0 service: each binding has v1.0's own (nothing
changes) and v0.3's (`v0_3.JsonRpcEdge`, `v0_3_rest.RestEdge`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any, Protocol

from mockagent import errors
from mockagent.cassette.models import Fault
from mockagent.dialects import sse
from mockagent.dialects.a2a.wire import render_event, render_result
from mockagent.dialects.faults import delay
from mockagent.dialects.http import WRITE_BYTES, HttpResponse
from mockagent.engine.call import TaskEvent
from mockagent.engine.stream import KEEPALIVE, Stream

Wrap = Callable[[Any], Any]
WrapError = Callable[[errors.ProtocolError], Any]


class Edge(Protocol):
    """One call's way in and out of the v1.0 service: its params translated on the way in, its
    answer, stream events and errors on the way out. The binding does the rest, alike for all."""

    @property
    def operation(self) -> str:
        """The v1.0 operation the call is."""

    @property
    def legacy(self) -> bool:
        """A v0.3 call (the service then expects no `A2A-Version`, or a 0.3 one)."""

    def request(self, params: Any) -> dict[str, Any]:
        """The v1.0 params of the call's params; a ProtocolError when they are none."""

    def answer(self, result: Any) -> Any:
        """What goes on the wire for a v1.0 result (the binding's envelope around it)."""

    def event(self, event: Any) -> Any:
        """What goes on the wire for one v1.0 stream event."""

    def stream_error(self, exc: errors.ProtocolError) -> Any:
        """The error event that ends a stream."""

    @property
    def refuses_in_sse(self) -> bool:
        """Whether a refusal goes out as a stream of one error event (a2a-sdk 0.3 reads the
        answer of a v0.3 streaming method only so)."""

    def refusal(self, exc: errors.ProtocolError) -> tuple[Any, int]:
        """The error body and HTTP status of a call refused before the service answered it."""


def refused(edge: Edge, exc: errors.ProtocolError) -> HttpResponse:
    """The answer to a call refused at its edge: JSON, or one SSE event where the edge says so."""
    body, status = edge.refusal(exc)
    if edge.refuses_in_sse:
        return HttpResponse(status, iter([sse.frame(body)]), dict(sse.HEADERS))
    return HttpResponse.json(body, status)


def fault_response(fault: Fault) -> HttpResponse:
    """A scripted HTTP status, with the scripted body or a `google.rpc.Status` saying so."""
    delay(fault)
    status = fault.status or 500
    if fault.body is not None:
        return HttpResponse(status, fault.body.encode(), {"Content-Type": "application/json"})
    body = {
        "error": {
            "code": status,
            "status": "UNAVAILABLE" if status == 503 else "UNKNOWN",
            "message": f"mockagent: scripted fault, HTTP {status}",
        }
    }
    return HttpResponse.json(body, status)


def stream_response(stream: Stream, wrap: Wrap, wrap_error: WrapError) -> HttpResponse:
    """SSE: the first answer, then each event when it happens; faults as the interaction scripts.
    A reply whose `first` is `update` has no first answer: its first event opens the stream."""
    first = (
        [] if stream.opening == "update" else [render_result("SendStreamingMessage", stream.first)]
    )
    return HttpResponse(200, _frames(stream, first, wrap, wrap_error), dict(sse.HEADERS))


def _frames(stream: Stream, first: list[Any], wrap: Wrap, wrap_error: WrapError) -> Iterator[bytes]:
    fault = stream.fault
    ready: list[
        bytes
    ] = []  # events already there go out in one write (not with a fault: it counts writes)
    size = 0  # of `ready`: a write is at most WRITE_BYTES, or a client that reads nothing would
    # hold a whole instant stream in the server
    for item in stream.faulted(chain(first, stream.events())):
        if item is KEEPALIVE:
            frame = sse.KEEPALIVE
        elif isinstance(item, errors.ProtocolError):
            frame = sse.frame(wrap_error(item), event="error")
        else:
            frame = sse.frame(wrap(render_event(item) if isinstance(item, TaskEvent) else item))
        ready.append(frame)
        size += len(frame)
        if fault is not None or item is KEEPALIVE or not stream.ready() or size >= WRITE_BYTES:
            yield b"".join(ready)
            ready, size = [], 0
    if ready:
        yield b"".join(ready)
