"""The A2A gRPC binding (`lf.a2a.v1.A2AService`): a method table over the same A2AService the
JSON bindings use; streams paced by the same Stream objects; errors as gRPC status codes with a
`google.rpc.Status` (ErrorInfo, near-miss report) in `grpc-status-details-bin`.

Service parameters come as lowercase metadata (`a2a-version`, `a2a-extensions`), which the
service reads as it reads HTTP headers. Needs `mockagent-server[grpc]`.

The handlers that answer with this on grpc.aio's server are in `grpc_aio`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

import grpc
from google.protobuf.message import Message

from mockagent import errors
from mockagent.cassette.header import ErrorTable
from mockagent.cassette.models import Fault
from mockagent.dialects.a2a.error_table import CODE_OF_HTTP, rest_error
from mockagent.dialects.a2a.grpc_wire import (
    METHODS,
    SERVICE,
    params_of,
    reader,
    serialize,
    status_of,
)
from mockagent.dialects.a2a.service import A2AService, Answer
from mockagent.dialects.http import HttpRequest

log = logging.getLogger("mockagent")
BINDING = "GRPC"
STREAMING = "SendStreamingMessage"  # a stream's first answer is a StreamResponse, either rpc
STATUS_DETAILS = "grpc-status-details-bin"
MESSAGE_LIMIT = 3000
"""Characters of an error message sent: the message and the status travel in trailers, which a
client refuses beyond 8 KiB (grpcio's default); the journal keeps the whole near-miss report."""
DETAILS_LIMIT = 3000
"""Bytes of `grpc-status-details-bin` (before base64) beyond which only the ErrorInfo stays."""


class Target(NamedTuple):
    """The agent a call is for: its service, its HTTP URL (the card's other interfaces), and
    the tenant the engine sees (a folder's tenant names the agent, like a mount path)."""

    service: A2AService
    base_url: str
    tenant: str | None


Resolve = Callable[[str], Target]
"""The Target of a request's `tenant` field; raises a ProtocolError when no agent has it."""


def service_handler(
    unary: Callable[[str, type[Message]], Any], streaming: Callable[[str], Any]
) -> grpc.GenericRpcHandler:
    """The whole service as one grpcio handler, from the method table: `unary(name, response)`
    and `streaming(name)` give each method's behaviour."""
    handlers = {}
    for name, method in METHODS.items():
        if method.streaming:
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                streaming(name),
                request_deserializer=reader(method.request),
                response_serializer=serialize,
            )
        else:
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                unary(name, method.response),
                request_deserializer=reader(method.request),
                response_serializer=serialize,
            )
    return grpc.method_handlers_generic_handler(SERVICE, handlers)


Headers = dict[str, str]
Failure = errors.ProtocolError | errors.HttpFault


def headers_of(context: grpc.aio.ServicerContext[Any, Any]) -> Headers:
    """The call's metadata as the service reads HTTP headers (binary `-bin` entries left out)."""
    return {
        key.lower(): value
        for key, value in context.invocation_metadata() or ()
        if isinstance(value, str) and not key.endswith("-bin")
    }


def outcome(
    name: str, resolve: Resolve, request: Message, headers: Headers
) -> tuple[Answer | Failure, ErrorTable]:
    """The service's answer to one call, or the error that ends it, and the error table of the
    agent that answers (the default table when no agent has the call's tenant). A bug of ours is
    INTERNAL in protocol terms (and logged), as on the HTTP bindings."""
    table: ErrorTable = "1.0.1"
    try:
        params = params_of(request)
        target = resolve(str(params.pop("tenant", "")))
        table = target.service.agent.errorTable
        http = HttpRequest(method="POST", path="/", base_url=target.base_url, headers=headers)
        return target.service.call(name, params, http, BINDING, tenant=target.tenant or None), table
    except (errors.HttpFault, errors.ProtocolError) as exc:
        return exc, table
    except Exception as exc:
        log.exception("mockagent failed on gRPC %s", name)
        return errors.InternalError(f"mockagent failed: {type(exc).__name__}"), table


def code_of(
    exc: errors.ProtocolError, table: ErrorTable = "1.0.1"
) -> tuple[grpc.StatusCode, dict[str, Any]]:
    """The status code of an error (the google.rpc.Code the REST binding names, by the error
    table of specification `table`) and the REST-shaped error JSON it comes from."""
    body, _ = rest_error(exc, table)
    error = body["error"]
    return grpc.StatusCode[error["status"]], error


def status_details(
    exc: errors.ProtocolError, table: ErrorTable = "1.0.1"
) -> tuple[grpc.StatusCode, str, bytes]:
    """(code, message, `grpc-status-details-bin`) of an error, within the trailer budget."""
    code, error = code_of(exc, table)
    message = error["message"]
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT] + "\n… (cut short; the journal has the whole report)"
    number = code.value[0]
    details = serialize(status_of(number, message, error["details"]))
    if len(details) > DETAILS_LIMIT:  # keep what a client maps to its typed error
        info = [d for d in error["details"] if str(d.get("@type", "")).endswith(".ErrorInfo")]
        details = serialize(status_of(number, message, info))
    return code, message, details


def fault_status(fault: Fault) -> tuple[grpc.StatusCode, str]:
    """A scripted HTTP status as the gRPC code it stands for (UNKNOWN when none does)."""
    status = fault.status or 500
    name = "INTERNAL" if status == 500 else CODE_OF_HTTP.get(status, "UNKNOWN")
    return grpc.StatusCode[name], f"mockagent: scripted fault, HTTP {status}"
