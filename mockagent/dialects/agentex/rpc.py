"""The Agentex JSON-RPC endpoint: `POST /agents/{id}/rpc` and `POST /agents/name/{name}/rpc`.

A request is `{"method", "params", "jsonrpc"?, "id"?}` (the official client sends neither
`jsonrpc` nor `id`); the answer echoes `id` (null when absent). Each method becomes one engine
call; the agent's name goes into the params as `agent`, so `where: {agent: echo-bot}` selects an
agent in a cassette that serves several. A user turn (message/send, event/send) is sent as a
neutral message: `{"text": …}` part for text content, `{"data": content}` otherwise, so
`match: {text: …}` works, and the raw content as `content`, which `where: {content.type: …}` sees.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mockagent import errors
from mockagent.cassette.models import AgentexAgent, TaskState
from mockagent.dialects.agentex import ndjson, query, wire
from mockagent.dialects.agentex.error_table import delay, fault_response, rpc_error
from mockagent.dialects.http import JSON_TYPES, HttpRequest, HttpResponse, parse_json
from mockagent.engine.call import Call, MessageResult, Outcome, TaskResult, TaskView
from mockagent.engine.replay import Engine

BINDING = "RPC"
ALLOWED = {  # the platform's ACP_TYPE_TO_ALLOWED_RPC_METHODS
    "sync": frozenset({"message/send", "task/create", "task/interrupt"}),
    "async": frozenset({"task/create", "task/cancel", "task/interrupt", "event/send"}),
    "agentic": frozenset({"task/create", "task/cancel", "task/interrupt", "event/send"}),
}
CONTENT_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {  # TaskMessageContent, by `type`
    "text": {"author": str, "content": str},
    "data": {"author": str, "data": dict},
    "tool_request": {"author": str, "name": str, "tool_call_id": str, "arguments": dict},
    "tool_response": {"author": str, "name": str, "tool_call_id": str, "content": object},
    "reasoning": {"author": str, "summary": list},
}
Params = dict[str, Any]


def _optional(p: Params, key: str, kind: type) -> Any:
    value = p.get(key)
    if value is not None and not isinstance(value, kind):
        raise errors.InvalidParams(
            f"params.{key}: must be {'an object' if kind is dict else 'a ' + kind.__name__}"
        )
    return value


def _content(p: Params, required: bool) -> dict[str, Any] | None:
    """The TaskMessageContent of a turn, `type` defaulted to text; InvalidParams if malformed."""
    content = p.get("content")
    if content is None and not required:
        return None
    if not isinstance(content, dict):
        raise errors.InvalidParams("params.content: a TaskMessageContent object is required")
    content = {"type": "text", **content}
    fields = CONTENT_FIELDS.get(content["type"]) if isinstance(content["type"], str) else None
    if fields is None:
        raise errors.InvalidParams(
            f"params.content.type: {content['type']!r} is not one of {', '.join(CONTENT_FIELDS)}"
        )
    for name, kind in fields.items():
        if name not in content or not isinstance(content[name], kind):
            raise errors.InvalidParams(
                f"params.content.{name}: required for {content['type']} content"
            )
    if content["author"] not in ("user", "agent"):
        raise errors.InvalidParams(
            f"params.content.author: user or agent, not {content['author']!r}"
        )
    return content


def _task_ref(p: Params, required: bool) -> Params:
    """`{id}` or `{name}` of the task a call names; not both (-32602), one if `required`
    (-32603)."""
    task_id, task_name = _optional(p, "task_id", str), _optional(p, "task_name", str)
    if task_id and task_name:
        raise errors.InvalidParams("Provide either task_id or task_name, not both")
    if required and not (task_id or task_name):
        raise errors.UnsupportedOperation("Either task_id or task_name must be provided")
    return {"id": task_id} if task_id else {"name": task_name} if task_name else {}


def _turn(method: str, p: Params, agent: AgentexAgent, content: dict[str, Any] | None) -> Params:
    """A user turn as the engine's neutral message (messageId is volatile, as a client's is)."""
    message: Params = {"messageId": uuid.uuid4().hex, "role": "user"}
    message["parts"] = (
        []
        if content is None
        else [{"text": content["content"]} if content["type"] == "text" else {"data": content}]
    )
    if content is not None:
        message["content"] = content  # history keeps the turn as the client sent it
    message["metadata"] = {wire.METHOD_KEY: method, wire.AGENT_KEY: agent.id}
    ref = _task_ref(p, required=method == "event/send")
    if ref.get("id"):
        message["taskId"] = ref["id"]
    params: Params = {"message": message}
    if ref.get("name"):
        params["taskName"] = ref["name"]
    return params


def _create_task(p: Params, agent: AgentexAgent) -> Params:
    params = {
        "name": _optional(p, "name", str),
        "params": _optional(p, "params", dict),
        "taskMetadata": _optional(p, "task_metadata", dict),
        "agent": agent.name,
    }
    return {k: v for k, v in params.items() if v is not None}


def _send_message(p: Params, agent: AgentexAgent) -> Params:
    content = _content(p, required=True)
    _optional(p, "stream", bool)
    params = _turn("message/send", p, agent, content)
    task_params = _optional(p, "task_params", dict)
    if task_params is not None:
        params["taskParams"] = task_params
    return {**params, "content": content, "agent": agent.name}


def _send_event(p: Params, agent: AgentexAgent) -> Params:
    content = _content(p, required=False)
    params = _turn("event/send", p, agent, content)
    return {**params, **({"content": content} if content is not None else {}), "agent": agent.name}


def _by_ref(p: Params, agent: AgentexAgent) -> Params:
    return {**_task_ref(p, required=True), "agent": agent.name}


def _task(outcome: Outcome, engine: Engine, headers: dict[str, str]) -> Any:
    assert isinstance(outcome, TaskResult)
    return wire.render_task(outcome.task)


def _messages(outcome: Outcome, engine: Engine, headers: dict[str, str]) -> Any:
    """The agent's replies of this turn (not the user's message), or the failure of the turn."""
    if isinstance(outcome, MessageResult):
        return [wire.said_message(outcome.message)]
    assert isinstance(outcome, TaskResult)
    if outcome.task.state is TaskState.FAILED:
        raise errors.InternalError(
            wire.status_reason(outcome.task) or f"Task {outcome.task.id} failed"
        )
    return [wire.said_message(said) for said in outcome.said]


def _event(outcome: Outcome, engine: Engine, headers: dict[str, str]) -> Any:
    """The Event this call created: the task's latest event/send turn."""
    view: TaskView | None
    if isinstance(outcome, TaskResult):
        view = outcome.task
    else:  # a direct `message` reply carries no task snapshot: read the task without a poll
        assert isinstance(outcome, MessageResult)
        view = query.find(engine, outcome.message.get("taskId") or "", headers)
    found = wire.events(view) if view is not None else []
    if not found:
        raise errors.InternalError(
            "The event belongs to no task: answer event/send with `task: steps`"
        )
    return found[-1]


