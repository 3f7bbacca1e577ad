"""The Agentex error table: one row per neutral error kind, for JSON-RPC and for the platform's
REST.

Inside `/rpc` every failure is HTTP 200 with `error: {code, message, data: null}`: -32602 when the
request or its params fail validation, -32603 for everything else (reference §1.6). The REST routes
answer `{"message", "code", "data": null}` with the HTTP status (422 `{"status_code": 10422, …}`
for request validation, as FastAPI does there).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mockagent.cassette.models import Fault
from mockagent.dialects.faults import delay
from mockagent.dialects.http import HttpResponse
from mockagent.errors import ProtocolError

INVALID_PARAMS = -32602
INTERNAL = -32603


class Row(NamedTuple):
    code: int  # JSON-RPC error code inside /rpc
    http: int  # platform HTTP status on the REST routes


TABLE: dict[str, Row] = {
    "Parse": Row(INVALID_PARAMS, 422),
    "InvalidRequest": Row(INVALID_PARAMS, 422),
    "InvalidParams": Row(INVALID_PARAMS, 422),
    "ContentTypeNotSupported": Row(INVALID_PARAMS, 422),
    "MethodNotFound": Row(INVALID_PARAMS, 404),  # RPC: not one of the five methods; REST: no route
    "TaskNotFound": Row(INTERNAL, 404),
    "TaskNotCancelable": Row(INTERNAL, 400),
    "UnsupportedOperation": Row(INTERNAL, 400),  # e.g. a terminal task that cannot take a new turn
    "NoMatch": Row(INTERNAL, 400),  # nothing crashed: a 5xx would make the client retry
    "Internal": Row(INTERNAL, 500),
    "Unavailable": Row(INTERNAL, 503),  # the shared task store is down: try again later
    "Upstream": Row(INTERNAL, 502),  # a recording proxy's upstream did not answer
}
DEFAULT = Row(INTERNAL, 500)
RETRIED = frozenset({408, 409, 429})
"""Statuses the client retries besides 5xx; a scripted fault must not be retried behind the
test's back."""


def rpc_error(exc: ProtocolError, request_id: Any) -> dict[str, Any]:
    """The JSON-RPC error envelope (sent with HTTP 200)."""
    row = TABLE.get(exc.kind, DEFAULT)
    error = {"code": row.code, "message": exc.message, "data": None}
    return {"jsonrpc": "2.0", "id": request_id, "result": None, "error": error}


def platform_error(exc: ProtocolError) -> HttpResponse:
    """A REST error as the Agentex platform writes it, with its HTTP status."""
    status = exc.http_status or TABLE.get(exc.kind, DEFAULT).http
    if status == 422:
        return HttpResponse.json({"status_code": 10422, "message": exc.message, "data": None}, 422)
    return HttpResponse.json({"message": exc.message, "code": status, "data": None}, status)


def fault_response(fault: Fault) -> HttpResponse:
    """A scripted HTTP status: the scripted body, or a platform error saying so.

    `x-should-retry: false` keeps the client from retrying a status it would otherwise retry
    (408, 409, 429, 5xx), which would send the test's call twice more.
    """
    delay(fault)
    status = fault.status or 500
    headers = {"x-should-retry": "false"} if status in RETRIED or status >= 500 else {}
    if fault.body is not None:
        return HttpResponse(
            status, fault.body.encode(), {"Content-Type": "application/json", **headers}
        )
    body = {"message": f"mockagent: scripted fault, HTTP {status}", "code": status, "data": None}
    return HttpResponse.json(body, status, headers)
