"""The official a2a-sdk client driving an agent through scenarios, with the wire captured.

`tests.helpers.wire.Wire` under the SDK client keeps every call as a
`mockagent.verify.compare.Exchange`.
A scenario is a short conversation; each runs with its own `Wire`, so its ids are renamed on
their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    AgentCard,
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

from mockagent.verify.compare import Exchange
from tests.helpers.wire import Wire

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


Scenario = Callable[[Clients], Awaitable[None]]


async def run_scenario(
    target: str | AgentCard, binding: str, name: str | Scenario
) -> tuple[list[Exchange], str]:
    """Drive scenario `name` (or a scenario of a test's own) against the agent at `target` (its
    URL, or a card that says how to reach it) over `binding`: (the exchanges, the error or "")."""
    scenario = SCENARIOS[name] if isinstance(name, str) else name
    wire = Wire()
    http = httpx.AsyncClient(transport=wire, timeout=SCENARIO_TIMEOUT, trust_env=False)
    error = ""
    async with http:
        config = {"httpx_client": http, "supported_protocol_bindings": [binding]}
        blocking_client = await create_client(target, ClientConfig(streaming=False, **config))
        streaming_client = await create_client(target, ClientConfig(streaming=True, **config))
        async with blocking_client, streaming_client:
            try:
                await asyncio.wait_for(
                    scenario(Clients(blocking_client, streaming_client, wire)),
                    SCENARIO_TIMEOUT,
                )
            except Exception as exc:  # a replay that goes wrong shows in the exchanges
                error = f"{type(exc).__name__}: {exc}"
    return wire.exchanges(), error


def run_all(
    target: str | AgentCard, bindings: tuple[str, ...]
) -> dict[tuple[str, str], tuple[Any, str]]:
    """Every scenario over every binding, in one fixed order (a replay must see the same)."""

    async def main() -> dict[tuple[str, str], tuple[Any, str]]:
        return {
            (binding, name): await run_scenario(target, binding, name)
            for binding in bindings
            for name in SCENARIOS
        }

    return asyncio.run(main())


def sdk_taking_turns(step: threading.Semaphore | None) -> Callable[[Clients], Awaitable[None]]:
    """The official client streams a new message, subscribes to its task once the Task came,
    then reads one event from each stream in turn, as the quirky agent (`stepwise`) takes each
    step when the test releases `step` (None on replay: nothing to release)."""

    async def scenario(c: Clients) -> None:
        streamed = aiter(c.streaming.send_message(SendMessageRequest(message=user("build it"))))
        task = (await anext(streamed)).task
        subscribed = aiter(c.streaming.subscribe(SubscribeToTaskRequest(id=task.id)))
        await anext(subscribed)  # the Task: the subscription is open before any step
        for _ in range(4):  # WORKING, two chunks of the log, COMPLETED
            if step is not None:
                step.release()
            await anext(streamed)
            await anext(subscribed)
        for rest in (streamed, subscribed):
            async for _ in rest:
                pass

    return scenario


def sdk_subscription_first(
    step: threading.Semaphore | None, held: threading.Semaphore | None
) -> Callable[[Clients], Awaitable[None]]:
    """As `sdk_taking_turns`, but the subscription's client gets each step before the message
    stream is sent it (the quirky agent with `stepwise` and `held`; None on replay): the
    recording proxy hears every step on the subscription first."""

    async def scenario(c: Clients) -> None:
        streamed = aiter(c.streaming.send_message(SendMessageRequest(message=user("build it"))))
        task = (await anext(streamed)).task
        subscribed = aiter(c.streaming.subscribe(SubscribeToTaskRequest(id=task.id)))
        await anext(subscribed)
        for _ in range(4):
            if step is not None:
                step.release()
            await anext(subscribed)
            if held is not None:
                held.release()
            await anext(streamed)
        for rest in (streamed, subscribed):
            async for _ in rest:
                pass

    return scenario