Build = Callable[[Params, AgentexAgent], Params]
Render = Callable[[Outcome, Engine, dict[str, str]], Any]
METHOD_TABLE: dict[str, tuple[str, Build, Render]] = {
    "task/create": ("CreateTask", _create_task, _task),
    "message/send": (
        "SendMessage",
        _send_message,
        _messages,
    ),  # SendStreamingMessage with stream: true
    "event/send": ("SendEvent", _send_event, _event),
    "task/cancel": ("CancelTask", _by_ref, _task),
    "task/interrupt": ("InterruptTask", _by_ref, _task),
}
"""method → (engine operation, params builder, result renderer)."""


def _echo_id(payload: Any) -> Any:
    """The request id to echo: a string, a number or null; anything else is echoed as null."""
    request_id = payload.get("id") if isinstance(payload, dict) else None
    valid = isinstance(request_id, (str, int, type(None))) and not isinstance(request_id, bool)
    return request_id if valid else None


def _payload(request: HttpRequest) -> Any:
    if request.media_type() and request.media_type() not in JSON_TYPES:
        raise errors.ContentTypeNotSupported(
            f"Content-Type {request.media_type()} is not supported; send application/json"
        )
    try:
        return parse_json(request.body)
    except ValueError as exc:
        raise errors.ParseError(f"Invalid JSON body: {exc}") from None


