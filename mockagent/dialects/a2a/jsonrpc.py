"""The A2A JSON-RPC 2.0 binding: one POST endpoint; errors in HTTP 200 with typed details."""

from __future__ import annotations

from typing import Any

from mockagent import errors
from mockagent.dialects import sse
from mockagent.dialects.a2a import v0_3
from mockagent.dialects.a2a.error_table import jsonrpc_error
from mockagent.dialects.a2a.respond import fault_response, stream_response
from mockagent.dialects.a2a.service import A2AService
from mockagent.dialects.a2a.wire import normalise
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
        if method in v0_3.OPERATION_OF_METHOD:
            return _handle_v0_3(service, request, method, params, request_id)
        if method not in A2A_OPERATIONS:
            raise errors.MethodNotFound(f"Method {method!r} not found", metadata={"method": method})
        if not isinstance(params, dict):
            raise errors.InvalidParams("params must be an object")
        answer = service.call(method, params, request, BINDING)
    except errors.HttpFault as exc:
        return fault_response(exc.fault)
    except errors.ProtocolError as exc:
        return HttpResponse.json(jsonrpc_error(exc, request_id))

    def wrap(result: Any) -> dict[str, Any]:  # every event of a stream is a whole response too
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    if answer.stream is not None:
        return stream_response(answer.stream, wrap, lambda exc: jsonrpc_error(exc, request_id))
    delay(answer.fault)
    return HttpResponse.json(wrap(answer.result))


def _handle_v0_3(
    service: A2AService, request: HttpRequest, method: str, params: Any, request_id: Any
) -> HttpResponse:
    """A v0.3 method: v0.3 params in, v0.3 shapes out; streams answer in SSE even when refused."""
    streaming = method in v0_3.STREAMING_METHODS
    wire = v0_3.wire_of(service.agent)
    try:
        params = v0_3.params_in(method, normalise(v0_3.check_params(params)))
        answer = service.call(
            v0_3.OPERATION_OF_METHOD[method], params, request, BINDING, legacy=True
        )
    except errors.HttpFault as exc:
        return fault_response(exc.fault)
    except errors.ProtocolError as exc:
        if streaming:  # a2a-sdk 0.3 reads streams with httpx-sse: an error must be SSE too
            return HttpResponse(
                200, iter([sse.frame(v0_3.error_out(exc, request_id))]), dict(sse.HEADERS)
            )
        return HttpResponse.json(
            v0_3.error_out(exc, request_id, null_data=wire.errorData == "null")
        )

    if answer.stream is not None:
        close_on_interrupt = method == "message/stream" and wire.interruptedFinal

        def wrap(result: Any) -> dict[str, Any]:
            event = v0_3.stream_event_out(result, close_on_interrupt=close_on_interrupt)
            return {"jsonrpc": "2.0", "id": request_id, "result": event}

        return stream_response(answer.stream, wrap, lambda exc: v0_3.error_out(exc, request_id))
    delay(answer.fault)
    result = v0_3.result_out(method, answer.result)  # the extended card has its v0.3 fields
    return HttpResponse.json({"jsonrpc": "2.0", "id": request_id, "result": result})
