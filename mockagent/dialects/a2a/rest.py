"""The A2A HTTP+JSON binding: a route table, every route also under a `/{tenant}` prefix.

v0.3's binding lives under `/v1` (`/v1/message:send`, `/v1/card`), which collides with a tenant
`v1`: a path that is exactly `/v1` + a v0.3 route is v0.3 when `A2A-Version` is missing or 0.3
(a2a-sdk 1.x's compat transport sends `a2a-version: 0.3`); with `A2A-Version: 1.x` it stays a
v1.0 call with tenant `v1`, and longer prefixes (`/v1/projects/p/...`) are always tenants. A v0.3
call is translated at the edge (`v0_3_rest.RestEdge`); a v1.0 call never runs v0.3 code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from mockagent import errors
from mockagent.cassette.header import ErrorTable
from mockagent.dialects.a2a import v0_3, v0_3_rest
from mockagent.dialects.a2a.error_table import rest_error
from mockagent.dialects.a2a.respond import Edge, fault_response, stream_response
from mockagent.dialects.a2a.service import A2AService, requested_version
from mockagent.dialects.a2a.wire import camel
from mockagent.dialects.faults import delay
from mockagent.dialects.http import JSON_TYPES, HttpRequest, HttpResponse, parse_json

BINDING = "HTTP+JSON"
_ID = r"[^/:]+"

# (verbs, path pattern, operation). Path groups become params; the tenant prefix may hold
# slashes (Google CES: /v1/projects/p/locations/l/apps/a/message:send).
ROUTES: list[tuple[frozenset[str], str, str]] = [
    (frozenset({"POST"}), r"/message:send", "SendMessage"),
    (frozenset({"POST"}), r"/message:stream", "SendStreamingMessage"),
    (frozenset({"GET"}), r"/tasks", "ListTasks"),
    (frozenset({"GET"}), rf"/tasks/(?P<id>{_ID})", "GetTask"),
    (frozenset({"POST"}), rf"/tasks/(?P<id>{_ID}):cancel", "CancelTask"),
    (frozenset({"GET", "POST"}), rf"/tasks/(?P<id>{_ID}):subscribe", "SubscribeToTask"),
    (
        frozenset({"POST"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs",
        "CreateTaskPushNotificationConfig",
    ),
    (
        frozenset({"GET"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs",
        "ListTaskPushNotificationConfigs",
    ),
    (
        frozenset({"GET"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs/(?P<id>{_ID})",
        "GetTaskPushNotificationConfig",
    ),
    (
        frozenset({"DELETE"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs/(?P<id>{_ID})",
        "DeleteTaskPushNotificationConfig",
    ),
    (frozenset({"GET"}), r"/extendedAgentCard", "GetExtendedAgentCard"),
]
_COMPILED = [
    (verbs, re.compile(rf"^(?:/(?P<tenant>.+?))?{path}\Z"), op) for verbs, path, op in ROUTES
]
_V03_COMPILED = [
    (verbs, re.compile(rf"^/v1{path}\Z"), op) for verbs, path, op in v0_3_rest.REST_ROUTES
]


class Route(NamedTuple):
    """A routed REST request: its operation, its path params, and whether it is v0.3 (`/v1/…`)."""

    operation: str
    path_params: dict[str, str]
    v0_3: bool = False


_INTS = ("historyLength", "pageSize")
_BOOLS = ("includeArtifacts",)


def route(request: HttpRequest) -> Route | None:
    """The route of a request below the agent's root (`classify`, with its `A2A-Version`)."""
    return classify(request.method, request.path, requested_version(request))


def classify(method: str, path: str, version: str = "") -> Route | None:
    """The route of `method path` below an agent's root, the one table of the HTTP+JSON binding:
    a v1.0 route after any tenant prefix, or `/v1` + a v0.3 route when `version` (the request's
    `A2A-Version`) is missing or 0.3. None when no route has this path; a path routed for other
    verbs only raises MethodNotFound with status 405."""
    path_known = False
    if _speaks_v0_3(version):
        for verbs, pattern, operation in _V03_COMPILED:
            found = pattern.match(path)
            if found:
                if method in verbs:
                    return Route(operation, found.groupdict(), v0_3=True)
                path_known = True
        if path_known:
            raise errors.MethodNotFound(f"{method} is not allowed on {path}", http_status=405)
    for verbs, pattern, operation in _COMPILED:
        found = pattern.match(path)
        if found:
            if method in verbs:
                return Route(
                    operation, {k: v for k, v in found.groupdict().items() if v is not None}
                )
            path_known = True
    if path_known:
        raise errors.MethodNotFound(f"{method} is not allowed on {path}", http_status=405)
    return None


def _speaks_v0_3(version: str) -> bool:
    """Whether a request with this `A2A-Version` may be v0.3: none, or a 0.3 one."""
    return not version or version.split(".")[:2] == ["0", "3"]


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

    def request(self, params: Any) -> dict[str, Any]:
        return params

    def answer(self, result: Any) -> Any:
        return {} if result is None else result  # a deleted config: {}

    def event(self, event: Any) -> Any:
        return event

    def stream_error(self, exc: errors.ProtocolError) -> dict[str, Any]:
        return rest_error(exc, self.table)[0]

    def refusal(self, exc: errors.ProtocolError) -> HttpResponse:
        return error_response(exc, self.table)


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
        return edge.refusal(exc)
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
        return v0_3_rest.rest_error_response(exc) if routed.v0_3 else error_response(exc)
    return None


def error_response(exc: errors.ProtocolError, table: ErrorTable = "1.0.1") -> HttpResponse:
    """A ProtocolError as `google.rpc.Status` JSON with its HTTP status, by the error table of
    specification `table` (the agent's `errorTable`; an error before any agent: 1.0.1's)."""
    body, status = rest_error(exc, table)
    return HttpResponse.json(body, status)
