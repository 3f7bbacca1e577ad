"""The Agentex dialect (Scale AI Agentex platform API), replay only: JSON-RPC per agent, REST
around it.

Routes hang off the mount's root, as they do off the platform's base URL:
`POST /agents/{agent_id}/rpc` and `POST /agents/name/{agent_name}/rpc` (task/create, message/send,
event/send, task/cancel, task/interrupt), and `GET /agents`, `/tasks`, `/messages`, `/events`.
"""

from __future__ import annotations

import re

from mockagent import errors
from mockagent.dialects.agentex import rest, rpc
from mockagent.dialects.agentex.error_table import platform_error
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.engine.clock import format_timestamp
from mockagent.engine.replay import Engine

__all__ = ["AgentexAgent"]

TASK_PATH = re.compile(r"^/tasks/(?P<id>[^/]+)(/.*)?\Z")
RPC_ROUTES = [
    re.compile(r"^/agents/name/(?P<name>[^/]+)/rpc/?\Z"),
    re.compile(r"^/agents/(?P<id>[^/]+)/rpc/?\Z"),
]


class AgentexAgent:
    """Routes the requests to one Agentex cassette: its agents' RPC endpoints and the REST
    routes."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.platform = rest.Platform(
            engine, list(engine.cassette.agents), format_timestamp(engine.clock.now())
        )

    def close(self) -> None:
        """End this cassette's streams and playing tasks."""
        self.engine.close()

    def would_answer(self, request: HttpRequest) -> bool:
        """Whether this cassette answers `request` itself: an RPC call an interaction matches or
        that names one of its tasks, or a read of one of its tasks (a recording proxy forwards
        the rest)."""
        for pattern in RPC_ROUTES:
            found = pattern.match(request.path)
            if found and request.method == "POST":
                try:
                    call = rpc.peek(self.platform.agent(**found.groupdict()), request)
                except errors.ProtocolError:
                    return False
                return call is not None and self.engine.answers(call)
        task = TASK_PATH.match(request.path)
        task_id = task.group("id") if task else request.query.get("task_id")
        return task_id is not None and self.engine.tasks.peek(task_id) is not None

    def handle(self, request: HttpRequest) -> HttpResponse:
        """Answer any request under this mount; never raises for a bad request."""
        for pattern in RPC_ROUTES:
            found = pattern.match(request.path)
            if found and request.method == "POST":
                try:
                    agent = self.platform.agent(**found.groupdict())
                except errors.ProtocolError as exc:
                    return platform_error(exc)
                return rpc.handle(self.engine, agent, request)
        return rest.handle(self.platform, request)
