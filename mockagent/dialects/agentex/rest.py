"""The platform's REST routes a client calls around the RPC: agents, tasks, messages, events.

Lists are bare JSON arrays; errors are `{"message", "code", "data": null}` with the HTTP status.
GET /tasks/{id}, /tasks/name/{name} and /messages are polls (GetTask); the other reads move nothing.
GET /tasks/{id}/stream and /tasks/name/{name}/stream are SSE (task_stream.py), not polls.
Tasks belong to the cassette, not to one agent: the agent filters of GET /tasks are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockagent import errors
from mockagent.cassette.models import AgentexAgent
from mockagent.dialects.agentex import query, task_stream, wire
from mockagent.dialects.agentex.error_table import delay, fault_response, platform_error
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.engine.call import TaskResult
from mockagent.engine.replay import Engine


def not_found(message: str) -> errors.ProtocolError:
    return errors.ProtocolError(message, http_status=404)


@dataclass(frozen=True)
class Platform:
    """What the REST routes answer from: the engine and the cassette's agents."""

    engine: Engine
    agents: list[AgentexAgent]
    created: str  # the agents' created_at and updated_at: the cassette clock's start

    def agent(self, *, id: str | None = None, name: str | None = None) -> AgentexAgent:
        """The agent with this id or name; a 404 platform error otherwise."""
        found = next(
            (a for a in self.agents if (a.id == id if id is not None else a.name == name)), None
        )
        if found is None:
            which = "with id " + repr(id) if id is not None else "named " + repr(name)
            raise not_found(f"Agent {which} not found")
        return found


Handler = Callable[[Platform, HttpRequest, dict[str, str]], Any]


def _int(request: HttpRequest, key: str, default: int | None = None) -> int | None:
    value = request.query.get(key)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise errors.InvalidParams(f"{key} must be an integer, not {value!r}") from None


def _required(request: HttpRequest, key: str) -> str:
    if not request.query.get(key):
        raise errors.InvalidParams(f"query parameter {key} is required")
    return request.query[key]


def _page(items: list[Any], request: HttpRequest) -> list[Any]:
    """`order_direction=desc` reverses the natural order; `limit` and `page_number` (from 1)
    page."""
    if request.query.get("order_direction", "").lower() == "desc":
        items = items[::-1]
    limit = _int(request, "limit")
    if limit is None:
        return items
    start = (max(_int(request, "page_number", 1) or 1, 1) - 1) * max(limit, 0)
    return items[start : start + max(limit, 0)]


def _list_agents(p: Platform, request: HttpRequest, path: dict[str, str]) -> Any:
    return _page([wire.render_agent(a, p.created) for a in p.agents], request)


def _agent(p: Platform, request: HttpRequest, path: dict[str, str]) -> Any:
    return wire.render_agent(p.agent(**path), p.created)


def _list_tasks(p: Platform, request: HttpRequest, path: dict[str, str]) -> Any:
    status = request.query.get("status")
    if status and status not in wire.STATUS.values():
        raise errors.InvalidParams(
            f"status {status!r} is not one of {', '.join(sorted(set(wire.STATUS.values())))}"
        )
    views = sorted(
        query.all_tasks(p.engine, request.headers)[::-1], key=lambda v: v.created
    )  # oldest first
    tasks = [wire.render_task(v, lean=True) for v in views]
    return _page([t for t in tasks if not status or t["status"] == status], request)


def _task(p: Platform, request: HttpRequest, path: dict[str, str]) -> Any:
    return wire.render_task(query.poll(p.engine, path, request.headers))


def _task_stream(p: Platform, request: HttpRequest, path: dict[str, str]) -> HttpResponse:
    """SSE of the task's updates (task_stream.py); a refused stream is a platform error."""
    return task_stream.stream_response(p.engine, path, request.headers)


def _task_operation(operation: str) -> Handler:
    def run(p: Platform, request: HttpRequest, path: dict[str, str]) -> Any:
        outcome = p.engine.handle(query.call(operation, dict(path), "REST", request.headers))
        assert isinstance(outcome, TaskResult)
        delay(outcome.fault)
        return wire.render_task(outcome.task)

    return run


def _list_messages(p: Platform, request: HttpRequest, path: dict[str, str]) -> Any:
    view = query.poll(p.engine, {"id": _required(request, "task_id")}, request.headers)
    return _page(wire.history(view), request)


def _list_events(p: Platform, request: HttpRequest, path: dict[str, str]) -> Any:
    agent_id, task_id = _required(request, "agent_id"), _required(request, "task_id")
    view = query.find(p.engine, task_id, request.headers)
    if view is None:
        raise not_found(f"Task {task_id} not found")
    found = [e for e in wire.events(view) if e["agent_id"] == agent_id]
    after = request.query.get("last_processed_event_id")
    if after:
        seen = [i for i, e in enumerate(found) if e["id"] == after]
        found = found[seen[0] + 1 :] if seen else found
    limit = _int(request, "limit")
    return found if limit is None else found[: max(limit, 0)]


_SEGMENT = r"(?P<{}>[^/]+)"
ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", r"/agents", _list_agents),
    ("GET", r"/agents/name/" + _SEGMENT.format("name"), _agent),
    ("GET", r"/agents/" + _SEGMENT.format("id"), _agent),
    ("GET", r"/tasks", _list_tasks),
    ("GET", r"/tasks/name/" + _SEGMENT.format("name") + "/stream", _task_stream),
    ("GET", r"/tasks/name/" + _SEGMENT.format("name"), _task),
    ("GET", r"/tasks/" + _SEGMENT.format("id") + "/stream", _task_stream),
    ("GET", r"/tasks/" + _SEGMENT.format("id"), _task),
    ("POST", r"/tasks/" + _SEGMENT.format("id") + "/cancel", _task_operation("CancelTask")),
    ("POST", r"/tasks/" + _SEGMENT.format("id") + "/interrupt", _task_operation("InterruptTask")),
    ("GET", r"/messages", _list_messages),
    ("GET", r"/events", _list_events),
]
_COMPILED = [(verb, re.compile(rf"^{pattern}/?\Z"), handler) for verb, pattern, handler in ROUTES]


def handle(platform: Platform, request: HttpRequest) -> HttpResponse:
    """Answer one REST request; unknown routes are 404, a known path with another verb 405."""
    try:
        path_known = False
        for verb, pattern, handler in _COMPILED:
            found = pattern.match(request.path)
            if found and request.method in (verb, "HEAD" if verb == "GET" else verb):
                answer = handler(platform, request, found.groupdict())
                return answer if isinstance(answer, HttpResponse) else HttpResponse.json(answer)
            path_known = path_known or found is not None
        if path_known:
            raise errors.ProtocolError(
                f"{request.method} is not allowed on {request.path}", http_status=405
            )
        raise not_found(f"No Agentex route for {request.method} {request.path or '/'}")
    except errors.HttpFault as exc:
        return fault_response(exc.fault)
    except errors.ProtocolError as exc:
        return platform_error(exc)
