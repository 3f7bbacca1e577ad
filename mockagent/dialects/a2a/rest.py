"""The A2A HTTP+JSON binding: requests routed by `routes`, answered through their edge.

A v0.3 call (a v0.3 route below `/v1`) is translated at the edge (`v0_3_rest.RestEdge`); a v1.0
call never runs v0.3 code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent import errors
from mockagent.cassette.header import ErrorTable
from mockagent.dialects.a2a import v0_3, v0_3_rest
from mockagent.dialects.a2a.error_table import rest_error
from mockagent.dialects.a2a.respond import Edge, fault_response, refused, stream_response
from mockagent.dialects.a2a.routes import Route, classify
from mockagent.dialects.a2a.service import A2AService, requested_version
from mockagent.dialects.a2a.wire import camel
from mockagent.dialects.faults import delay
from mockagent.dialects.http import JSON_TYPES, HttpRequest, HttpResponse, parse_json

BINDING = "HTTP+JSON"
_INTS = ("historyLength", "pageSize")
_BOOLS = ("includeArtifacts",)


def route(request: HttpRequest) -> Route | None:
    """The route of a request below the agent's root (`routes.classify`, with its
    `A2A-Version`); MethodNotFound (405) for a path routed for other verbs only."""
    return classify(request.method, request.path, requested_version(request))


def _query_params(request: HttpRequest) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key, value in request.query.items():
        name = camel(key)
        if name in _INTS:
            try:
                params[name] = int(value)
            except ValueError:
                raise errors.InvalidParams(f"{name} must be an integer, not {value!r}") from None
        elif name in _BOOLS:
            params[name] = value.lower() in ("true", "1")
        else:
            params[name] = value
    return params


def _body_params(request: HttpRequest) -> dict[str, Any]:
    if not request.body.strip():
        return {}  # the TCK cancels and subscribes with no body
    if request.media_type() and request.media_type() not in JSON_TYPES:
        raise errors.ContentTypeNotSupported(
            f"Content-Type {request.media_type()} is not supported; send application/json",
            http_status=415,
        )
    try:
        payload = parse_json(request.body)
    except ValueError as exc:
        raise errors.ParseError(f"Invalid JSON payload: {exc}") from None
    if not isinstance(payload, dict):
        raise errors.InvalidParams("The request body must be a JSON object")
    return payload


def request_params(
    request: HttpRequest, path_params: dict[str, str]
) -> tuple[dict[str, Any], str | None]:
    """(params, tenant) of a routed request: body, then query, then path params (which win)."""
    params = _body_params(request) if request.method in ("POST", "PUT", "PATCH") else {}
    params.update(_query_params(request))
    path_params = dict(path_params)
    tenant = path_params.pop("tenant", None)
    params.update(path_params)
    return params, tenant


@dataclass(frozen=True)
class V1Edge:
    """A v1.0 call: params and answers as they are, errors as `google.rpc.Status` by the agent's
    error table."""

    operation: str
    table: ErrorTable = "1.0.1"
    legacy: bool = False
    refuses_in_sse: bool = False

    def request(self, params: Any) -> dict[str, Any]:
        return params

    def answer(self, result: Any) -> Any:
        return {} if result is None else result  # a deleted config: {}

    def event(self, event: Any) -> Any:
        return event

    def stream_error(self, exc: errors.ProtocolError) -> dict[str, Any]:
        return rest_error(exc, self.table)[0]

    def refusal(self, exc: errors.ProtocolError) -> tuple[Any, int]:
        return rest_error(exc, self.table)


def handle(service: A2AService, request: HttpRequest, routed: Route) -> HttpResponse:
    """Answer one routed REST request through its edge (v1.0's, or v0.3's under `/v1`)."""
    edge: Edge = (
        v0_3_rest.RestEdge(routed.operation, v0_3.wire_of(service.agent))
        if routed.v0_3
        else V1Edge(routed.operation, service.agent.errorTable)
    )
    try:
        params, tenant = request_params(request, routed.path_params)
        params = edge.request(params)
        answer = service.call(
            edge.operation, params, request, BINDING, tenant=tenant, legacy=edge.legacy
        )
    except errors.HttpFault as exc:
        return fault_response(exc.fault)
    except errors.ProtocolError as exc:
        return refused(edge, exc)
    if answer.stream is not None:
        return stream_response(answer.stream, edge.event, edge.stream_error)
    delay(answer.fault)
    return HttpResponse.json(edge.answer(answer.result))


def refusal(request: HttpRequest) -> HttpResponse | None:
    """The error `handle` answers a request with whose body or query it cannot read (no JSON,
    NaN, not an object), or None: the recording proxy answers those as `serve` does rather than
    forward them. A path no route has is the upstream's to answer."""
    try:
        routed = route(request)
    except errors.ProtocolError:
        return None
    if routed is None:
        return None
    try:
        request_params(request, routed.path_params)
    except errors.ProtocolError as exc:
        return (
            HttpResponse.json(*v0_3_rest.rest_refusal(exc)) if routed.v0_3 else error_response(exc)
        )
    return None


def error_response(exc: errors.ProtocolError, table: ErrorTable = "1.0.1") -> HttpResponse:
    """A ProtocolError as `google.rpc.Status` JSON with its HTTP status, by the error table of
    specification `table` (the agent's `errorTable`; an error before any agent: 1.0.1's)."""
    body, status = rest_error(exc, table)
    return HttpResponse.json(body, status)
