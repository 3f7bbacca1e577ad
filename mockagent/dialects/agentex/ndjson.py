"""Streaming `message/send`: NDJSON, one JSON-RPC envelope per line, each written when it happens.

Every agent message of the turn becomes start, one delta per scripted piece (or one full), done,
with its `index` (0, 1, … in the stream) and its `parent_task_message`. A sync agent's turn ends
when its handler returns: here, at a terminal or interrupted state, or when the script has no
steps left. A FAILED state ends the stream with an error line (`result: null`), as the platform
does when the agent raises.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

from mockagent import errors
from mockagent.cassette.models import TaskState
from mockagent.dialects.agentex import wire
from mockagent.dialects.agentex.error_table import rpc_error
from mockagent.dialects.http import WRITE_BYTES, HttpResponse
from mockagent.engine.call import MessageResult, TaskEvent, TaskResult
from mockagent.engine.compact_json import compact_json
from mockagent.engine.stream import KEEPALIVE, Stream

HEADERS = {
    "Content-Type": "application/x-ndjson",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}

Update = (
    dict[str, Any] | errors.ProtocolError
)  # a TaskMessageUpdate, or the failure that ends the stream


def stream_response(stream: Stream, request_id: Any) -> HttpResponse:
    """The streamed answer; the body is an iterator, so nothing is buffered."""
    return HttpResponse(200, _lines(stream, request_id), dict(HEADERS))


def _line(payload: Any) -> bytes:
    return compact_json(payload).encode() + b"\n"


def _lines(stream: Stream, request_id: Any) -> Iterator[bytes]:
    """The lines; those already there go out in one write (not with a fault: it counts lines)."""
    batches = _batches(stream)
    if stream.fault is not None:
        batches = ([update] for update in stream.faulted(itertools.chain.from_iterable(batches)))
    ready: list[bytes] = []
    size = 0  # of `ready`: at most WRITE_BYTES a write (a client that reads nothing holds it)
    for batch in batches:
        for update in batch:
            if isinstance(update, errors.ProtocolError):
                yield b"".join(ready) + _line(rpc_error(update, request_id))
                return
            line = _line({"jsonrpc": "2.0", "id": request_id, "result": update, "error": None})
            ready.append(line)
            size += len(line)
            if size >= WRITE_BYTES and stream.fault is None:
                yield b"".join(ready)
                ready, size = [], 0
        if stream.fault is not None or not stream.ready():
            yield b"".join(ready)
            ready, size = [], 0
    if ready:
        yield b"".join(ready)


def _batches(stream: Stream) -> Iterator[Sequence[Update]]:
    """The updates, a list at a time: those of the first answer, then those of each event."""
    index = itertools.count()
    first = stream.first
    if isinstance(first, MessageResult):  # a direct reply: one message, no script
        yield wire.updates(next(index), first.message, None)
        return
    said_as = _first_events(stream, first)
    opening: list[Update] = []
    for said in first.said:
        event = said_as.get(said["messageId"])
        deltas, start = (event.deltas, event.start) if event is not None else (None, True)
        opening += wire.updates(next(index), said, deltas, start)
    if first.task.state is TaskState.FAILED:
        view = first.task
        yield [*opening, _failure(view.id, view.status_reason, view.status_message)]
        return
    yield opening
    for event in turn_events(stream):
        if event.said is not None:
            yield wire.updates(next(index), event.said, event.deltas, event.start)
        elif event.state is TaskState.FAILED:
            yield [_failure(event.task_id, event.status_reason, event.status_message)]
            return


def _failure(
    task_id: str, reason: str | None, status_message: dict[str, Any] | None
) -> errors.ProtocolError:
    return errors.InternalError(wire.reason_of(reason, status_message) or f"Task {task_id} failed")


def _first_events(stream: Stream, first: TaskResult) -> dict[str, TaskEvent]:
    """The events of the messages the first step said. TaskResult.said carries the messages
    only; how they stream (deltas, a start) is on the task's events before the stream's
    cursor."""
    if stream.task is None or not first.said:
        return {}
    with stream.condition:
        earlier = stream.task.events[: stream.cursor]
    return {e.said["messageId"]: e for e in earlier if e.said is not None}


def turn_events(stream: Stream) -> Iterator[TaskEvent]:
    """The stream's events until the turn ends: a terminal or interrupted state, or the script
    ran out (the engine's stream closes at either)."""
    for event in stream.events():
        if event is not KEEPALIVE:  # NDJSON has no comment line: a quiet stream writes nothing
            yield event
