"""The official a2a-sdk client driving an agent through scenarios, with the wire captured.

`Wire` is an httpx transport under the SDK client that keeps every call as a
`mockagent.compare.Exchange`: what came back, byte for byte, including each stream event's kind
and order, which the SDK's typed objects would hide. A scenario is a short conversation; each
runs with its own `Wire`, so its ids are renamed on their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)

from mockagent.compare import Exchange
from mockagent.observe import exchange_from_http, operation_of, parse_json

SCENARIO_TIMEOUT = 8.0  # a replay that never ends a stream must not hang the suite
POLL_GAP = 0.03  # seconds between GetTask polls, live and on replay alike
MAX_POLLS = 40
ENDED = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
_ids = itertools.count(1)


@dataclass
class _Call:
    method: str
    path: str
    body: bytes
    exchange: Exchange | None = None


class Wire(httpx.AsyncBaseTransport):
    """Forwards to the network and keeps each call (in the order the requests left)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.calls: list[_Call] = []

    def exchanges(self) -> list[Exchange]:
        """The A2A calls (not the card fetches); a call still unanswered counts as cut off."""
        out = []
        for call in self.calls:
            exchange = call.exchange or Exchange(
                operation_of(call.method, call.path, parse_json(call.body)), "?", 0, dropped=True
            )
            if exchange.operation != "AgentCard":
                out.append(exchange)
        return out

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        call = _Call(request.method, request.url.raw_path.decode(), await request.aread())
        self.calls.append(call)
        response = await self.inner.handle_async_request(request)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Tee(response, call),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Tee(httpx.AsyncByteStream):
    """The response body as it goes to the client; the exchange is complete when it closes."""

    def __init__(self, response: httpx.Response, call: _Call) -> None:
        self.response, self.call = response, call
        self.chunks: list[bytes] = []
        self.dropped = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.stream:  # type: ignore[union-attr]
                self.chunks.append(chunk)
                yield chunk
        except httpx.TransportError:
            self.dropped = True
            raise

    async def aclose(self) -> None:
        await self.response.aclose()
        call = self.call
        call.exchange = exchange_from_http(
            call.method,
            call.path,
            call.body,
            self.response.status_code,
            self.response.headers.get("content-type", ""),
            b"".join(self.chunks),
            self.dropped,
        )


@dataclass
class Clients:
    """A blocking and a streaming SDK client over one binding, both on one `Wire`."""

    blocking: Client
    streaming: Client
    wire: Wire = field(repr=False)


def user(text: str, task: Task | None = None) -> Message:
    message = Message(message_id=f"m-{next(_ids)}", role=Role.ROLE_USER, parts=[Part(text=text)])
    if task is not None:
        message.task_id, message.context_id = task.id, task.context_id
    return message


async def send(client: Client, message: Message, **configuration: Any) -> Any:
    request = SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(**configuration)
    )
    return [r async for r in client.send_message(request)][-1]


async def stream(client: Client, message: Message) -> list[Any]:
    return [e async for e in client.send_message(SendMessageRequest(message=message))]


async def poll(client: Client, task: Task) -> None:
    """GetTask until the task ends (or MAX_POLLS), as a client waiting for it would."""
    for _ in range(MAX_POLLS):
        if task.status.state in ENDED:
            return
        await asyncio.sleep(POLL_GAP)
        task = await client.get_task(GetTaskRequest(id=task.id))


async def blocking(c: Clients) -> None:
    await send(c.blocking, user("What time is it?"))
    await send(c.blocking, user("build it"))


async def polled(c: Clients) -> None:
    task = (await send(c.blocking, user("build it"), return_immediately=True)).task
    await poll(c.blocking, task)


async def streamed(c: Clients) -> None:
    await stream(c.streaming, user("build it"))


async def follow_up_blocking(c: Clients) -> None:
    asked = (await send(c.blocking, user("ask me"))).task
    await send(c.blocking, user("main", asked))


async def follow_up_polled(c: Clients) -> None:
    asked = (await send(c.blocking, user("ask me"))).task
    task = (await send(c.blocking, user("main", asked), return_immediately=True)).task
    await poll(c.blocking, task)


async def follow_up_streamed(c: Clients) -> None:
    events = await stream(c.streaming, user("ask me"))
    await stream(c.streaming, user("main", events[0].task))


async def subscribe(c: Clients) -> None:
    asked = (await send(c.blocking, user("ask me"))).task
    events = aiter(c.streaming.subscribe(SubscribeToTaskRequest(id=asked.id)))
    await anext(events)  # the snapshot: the subscription is open before the follow-up goes
    await send(c.blocking, user("main", asked))
    async for _ in events:
        pass


async def cancel(c: Clients) -> None:
    asked = (await send(c.blocking, user("ask me"))).task
    await c.blocking.cancel_task(CancelTaskRequest(id=asked.id))
    with contextlib.suppress(Exception):  # TaskNotCancelable: the wire keeps the error
        await c.blocking.cancel_task(CancelTaskRequest(id=asked.id))


SCENARIOS: dict[str, Callable[[Clients], Awaitable[None]]] = {
    "blocking": blocking,
    "polled": polled,
    "streamed": streamed,
    "follow-up-blocking": follow_up_blocking,
    "follow-up-polled": follow_up_polled,
    "follow-up-streamed": follow_up_streamed,
    "subscribe": subscribe,
    "cancel": cancel,
}


async def run_scenario(
    url: str,
    binding: str,
    name: str,
    scenarios: dict[str, Callable[[Clients], Awaitable[None]]] = SCENARIOS,
) -> tuple[list[Exchange], str]:
    """Drive scenario `name` (of `scenarios`) against `url` over `binding`: (the exchanges, the
    error or "")."""
    wire = Wire()
    http = httpx.AsyncClient(transport=wire, timeout=SCENARIO_TIMEOUT, trust_env=False)
    error = ""
    async with http:
        config = {"httpx_client": http, "supported_protocol_bindings": [binding]}
        blocking_client = await create_client(url, ClientConfig(streaming=False, **config))
        streaming_client = await create_client(url, ClientConfig(streaming=True, **config))
        async with blocking_client, streaming_client:
            try:
                await asyncio.wait_for(
                    scenarios[name](Clients(blocking_client, streaming_client, wire)),
                    SCENARIO_TIMEOUT,
                )
            except Exception as exc:  # a replay that goes wrong shows in the exchanges
                error = f"{type(exc).__name__}: {exc}"
    return wire.exchanges(), error


def run_all(url: str, bindings: tuple[str, ...]) -> dict[tuple[str, str], tuple[Any, str]]:
    """Every scenario over every binding, in one fixed order (a replay must see the same)."""

    async def main() -> dict[tuple[str, str], tuple[Any, str]]:
        return {
            (binding, name): await run_scenario(url, binding, name)
            for binding in bindings
            for name in SCENARIOS
        }

    return asyncio.run(main())
