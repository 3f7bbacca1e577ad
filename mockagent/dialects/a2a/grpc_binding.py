"""The A2A gRPC binding (`lf.a2a.v1.A2AService`): a method table over the same A2AService the
JSON bindings use; streams paced by the same Stream objects; errors as gRPC status codes with a
`google.rpc.Status` (ErrorInfo, near-miss report) in `grpc-status-details-bin`.

Service parameters come as lowercase metadata (`a2a-version`, `a2a-extensions`), which the
service reads as it reads HTTP headers. Needs `mockagent[grpc]`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from functools import partial
from itertools import chain
from typing import Any, NamedTuple, NoReturn

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from mockagent import errors
from mockagent.cassette.models import Fault
from mockagent.dialects.a2a.error_table import CODE_OF_HTTP, rest_error
from mockagent.dialects.a2a.grpc_stream import END, Offload, Reader
from mockagent.dialects.a2a.grpc_wire import (
    METHODS,
    SERVICE,
    message_of,
    params_of,
    serialize,
    status_of,
)
from mockagent.dialects.a2a.service import A2AService, Answer
from mockagent.dialects.a2a.wire import render_event, render_result
from mockagent.dialects.faults import adelay, faulty
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


def generic_handler(resolve: Resolve, threads: Executor, shared: bool) -> grpc.GenericRpcHandler:
    """The whole service as one handler of grpc.aio's server, from the method table.

    The engine answers most calls without waiting: in memory it takes a lock only briefly, so it
    runs on the event loop. What can wait runs on one of `threads`: every engine call of a
    `shared` store (network round trips, a lock other processes hold), and a stream's next event
    when none is there yet (a paced gap, a subscription waiting for news)."""
    offload = Offload(threads)
    handlers = {}
    for name, method in METHODS.items():
        if method.streaming:
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                _streaming(name, resolve, offload, shared),
                request_deserializer=method.request.FromString,
                response_serializer=serialize,
            )
        else:
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                _unary(name, method.response, resolve, offload, shared),
                request_deserializer=method.request.FromString,
                response_serializer=serialize,
            )
    return grpc.method_handlers_generic_handler(SERVICE, handlers)


def _headers_of(context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, str]:
    """The call's metadata as the service reads HTTP headers (binary `-bin` entries left out)."""
    return {
        key.lower(): value
        for key, value in context.invocation_metadata() or ()
        if isinstance(value, str) and not key.endswith("-bin")
    }


Failure = errors.ProtocolError | errors.HttpFault


def _outcome(
    name: str, resolve: Resolve, request: Message, headers: dict[str, str]
) -> Answer | Failure:
    """The service's answer to one call, or the error that ends it. A bug of ours is INTERNAL
    in protocol terms (and logged), as on the HTTP bindings."""
    try:
        params = params_of(request)
        target = resolve(str(params.pop("tenant", "")))
        http = HttpRequest(method="POST", path="/", base_url=target.base_url, headers=headers)
        return target.service.call(name, params, http, BINDING, tenant=target.tenant or None)
    except (errors.HttpFault, errors.ProtocolError) as exc:
        return exc
    except Exception as exc:
        log.exception("mockagent failed on gRPC %s", name)
        return errors.InternalError(f"mockagent failed: {type(exc).__name__}")


async def _answer(
    name: str,
    resolve: Resolve,
    request: Message,
    context: grpc.aio.ServicerContext[Any, Any],
    offload: Offload | None,
) -> Answer:
    """The service's answer (computed in a thread when `offload` is given), or the call ended
    with the error's status."""
    compute = partial(_outcome, name, resolve, request, _headers_of(context))
    outcome = await offload(compute) if offload is not None else compute()
    if isinstance(outcome, Answer):
        return outcome
    if isinstance(outcome, errors.HttpFault):
        await _abort_fault(context, outcome.fault)
    await abort(context, outcome)


