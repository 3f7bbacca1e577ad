"""A2A v0.3 through a2a-sdk 1.x's v0.3 compat transport: a card interface with protocolVersion
"0.3" makes the client speak v0.3 JSON-RPC (`message/send`, `a2a-version: 0.3`, `kind` objects,
`final`) to the same kit cassettes the v1.0 tests use."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.types import (
    AgentCard,
    AgentInterface,
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskNotFoundError,
)

from tests.helpers.interop import collect, get_task, kind, states, status_text, subscribe, texts

RUN = "Run the tests at 9f3c2e1"
_ids = itertools.count(1)


def v03_card(url: str) -> AgentCard:
    """The agent's card with one JSON-RPC interface that says protocolVersion 0.3."""

    async def main() -> AgentCard:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, url).get_agent_card()

    card = asyncio.run(main())
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3")
    )
    return card


def message(text: str, task_id: str = "") -> Message:
    return Message(
        message_id=f"v03-compat-{next(_ids)}",
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
    )


def run(kit_server: Any, scenario, *, streaming: bool = False) -> Any:
    card = v03_card(kit_server.agent_url("test-runner"))

    async def main() -> Any:
        async with await create_client(card, ClientConfig(streaming=streaming)) as client:
            assert type(client._transport).__name__ == "CompatJsonRpcTransport"  # noqa: SLF001
            return await scenario(client)

    return asyncio.run(main())


def test_blocking_send_and_get_task(kit_server: Any) -> None:
    async def scenario(client: Client):
        [response] = [
            r async for r in client.send_message(SendMessageRequest(message=message(RUN)))
        ]
        assert kind(response) == "task"
        return response.task, await get_task(client, response.task.id)

    task, got = run(kit_server, scenario)
    assert states([_as_event(task)]) == ["TASK_STATE_COMPLETED"]
    assert status_text(task) == "1 failed, 11 passed"
    assert [a.artifact_id for a in task.artifacts] == ["test-log", "summary"]
    assert len(texts(task.artifacts[0].parts)) == 5
    assert got.id == task.id and got.status.state == task.status.state
    assert got.history[0].role == Role.ROLE_USER


def test_non_blocking_send_and_cancel(kit_server: Any) -> None:
    async def scenario(client: Client):
        config = SendMessageConfiguration(return_immediately=True)
        request = SendMessageRequest(message=message(RUN), configuration=config)
        [response] = [r async for r in client.send_message(request)]
        canceled = await client.cancel_task(CancelTaskRequest(id=response.task.id))
        return response.task, canceled

    task, canceled = run(kit_server, scenario)
    assert states([_as_event(task)]) == ["TASK_STATE_SUBMITTED"]
    assert canceled.id == task.id and states([_as_event(canceled)]) == ["TASK_STATE_CANCELED"]


def test_stream_of_the_reference_run(kit_server: Any) -> None:
    async def scenario(client: Client):
        return await collect(client.send_message(SendMessageRequest(message=message(RUN))))

    events = run(kit_server, scenario, streaming=True)
    assert [kind(e) for e in events] == ["task", "status_update"] + ["artifact_update"] * 6 + [
        "status_update"
    ]
    assert states(events)[-1] == "TASK_STATE_COMPLETED"


def test_resubscribe_and_unknown_tasks(kit_server: Any) -> None:
    async def start(client: Client):
        config = SendMessageConfiguration(return_immediately=True)
        request = SendMessageRequest(message=message(RUN), configuration=config)
        [response] = [r async for r in client.send_message(request)]
        return response.task.id

    async def scenario(client: Client):
        events = await subscribe(client, task_id)
        with pytest.raises(TaskNotFoundError):
            await get_task(client, "no-such-task")
        return events

    task_id = run(kit_server, start)
    events = run(kit_server, scenario, streaming=True)
    assert kind(events[0]) == "task" and states(events)[-1] == "TASK_STATE_COMPLETED"


def _as_event(task: Task) -> StreamResponse:
    return StreamResponse(task=task)
