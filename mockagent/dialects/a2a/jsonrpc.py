"""The A2A JSON-RPC 2.0 binding: one POST endpoint; errors in HTTP 200 with typed details.

A v1.0 method is served as it comes. A v0.3 method (`message/send`) is translated at the edge
(`v0_3.JsonRpcEdge`): its params to v1.0's on the way in, its answer, events and errors to v0.3's
on the way out. In between the call is v1.0's, and a v1.0 call never runs v0.3 code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent import errors
from mockagent.dialects.a2a import v0_3
from mockagent.dialects.a2a.error_table import jsonrpc_error
from mockagent.dialects.a2a.respond import Edge, fault_response, refused, stream_response
from mockagent.dialects.a2a.service import A2AService
from mockagent.dialects.faults import delay
from mockagent.dialects.http import JSON_TYPES, HttpRequest, HttpResponse, parse_json
from mockagent.vocabulary import A2A_OPERATIONS

BINDING = "JSONRPC"


def _echo_id(payload: Any) -> Any:
    """The request id to echo: a string, a number or null; anything else is echoed as null."""
    request_id = payload.get("id") if isinstance(payload, dict) else None
    valid = isinstance(request_id, (str, int, type(None))) and not isinstance(request_id, bool)
    return request_id if valid else None


def _envelope(payload: Any) -> tuple[str, Any]:
    """(method, params) of a request object, or InvalidRequest."""
    if isinstance(payload, list):
        raise errors.InvalidRequest("Batch requests are not supported")
    if not isinstance(payload, dict):
        raise errors.InvalidRequest("A JSON-RPC request is an object")
    if _echo_id(payload) != payload.get("id"):
        raise errors.InvalidRequest("id must be a string, a number or null")
    if payload.get("jsonrpc") != "2.0":
        raise errors.InvalidRequest('jsonrpc must be "2.0"')
    method = payload.get("method")
    if not isinstance(method, str):
        raise errors.InvalidRequest("method must be a string")
    params = payload.get("params")
    return method, {} if params is None else params


def _payload(request: HttpRequest) -> Any:
    """The JSON of a POST's body; ContentTypeNotSupported or ParseError."""
    media_type = request.media_type()
    if media_type and media_type not in JSON_TYPES:
        # Checked before parsing: the TCK sends text/plain with a body that is not JSON.
        raise errors.ContentTypeNotSupported(
            f"Content-Type {media_type} is not supported; send application/json"
        )
    try:
        return parse_json(request.body)
    except ValueError as exc:
        raise errors.ParseError(f"Invalid JSON payload: {exc}") from None


@dataclass(frozen=True)
class V1Edge:
    """A v1.0 call: params and answers as they are, errors as JSON-RPC error objects."""

    operation: str
    request_id: Any
    legacy: bool = False
    refuses_in_sse: bool = False

    def request(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise errors.InvalidParams("params must be an object")
        return params

    def answer(self, result: Any) -> Any:
        return result

    def event(self, event: Any) -> Any:
        return event

    def stream_error(self, exc: errors.ProtocolError) -> dict[str, Any]:
        return jsonrpc_error(exc, self.request_id)

    def refusal(self, exc: errors.ProtocolError) -> tuple[Any, int]:
        return jsonrpc_error(exc, self.request_id), 200  # JSON-RPC errors travel in HTTP 200


def _edge(service: A2AService, method: str, request_id: Any) -> Edge:
    """The edge a method's call passes: v1.0's, v0.3's, or MethodNotFound."""
    if method in A2A_OPERATIONS:
        return V1Edge(method, request_id)
    if method in v0_3.OPERATION_OF_METHOD:
        return v0_3.JsonRpcEdge(method, request_id, v0_3.wire_of(service.agent))
    raise errors.MethodNotFound(f"Method {method!r} not found", metadata={"method": method})


def refusal(request: HttpRequest) -> HttpResponse | None:
    """The error `handle` answers a POST with whose body is no JSON-RPC request (another
    Content-Type, no JSON, NaN, not a request object), or None for a well-formed request: the
    recording proxy answers those as `serve` does rather than forward them."""
    request_id: Any = None
    try:
        payload = _payload(request)
        request_id = _echo_id(payload)
        _envelope(payload)
    except errors.ProtocolError as exc:
        return HttpResponse.json(jsonrpc_error(exc, request_id))
    return None


def handle(service: A2AService, request: HttpRequest) -> HttpResponse:
    """Answer one JSON-RPC POST. Every error, even a parse error, is a JSON-RPC error object."""
    request_id: Any = None
    try:
        payload = _payload(request)
        request_id = _echo_id(payload)
        method, params = _envelope(payload)
        edge = _edge(service, method, request_id)
    except errors.ProtocolError as exc:  # before the method is known, errors are v1.0's
        return HttpResponse.json(jsonrpc_error(exc, request_id))
    return _through(service, request, edge, params, request_id)


def _through(
    service: A2AService, request: HttpRequest, edge: Edge, params: Any, request_id: Any
) -> HttpResponse:
    """The call through its edge: its params in; its answer, events or refusal out."""
    try:
        params = edge.request(params)
        answer = service.call(edge.operation, params, request, BINDING, legacy=edge.legacy)
    except errors.HttpFault as exc:
        return fault_response(exc.fault)
    except errors.ProtocolError as exc:
        return refused(edge, exc)

    def wrap(result: Any) -> dict[str, Any]:  # every event of a stream is a whole response too
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    if answer.stream is not None:
        return stream_response(answer.stream, lambda e: wrap(edge.event(e)), edge.stream_error)
    delay(answer.fault)
    return HttpResponse.json(wrap(edge.answer(answer.result)))
