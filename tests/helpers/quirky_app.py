"""The quirky agent (tests/helpers/quirky_agent.py) over HTTP: JSON-RPC at `POST /`, the
HTTP+JSON routes, the card at /.well-known/agent-card.json; served on 127.0.0.1, a free port."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.helpers.quirky_agent import ERRORS, A2AError, QuirkyAgent
from tests.helpers.upstream import UpstreamAgent

OPERATIONS: dict[str, tuple[str, bool]] = {  # JSON-RPC method -> (QuirkyAgent method, streams)
    "SendMessage": ("send", False),
    "SendStreamingMessage": ("stream", True),
    "GetTask": ("get", False),
    "CancelTask": ("cancel", False),
    "SubscribeToTask": ("subscribe", True),
}


def error_answer(name: str, binding: str, request_id: Any = None) -> Response:
    code, http, status, reason, text = ERRORS[name]
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
    }
    if binding == "JSONRPC":
        error = {"code": code, "message": text, "data": [info]}
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error})
    body = {"error": {"code": http, "status": status, "message": text, "details": [info]}}
    return JSONResponse(body, status_code=http)


def sse(events: AsyncIterator[dict[str, Any]], request_id: Any, binding: str) -> Response:
    async def lines() -> AsyncIterator[str]:
        async for event in events:
            if binding == "JSONRPC":
                event = {"jsonrpc": "2.0", "id": request_id, "result": event}
            yield f"data: {json.dumps(event)}\n\n"

    return StreamingResponse(lines(), media_type="text/event-stream")


async def answer(
    agent: QuirkyAgent, operation: str, params: dict[str, Any], binding: str, request_id: Any
) -> Response:
    """Run one operation and render its result, stream or error for `binding`."""
    if operation not in OPERATIONS:
        return error_answer("MethodNotFound", binding, request_id)
    method, streams = OPERATIONS[operation]
    try:
        result = getattr(agent, method)(params)
        if inspect.isawaitable(result):
            result = await result
        if streams:
            events: AsyncIterator[dict[str, Any]] = result
            first = await anext(aiter(events))  # an error before the first event is a plain answer
    except A2AError as error:
        return error_answer(error.name, binding, request_id)
    if streams:

        async def chained() -> AsyncIterator[dict[str, Any]]:
            yield first
            async for event in events:
                yield event

        return sse(chained(), request_id, binding)
    if binding == "JSONRPC":
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result})
    return JSONResponse(result)


def card(url: str) -> dict[str, Any]:
    return {
        "name": "quirky",
        "description": "A raw A2A agent with quirks the specification allows.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "quirky",
                "name": "Quirky behaviours",
                "description": "'?' -> a message; 'ask' -> input-required; else completed.",
                "tags": ["test"],
            }
        ],
    }


def create_quirky_app(url: str, **quirks: Any) -> Starlette:
    """The quirky agent as a Starlette app whose card advertises `url` (`quirks`: see
    QuirkyAgent)."""
    agent = QuirkyAgent(**quirks)

    async def rpc(request: Request) -> Response:
        body = await request.json()
        params = body.get("params") or {}
        return await answer(agent, body.get("method", ""), params, "JSONRPC", body.get("id"))

    def rest(operation: str, with_body: bool = True) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            params = (await request.json() if await request.body() else {}) if with_body else {}
            if "task_id" in request.path_params:
                params["id"] = request.path_params["task_id"]
            return await answer(agent, operation, params, "HTTP+JSON", None)

        return endpoint

    async def agent_card(request: Request) -> Response:
        return JSONResponse(card(url))

    app = Starlette(
        routes=[
            Route("/", rpc, methods=["POST"]),
            Route("/.well-known/agent-card.json", agent_card),
            Route("/message:send", rest("SendMessage"), methods=["POST"]),
            Route("/message:stream", rest("SendStreamingMessage"), methods=["POST"]),
            Route("/tasks/{task_id}:cancel", rest("CancelTask"), methods=["POST"]),
            Route("/tasks/{task_id}:subscribe", rest("SubscribeToTask"), methods=["GET", "POST"]),
            Route("/tasks/{task_id}", rest("GetTask", with_body=False), methods=["GET"]),
        ]
    )
    app.state.handler = agent  # UpstreamAgent.stop ends open subscriptions through it
    return app


@contextmanager
def serve_quirky(**quirks: Any) -> Iterator[UpstreamAgent]:
    """The quirky agent on 127.0.0.1, a free port, in a daemon thread, for the block
    (`quirks`: see QuirkyAgent)."""
    agent = UpstreamAgent(app_factory=lambda url: create_quirky_app(url, **quirks)).start()
    try:
        yield agent
    finally:
        agent.stop()
