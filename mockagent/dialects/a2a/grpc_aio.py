"""The A2A gRPC binding's handlers for grpc.aio's server (the one gRPC server): the method
table, the service and the errors of `grpc_binding`, answered on an event loop.

The engine in memory answers without waiting (it holds its lock only briefly), so a call runs on
the loop where it arrives: no thread handoff, which is most of what a call costs on grpcio's
thread-pool server. On a shared store every call waits for the store, so it runs on one of
`threads` (`waits`), and the loop goes on with other calls meanwhile. A stream's next event runs
on the loop when it is there already (the first answer, the rest of a batch) and on one of
`threads` when it may have to wait (a paced gap, a subscription waiting for news, a shared
store). A scripted delay is an asyncio sleep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from itertools import chain
from typing import Any, NamedTuple, NoReturn

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from mockagent import errors
from mockagent.cassette.header import ErrorTable
from mockagent.dialects.a2a.grpc_binding import (
    STATUS_DETAILS,
    STREAMING,
    Resolve,
    fault_status,
    headers_of,
    outcome,
    service_handler,
    status_details,
)
from mockagent.dialects.a2a.grpc_stream import END, Reader
from mockagent.dialects.a2a.grpc_wire import METHODS, message_of
from mockagent.dialects.a2a.service import Answer
from mockagent.dialects.a2a.wire import render_event, render_result
from mockagent.dialects.faults import adelay
from mockagent.engine.call import TaskEvent
from mockagent.engine.stream import KEEPALIVE

Context = grpc.aio.ServicerContext[Any, Any]


def aio_handler(resolve: Resolve, threads: Executor, waits: bool = False) -> grpc.GenericRpcHandler:
    """The whole service for grpc.aio's server; `threads` read streams whose next event may
    have to wait, and answer every call when `waits` says each may (a shared store)."""
    calls = _Calls(resolve, threads, waits)
    return service_handler(
        lambda name, response: _unary(name, response, calls),
        lambda name: _streaming(name, calls),
    )


class _Calls(NamedTuple):
    """Where calls are answered: `resolve` finds the agent, on one of `threads` if `waits`."""

    resolve: Resolve
    threads: Executor
    waits: bool


async def _answer(
    name: str, calls: _Calls, request: Message, context: Context
) -> tuple[Answer, ErrorTable]:
    """The service's answer to one call and the agent's error table, or the call ended with the
    error's status."""
    headers = headers_of(context)
    if calls.waits:
        loop = asyncio.get_running_loop()
        found, table = await loop.run_in_executor(
            calls.threads, outcome, name, calls.resolve, request, headers
        )
    else:
        found, table = outcome(name, calls.resolve, request, headers)
    if isinstance(found, Answer):
        return found, table
    if isinstance(found, errors.HttpFault):
        await adelay(found.fault)
        await context.abort(*fault_status(found.fault))
    await abort(context, found, table)


def _unary(
    name: str, response: type[Message], calls: _Calls
) -> Callable[[Message, Context], Awaitable[Message]]:
    async def behaviour(request: Message, context: Context) -> Message:
        answer, _ = await _answer(name, calls, request, context)
        await adelay(answer.fault)
        return await _message(context, answer.result, response)

    return behaviour


def _streaming(name: str, calls: _Calls) -> Callable[[Message, Context], Awaitable[None]]:
    response = METHODS[name].response

    async def behaviour(request: Message, context: Context) -> None:
        answer, table = await _answer(name, calls, request, context)
        stream = answer.stream
        assert stream is not None  # a streaming operation's answer
        first = [] if stream.opening == "update" else [render_result(STREAMING, stream.first)]
        items = stream.faulted(chain(first, stream.events()))
        # A fault's delay and counting, or a shared store, may wait at any item: all of them in
        # a thread then.
        waits = calls.waits or stream.fault is not None
        reader = Reader(items, stream, len(first), calls.threads, waits=waits)
        try:
            while (item := await reader.next()) is not END:
                if isinstance(item, errors.ProtocolError):
                    await abort(context, item, table)  # errorAfter: the mapped status ends the call
                elif item is not KEEPALIVE:  # a client that left has cancelled this coroutine
                    event = render_event(item) if isinstance(item, TaskEvent) else item
                    await context.write(await _message(context, event, response))
        except errors.DropConnection as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"mockagent: {exc}")
        finally:
            reader.close()

    return behaviour


async def _message(context: Context, result: Any, response: type[Message]) -> Message:
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


async def abort(
    context: Context, exc: errors.ProtocolError, table: ErrorTable = "1.0.1"
) -> NoReturn:
    """End the call with the error's status (by the agent's error `table`), its message and its
    details."""
    code, message, details = status_details(exc, table)
    await context.abort(code, message, ((STATUS_DETAILS, details),))
