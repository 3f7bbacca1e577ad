"""`GET /tasks/{id}/stream` and `GET /tasks/name/{name}/stream`: a task's updates as SSE.

The platform writes `data: <json>\\n\\n` frames and `:ping\\n\\n` keep-alives. The first frame is
`{"type": "connected", "taskId": …}`; then every agent message as start, a delta per piece (or one
full), done (the TaskMessageUpdates of the NDJSON message/send stream, `wire.updates`), and
`{"type": "task_updated", "task": <Task>}` when the task's status changes. The stream ends after a
terminal status. A task that is already terminal gets `connected`, one `task_updated` with that
task, and the end, as the platform does; an unknown task is a 404 platform error. A scripted
fault on a SubscribeToTask interaction applies: `delayMs`, `dropAfter`, and `errorAfter`, which
ends the stream with `{"type": "error", "message": …}`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from typing import Any

from mockagent import errors
from mockagent.dialects import sse
from mockagent.dialects.agentex import query, wire
from mockagent.dialects.http import HttpResponse
from mockagent.engine.call import TaskResult, TaskView
from mockagent.engine.replay import Engine
from mockagent.engine.stream import KEEPALIVE, Stream

PING = b":ping\n\n"
"""The platform's keep-alive: an SSE comment, which clients skip."""


def frame(payload: dict[str, Any]) -> bytes:
    """One `data:` frame of compact JSON (the platform names no SSE event)."""
    return sse.frame(payload)


def resolve(engine: Engine, path: dict[str, str], headers: dict[str, str]) -> str:
    """The task id the route names, by `id` or by `name`; reading the tasks is not a poll."""
    if "id" in path:
        return path["id"]
    view = next((v for v in query.all_tasks(engine, headers) if v.name == path["name"]), None)
    if view is None:
        raise errors.TaskNotFound(f"Task named {path['name']!r} not found")
    return view.id


def stream_response(engine: Engine, path: dict[str, str], headers: dict[str, str]) -> HttpResponse:
    """The SSE answer; raises a ProtocolError (or HttpFault) before any byte for a refused
    stream."""
    task_id = resolve(engine, path, headers)
    try:
        stream = engine.stream(query.call("SubscribeToTask", {"id": task_id}, "REST", headers))
    except errors.UnsupportedOperation:
        view = query.find(engine, task_id, headers)
        if view is None or not view.state.terminal:
            raise  # refused for another reason (a scripted error): the platform error
        return HttpResponse(200, _terminal(view), dict(sse.HEADERS))
    return HttpResponse(200, _frames(stream), dict(sse.HEADERS))


def _terminal(view: TaskView) -> Iterator[bytes]:
    """A task with nothing more to come: connected, the task as it ended, the end."""
    yield frame({"type": "connected", "taskId": view.id})
    yield frame({"type": "task_updated", "task": wire.render_task(view)})


def _frames(stream: Stream) -> Iterator[bytes]:
    for payload in stream.faulted(_payloads(stream)):
        if payload is KEEPALIVE:
            yield PING
        elif isinstance(payload, errors.ProtocolError):
            yield frame({"type": "error", "message": payload.message})
        else:
            yield frame(payload)


def _payloads(stream: Stream) -> Iterator[dict[str, Any] | None]:
    """connected, then the task's messages and status changes as they happen (None: a tick)."""
    first = stream.first
    assert isinstance(first, TaskResult)  # SubscribeToTask answers with the task
    view = first.task
    yield {"type": "connected", "taskId": view.id}
    shown = _status(view)
    index = itertools.count()
    for event in stream.events():  # ends after a terminal state, or when the server stops
        if event is KEEPALIVE:
            yield KEEPALIVE
        elif event.said is not None:
            yield from wire.updates(next(index), event.said, event.deltas, event.start)
        elif event.state is not None:
            view = dataclasses.replace(
                view,
                state=event.state,
                status_message=event.status_message,
                status_reason=event.status_reason,
                timestamp=event.timestamp or view.timestamp,
            )
            if _status(view) != shown:  # WORKING after SUBMITTED is RUNNING either way: no change
                shown = _status(view)
                yield {"type": "task_updated", "task": wire.render_task(view)}


def _status(view: TaskView) -> tuple[str, str | None]:
    return wire.STATUS[view.state], wire.status_reason(view)
