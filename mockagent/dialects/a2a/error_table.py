"""The A2A error table: one row per neutral error kind, rendered for JSON-RPC, REST and gRPC.

The table is specification 1.0.1's (and a2a-sdk's); an agent whose cassette says
`errorTable: "1.0.0"` answers with the rows specification 1.0.0 had, which differ in a few
gRPC codes and HTTP statuses (JSON-RPC codes and ErrorInfo reasons are the same in both).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mockagent.cassette.header import ErrorTable
from mockagent.errors import ProtocolError

DOMAIN = "a2a-protocol.org"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


class Row(NamedTuple):
    code: int  # JSON-RPC error code
    reason: str | None  # google.rpc.ErrorInfo reason; None = no ErrorInfo detail
    http: int  # REST status (a2a-sdk 1.3 and spec 1.0.1)
    status: str  # google.rpc.Code name: the REST body's `status` and the gRPC status code


TABLE: dict[str, Row] = {
    "Parse": Row(-32700, None, 400, "INVALID_ARGUMENT"),
    "InvalidRequest": Row(-32600, "INVALID_REQUEST", 400, "INVALID_ARGUMENT"),
    "MethodNotFound": Row(-32601, "METHOD_NOT_FOUND", 404, "NOT_FOUND"),
    "InvalidParams": Row(-32602, "INVALID_PARAMS", 400, "INVALID_ARGUMENT"),
    "Internal": Row(-32603, "INTERNAL_ERROR", 500, "INTERNAL"),
    "TaskNotFound": Row(-32001, "TASK_NOT_FOUND", 404, "NOT_FOUND"),
    "TaskNotCancelable": Row(-32002, "TASK_NOT_CANCELABLE", 400, "FAILED_PRECONDITION"),
    "PushNotificationNotSupported": Row(
        -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION"
    ),
    "UnsupportedOperation": Row(-32004, "UNSUPPORTED_OPERATION", 400, "FAILED_PRECONDITION"),
    "ContentTypeNotSupported": Row(-32005, "CONTENT_TYPE_NOT_SUPPORTED", 400, "INVALID_ARGUMENT"),
    "InvalidAgentResponse": Row(-32006, "INVALID_AGENT_RESPONSE", 500, "INTERNAL"),
    "ExtendedAgentCardNotConfigured": Row(
        -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", 400, "FAILED_PRECONDITION"
    ),
    "ExtensionSupportRequired": Row(
        -32008, "EXTENSION_SUPPORT_REQUIRED", 400, "FAILED_PRECONDITION"
    ),
    "VersionNotSupported": Row(-32009, "VERSION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION"),
    # The shared task store (Redis) is down: nothing wrong with the call, try it again later.
    "Unavailable": Row(-32603, None, 503, "UNAVAILABLE"),
    # A recording proxy's upstream did not answer: a gateway's 502, which gRPC maps to UNAVAILABLE.
    "Upstream": Row(-32603, "INTERNAL_ERROR", 502, "UNAVAILABLE"),
    # An unmatched call: the cassette cannot answer this operation with these params, so it is
    # UnsupportedOperation in both bindings (a2a-sdk raises its typed error, with the near-miss
    # report as the message). Never a 5xx: nothing crashed, and clients must not retry it.
    "NoMatch": Row(-32004, "UNSUPPORTED_OPERATION", 400, "FAILED_PRECONDITION"),
}

# Specification 1.0.0's values where its rows differ, as the TCK's 1.0-dev branch checks them
# and a2a-java answers (its A2AErrorCodes); 1.0.1 made them FAILED_PRECONDITION, 400 and 500.
_SPEC_1_0_0: dict[str, dict[str, Any]] = {
    "TaskNotCancelable": {"http": 409},
    "PushNotificationNotSupported": {"status": "UNIMPLEMENTED"},
    "UnsupportedOperation": {"status": "UNIMPLEMENTED"},
    "ContentTypeNotSupported": {"http": 415},
    "InvalidAgentResponse": {"http": 502},
    "VersionNotSupported": {"status": "UNIMPLEMENTED"},
    "NoMatch": {"status": "UNIMPLEMENTED"},  # an unmatched call is UnsupportedOperation
}

TABLES: dict[ErrorTable, dict[str, Row]] = {
    "1.0.1": TABLE,
    "1.0.0": {kind: row._replace(**_SPEC_1_0_0.get(kind, {})) for kind, row in TABLE.items()},
}
"""The rows of each specification an agent may answer with (`agent.errorTable`)."""


# The google.rpc.Code of an HTTP status that has only one (AIP-193): a recorded agent's status
# (a v0.3 agent's 429) names its code; 400, 409 and 500 stand for several and keep the kind's.
CODE_OF_HTTP = {
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",  # a verb the path does not take (MethodNotFound's row says NOT_FOUND)
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _details(exc: ProtocolError, row: Row) -> list[dict[str, Any]]:
    """The ErrorInfo of the kind (unless the error's details replace it), then the details.

    A recorded v0.3 agent's own error `type` (`{type: …}`, no google.rpc detail) goes to a v1.0
    client, which has no such field, in the kind's ErrorInfo as its metadata `type`."""
    details = []
    agent_type = exc.agent_type
    if row.reason is not None and (exc.own_info or agent_type is not None):
        metadata = dict(exc.metadata)
        if agent_type is not None:
            metadata["type"] = agent_type
        if exc.kind == "NoMatch":
            metadata["mockagent"] = "NO_MATCHING_INTERACTION"
        info: dict[str, Any] = {"@type": ERROR_INFO, "reason": row.reason, "domain": DOMAIN}
        if metadata:
            info["metadata"] = metadata
        details.append(info)
    return details if agent_type is not None else details + exc.details


def jsonrpc_error(exc: ProtocolError, request_id: Any) -> dict[str, Any]:
    """A JSON-RPC error response (sent with HTTP 200): `code`, `message`, `data` details."""
    row = TABLE[exc.kind]
    error: dict[str, Any] = {"code": row.code, "message": exc.message}
    details = _details(exc, row)
    if details:
        error["data"] = details
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def rest_error(exc: ProtocolError, table: ErrorTable = "1.0.1") -> tuple[dict[str, Any], int]:
    """A `google.rpc.Status` body and its HTTP status, from the rows of specification `table`
    (a status the error carries, a recorded agent's, wins over the row's)."""
    row = TABLES[table][exc.kind]
    http = exc.http_status or row.http
    body = {
        "error": {
            "code": http,
            "status": row.status if http == row.http else CODE_OF_HTTP.get(http, row.status),
            "message": exc.message,
            "details": _details(exc, row),
        }
    }
    return body, http
