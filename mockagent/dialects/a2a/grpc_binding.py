"""The A2A gRPC binding (`lf.a2a.v1.A2AService`): a method table over the same A2AService the
JSON bindings use; streams paced by the same Stream objects; errors as gRPC status codes with a
`google.rpc.Status` (ErrorInfo, near-miss report) in `grpc-status-details-bin`.

Service parameters come as lowercase metadata (`a2a-version`, `a2a-extensions`), which the
service reads as it reads HTTP headers. Needs `mockagent-server[grpc]`.

Two servers take the same method table: grpcio's thread-pool server with the handlers here, and
grpc.aio's with those of `grpc_aio` (see mockagent.server.grpc_server for which serves when).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any, NamedTuple, NoReturn

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from mockagent import errors
from mockagent.cassette.header import ErrorTable
from mockagent.cassette.models import Fault
from mockagent.dialects.a2a.error_table import CODE_OF_HTTP, rest_error
from mockagent.dialects.a2a.grpc_wire import (
    METHODS,
    SERVICE,
    message_of,
    params_of,
    reader,
    serialize,
    status_of,
)
from mockagent.dialects.a2a.service import A2AService, Answer
from mockagent.dialects.a2a.wire import render_event, render_result
from mockagent.dialects.faults import delay
from mockagent.dialects.http import HttpRequest
from mockagent.engine.call import TaskEvent
from mockagent.engine.stream import KEEPALIVE

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
    and `streaming(name)` give each method's behaviour (the thread-pool server's or grpc.aio's)."""
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


def generic_handler(resolve: Resolve) -> grpc.GenericRpcHandler:
    """The whole service for grpcio's thread-pool server."""
    return service_handler(
        lambda name, response: _unary(name, response, resolve),
        lambda name: _streaming(name, resolve),
    )


Headers = dict[str, str]
Failure = errors.ProtocolError | errors.HttpFault


def headers_of(context: grpc.ServicerContext | grpc.aio.ServicerContext[Any, Any]) -> Headers:
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


def _answer(
    name: str, resolve: Resolve, request: Message, context: grpc.ServicerContext
) -> tuple[Answer, ErrorTable]:
    """The service's answer to one call and the agent's error table, or the call ended with the
    error's status."""
    found, table = outcome(name, resolve, request, headers_of(context))
    if isinstance(found, Answer):
        return found, table
    # Outside `outcome`'s `try`: context.abort raises, and nothing there may catch that.
    if isinstance(found, errors.HttpFault):
        _abort_fault(context, found.fault)
    abort(context, found, table)


def _unary(
    name: str, response: type[Message], resolve: Resolve
) -> Callable[[Message, grpc.ServicerContext], Message]:
    def behaviour(request: Message, context: grpc.ServicerContext) -> Message:
        answer, _ = _answer(name, resolve, request, context)
        delay(answer.fault)
        return _message(context, answer.result, response)

    return behaviour


def _streaming(
    name: str, resolve: Resolve
) -> Callable[[Message, grpc.ServicerContext], Iterator[Message]]:
    response = METHODS[name].response

    def behaviour(request: Message, context: grpc.ServicerContext) -> Iterator[Message]:
        answer, table = _answer(name, resolve, request, context)
        stream = answer.stream
        assert stream is not None  # a streaming operation's answer
        first = [] if stream.opening == "update" else [render_result(STREAMING, stream.first)]
        try:
            for item in stream.faulted(chain(first, stream.events())):
                if item is KEEPALIVE:  # nothing to send: end the stream if the client left
                    if not context.is_active():
                        return
                elif isinstance(item, errors.ProtocolError):
                    abort(context, item, table)  # errorAfter: the mapped status ends the call
                else:
                    event = render_event(item) if isinstance(item, TaskEvent) else item
                    yield _message(context, event, response)
        except errors.DropConnection as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, f"mockagent: {exc}")

    return behaviour


def _message(context: grpc.ServicerContext, result: Any, response: type[Message]) -> Message:
    """The answer as `response`; a cassette's answer that protobuf cannot hold (a `raw` part that
    is not base64, say) ends the call as InvalidAgentResponse, saying what, not UNKNOWN (INTERNAL
    by either error table)."""
    try:
        return message_of(result, response)
    except json_format.ParseError as exc:
        abort(
            context,
            errors.InvalidAgentResponseError(
                f"The cassette's answer cannot be sent over gRPC as {response.__name__}: {exc}"
            ),
        )


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


def abort(
    context: grpc.ServicerContext, exc: errors.ProtocolError, table: ErrorTable = "1.0.1"
) -> NoReturn:
    """End the call with the error's status (by the agent's error `table`), its message and its
    details."""
    code, message, details = status_details(exc, table)
    context.set_trailing_metadata(((STATUS_DETAILS, details),))
    context.abort(code, message)


def _abort_fault(context: grpc.ServicerContext, fault: Fault) -> NoReturn:
    """A scripted HTTP status as the gRPC code it stands for."""
    delay(fault)
    context.abort(*fault_status(fault))


def fault_status(fault: Fault) -> tuple[grpc.StatusCode, str]:
    """A scripted HTTP status as the gRPC code it stands for (UNKNOWN when none does)."""
    status = fault.status or 500
    name = "INTERNAL" if status == 500 else CODE_OF_HTTP.get(status, "UNKNOWN")
    return grpc.StatusCode[name], f"mockagent: scripted fault, HTTP {status}"