def _envelope(payload: Any) -> tuple[str, Params]:
    """(method, params) of a request object; `jsonrpc` and `id` may be absent."""
    if not isinstance(payload, dict):
        raise errors.InvalidRequest("The request body must be a JSON object: {method, params}")
    if payload.get("jsonrpc") not in (None, "2.0"):
        raise errors.InvalidRequest('jsonrpc must be "2.0" (or absent)')
    if _echo_id(payload) != payload.get("id"):
        raise errors.InvalidRequest("id must be a string, a number or null")
    method = payload.get("method")
    if not isinstance(method, str) or method not in METHOD_TABLE:
        raise errors.MethodNotFound(
            f"Unsupported method: {method!r}; use one of {', '.join(METHOD_TABLE)}"
        )
    params = payload.get("params")
    if not isinstance(params, dict):
        raise errors.InvalidParams("params: an object is required")
    return method, params


def _build(agent: AgentexAgent, method: str, p: Params, request: HttpRequest) -> Call:
    """The engine call for a method, or the ProtocolError that refuses it."""
    operation, build, _ = METHOD_TABLE[method]
    if method not in ALLOWED[agent.acp_type]:
        raise errors.UnsupportedOperation(
            f"Unsupported method: {method} for ACP type: {agent.acp_type}"
        )
    params = build(p, agent)
    if operation == "SendMessage" and p.get("stream") is True:
        operation = "SendStreamingMessage"
    return replace(query.call(operation, params, BINDING, request.headers), method=method)


def _call(
    engine: Engine, agent: AgentexAgent, method: str, p: Params, request: HttpRequest
) -> Call:
    """The engine call for a method; a refused one is journaled too."""
    try:
        return _build(agent, method, p, request)
    except errors.ProtocolError as exc:
        engine.record(query.call(METHOD_TABLE[method][0], p, BINDING, request.headers), exc)
        raise


def peek(agent: AgentexAgent, request: HttpRequest) -> Call | None:
    """The engine call an RPC request would make, without answering or journaling it."""
    try:
        method, params = _envelope(_payload(request))
        return _build(agent, method, params, request)
    except errors.ProtocolError:
        return None


def refusal(request: HttpRequest) -> HttpResponse | None:
    """The error `handle` answers a POST with whose body is no RPC request (another
    Content-Type, no JSON, NaN, not a request object, an unknown method), or None: the recording
    proxy answers those as `serve` does rather than forward them."""
    request_id: Any = None
    try:
        payload = _payload(request)
        request_id = _echo_id(payload)
        _envelope(payload)
    except errors.ProtocolError as exc:
        return HttpResponse.json(rpc_error(exc, request_id))
    return None


def handle(engine: Engine, agent: AgentexAgent, request: HttpRequest) -> HttpResponse:
    """Answer one RPC POST; every failure is an error envelope in HTTP 200 (or a scripted fault)."""
    request_id: Any = None
    try:
        payload = _payload(request)
        request_id = _echo_id(payload)
        method, params = _envelope(payload)
        call = _call(engine, agent, method, params, request)
        if call.operation == "SendStreamingMessage":
            return ndjson.stream_response(engine.stream(call), request_id)
        outcome = engine.handle(call)
        result = METHOD_TABLE[method][2](outcome, engine, request.headers)
    except errors.HttpFault as exc:
        return fault_response(exc.fault)
    except errors.ProtocolError as exc:
        return HttpResponse.json(rpc_error(exc, request_id))
    delay(outcome.fault)
    return HttpResponse.json({"jsonrpc": "2.0", "id": request_id, "result": result, "error": None})
