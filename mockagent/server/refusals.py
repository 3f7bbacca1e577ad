"""What the server answers when it refuses a request before any agent sees it (a body too large,
unreadable or late; the guard's refusal of a Host, an Origin, a token, a Content-Type; werkzeug's
refusal of an admin request), in the shape of the protocol served at the path: the admin API's
error, a JSON-RPC error, an Agentex error or a `google.rpc.Status`."""

from __future__ import annotations

import json
from typing import Any

from flask import Response, request
from werkzeug.exceptions import BadHost, HTTPException, MethodNotAllowed

from mockagent.dialects.a2a import rest, v0_3_rest
from mockagent.dialects.a2a.error_table import jsonrpc_error
from mockagent.dialects.a2a.rest import error_response
from mockagent.dialects.agentex import RPC_ROUTES
from mockagent.dialects.agentex.error_table import platform_error, rpc_error
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.errors import ContentTypeNotSupported, InvalidRequest, ProtocolError
from mockagent.server.guard import Refusal
from mockagent.server.mounts import Mounts
from mockagent.server.wsgi import droppable, headers_of, path_of
from mockagent.vocabulary import ADMIN_PREFIX, HTTP_METHODS


def flask_response(answer: HttpResponse) -> Response:
    """A dialect's answer as a Flask response (the recording proxy); a streamed body stays
    streamed."""
    body = answer.body if isinstance(answer.body, bytes) else droppable(answer.body)
    return Response(body, status=answer.status, headers=answer.headers)


def refused_in_shape(
    mounts: Mounts,
    full_path: str,
    method: str,
    headers: dict[str, str],
    admin: bool,
    exc: ProtocolError,
    status: int,
    request_id: Any = None,
) -> HttpResponse:
    """HTTP `status` with `exc` in the shape of the protocol served at `full_path`: the admin
    API's error, a JSON-RPC error (with `request_id`), an Agentex or a `google.rpc.Status` body.
    A refused Content-Type keeps the HTTP+JSON binding's own 415 there (the A2A TCK checks
    it)."""
    if admin and (full_path == ADMIN_PREFIX or full_path.startswith(ADMIN_PREFIX + "/")):
        return HttpResponse.json({"error": {"code": status, "message": exc.message}}, status)
    rest_status = 415 if isinstance(exc, ContentTypeNotSupported) else status
    found = mounts.resolve(full_path)
    if found is None:
        exc.http_status = rest_status
        return error_response(exc)
    name, sub = found
    if mounts.agents[name].cassette.protocol == "agentex":
        if method == "POST" and any(pattern.match(sub) for pattern in RPC_ROUTES):
            return HttpResponse.json(rpc_error(exc, request_id), status)
        exc.http_status = status
        return platform_error(exc)
    if sub in ("", "/") and method == "POST":
        return HttpResponse.json(jsonrpc_error(exc, request_id), status)
    exc.http_status = rest_status
    try:
        found_route = rest.route(HttpRequest(method=method, path=sub, base_url="", headers=headers))
    except ProtocolError:
        found_route = None
    if found_route is not None and found_route.v0_3:
        return HttpResponse.json(v0_3_rest.rest_error_out(exc), rest_status)
    return error_response(exc)


def body_refused(
    mounts: Mounts,
    full_path: str,
    method: str,
    headers: dict[str, str],
    admin: bool,
    message: str,
    status: int,
) -> HttpResponse:
    """HTTP `status` for a request body we do not take, in the shape of the protocol served at
    `full_path`."""
    exc = InvalidRequest(message, http_status=status)
    return refused_in_shape(mounts, full_path, method, headers, admin, exc, status)


def guard_refused(
    mounts: Mounts,
    environ: dict[str, Any],
    admin: bool,
    refusal: Refusal,
    request_id: Any = None,
) -> HttpResponse:
    """The guard's refusal (`mockagent.server.guard`) in the protocol's shape: a refused
    Content-Type is ContentTypeNotSupported, a refused Host, Origin or token InvalidRequest;
    a 401 says `WWW-Authenticate: Bearer`; a JSON-RPC error carries `request_id`."""
    kind = ContentTypeNotSupported if refusal.reason == "content-type" else InvalidRequest
    path, method = path_of(environ), environ["REQUEST_METHOD"]
    exc = kind(refusal.message, http_status=refusal.status)
    headers = headers_of(environ)
    answer = refused_in_shape(mounts, path, method, headers, admin, exc, refusal.status, request_id)
    if refusal.status == 401:
        answer.headers["WWW-Authenticate"] = 'Bearer realm="mockagent"'
    return answer


def request_id_of(body: bytes | HttpResponse) -> Any:
    """The `id` of a JSON-RPC request body (a string or a number), else None: a refusal of a
    body whose type was wrong still answers the request it names."""
    try:
        parsed = json.loads(body) if isinstance(body, bytes) else None
    except ValueError:
        return None
    found = parsed.get("id") if isinstance(parsed, dict) else None
    return found if isinstance(found, (str, int)) and not isinstance(found, bool) else None


def admin_http_error(exc: HTTPException) -> Response:
    """werkzeug's refusal of an admin request (a method it does not know: 405; a malformed Host:
    400) in the admin API's error shape, with its own status."""
    code = exc.code or 400
    what = f"{request.method} {request.path}"
    if isinstance(exc, MethodNotAllowed):
        message = f"{what}: method not allowed; the admin API takes {', '.join(HTTP_METHODS)}"
    elif isinstance(exc, BadHost):
        message = f"{what}: Host {request.environ.get('HTTP_HOST', '')!r} is not a valid host"
    else:
        message = f"{what}: {exc.name}: {exc.description}"
    answer = HttpResponse.json({"error": {"code": code, "message": message}}, code)
    if isinstance(exc, MethodNotAllowed):
        answer.headers["Allow"] = ", ".join(HTTP_METHODS)
    return flask_response(answer)