def _unary(
    name: str, response: type[Message], resolve: Resolve, offload: Offload, shared: bool
) -> Callable[[Message, grpc.aio.ServicerContext[Any, Any]], Awaitable[Message]]:
    async def behaviour(request: Message, context: grpc.aio.ServicerContext[Any, Any]) -> Message:
        answer = await _answer(name, resolve, request, context, offload if shared else None)
        await adelay(answer.fault)
        return await _message(context, answer.result, response)

    return behaviour


def _streaming(
    name: str, resolve: Resolve, offload: Offload, shared: bool
) -> Callable[[Message, grpc.aio.ServicerContext[Any, Any]], Awaitable[None]]:
    response = METHODS[name].response

    async def behaviour(request: Message, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        answer = await _answer(name, resolve, request, context, offload if shared else None)
        stream = answer.stream
        assert stream is not None  # a streaming operation's answer
        first = [] if stream.opening == "update" else [render_result(STREAMING, stream.first)]
        items = faulty(chain(first, stream.events()), stream.fault)
        # A fault's delay and counting, or a shared store's reads, may wait at any item.
        reader = Reader(items, stream, len(first), offload, stream.fault is not None or shared)
        try:
            while (item := await reader.next()) is not END:
                if isinstance(item, errors.ProtocolError):
                    await abort(context, item)  # errorAfter: the mapped status ends the call
                elif item is not KEEPALIVE:  # a client that left has cancelled this coroutine
                    event = render_event(item) if isinstance(item, TaskEvent) else item
                    await context.write(await _message(context, event, response))
        except errors.DropConnection as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"mockagent: {exc}")
        finally:
            reader.close()

    return behaviour


async def _message(
    context: grpc.aio.ServicerContext[Any, Any], result: Any, response: type[Message]
) -> Message:
    """The answer as `response`; a cassette's answer that protobuf cannot hold (a `raw` part that
    is not base64, say) ends the call as InvalidAgentResponse, saying what, not UNKNOWN."""
    try:
        return message_of(result, response)
    except json_format.ParseError as exc:
        await abort(
            context,
            errors.InvalidAgentResponseError(
                f"The cassette's answer cannot be sent over gRPC as {response.__name__}: {exc}"
            ),
        )


def code_of(exc: errors.ProtocolError) -> tuple[grpc.StatusCode, dict[str, Any]]:
    """The status code of an error (the google.rpc.Code the REST binding names) and the
    REST-shaped error JSON it comes from."""
    body, _ = rest_error(exc)
    error = body["error"]
    return grpc.StatusCode[error["status"]], error


def status_details(exc: errors.ProtocolError) -> tuple[grpc.StatusCode, str, bytes]:
    """(code, message, `grpc-status-details-bin`) of an error, within the trailer budget."""
    code, error = code_of(exc)
    message = error["message"]
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT] + "\n… (cut short; the journal has the whole report)"
    number = code.value[0]
    details = serialize(status_of(number, message, error["details"]))
    if len(details) > DETAILS_LIMIT:  # keep what a client maps to its typed error
        info = [d for d in error["details"] if str(d.get("@type", "")).endswith(".ErrorInfo")]
        details = serialize(status_of(number, message, info))
    return code, message, details


async def abort(context: grpc.aio.ServicerContext[Any, Any], exc: errors.ProtocolError) -> NoReturn:
    """End the call with the error's status, its message and its details."""
    code, message, details = status_details(exc)
    await context.abort(code, message, ((STATUS_DETAILS, details),))


async def _abort_fault(context: grpc.aio.ServicerContext[Any, Any], fault: Fault) -> NoReturn:
    """A scripted HTTP status as the gRPC code it stands for (UNKNOWN when none does)."""
    await adelay(fault)
    status = fault.status or 500
    name = "INTERNAL" if status == 500 else CODE_OF_HTTP.get(status, "UNKNOWN")
    await context.abort(grpc.StatusCode[name], f"mockagent: scripted fault, HTTP {status}")
