"""The bundled kit as the official `a2a-sdk` client sees it, for tests/interop.

`Kit` is one binding's view of the session's kit server (tests/interop/conftest.py makes it):
`kit.run("test-runner", scenario)` creates a client from the agent's card, awaits
`scenario(client)` and closes the client; `streaming=True` gives a streaming client. Client code
is async and runs inside `asyncio.run` (no pytest-asyncio). `stream()` and `subscribe()` collect a
stream's events and fail, rather than hang, when the server does not close it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.types import (
    AgentCard,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from google.protobuf import json_format

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
"""The card lists GRPC once the kit server serves gRPC too (tests/interop/conftest.py)."""
JSON_BINDINGS = ["JSONRPC", "HTTP+JSON"]
"""For tests that read the HTTP wire (SSE frames) themselves."""

T = TypeVar("T")


class Kit:
    """The kit agents as one binding of the official client sees them."""

    def __init__(self, server: Any, binding: str, test_name: str) -> None:
        self.server = server
        self.binding = binding
        self._ids = itertools.count(1)
        # Message and context ids unique to this test and binding, readable in the journal.
        self._prefix = f"{test_name}"

    def agent_url(self, agent: str) -> str:
        return self.server.agent_url(agent)

    def config(self, streaming: bool = False) -> ClientConfig:
        return ClientConfig(
            supported_protocol_bindings=[self.binding],
            streaming=streaming,
            grpc_channel_factory=grpc.aio.insecure_channel,
        )

    def card(self, agent: str) -> AgentCard:
        """The agent's public card, as the client's resolver reads it."""

        async def main() -> AgentCard:
            async with httpx.AsyncClient() as http:
                return await A2ACardResolver(http, self.agent_url(agent)).get_agent_card()

        return asyncio.run(main())

    def run(
        self,
        agent: str,
        scenario: Callable[[Client], Awaitable[T]],
        card: AgentCard | None = None,
        *,
        streaming: bool = False,
    ) -> T:
        """Create a client for `agent` from its card (or `card`) and run `scenario(client)`.

        `streaming=True` makes a client that streams when the card does: `send_message` then
        yields every event of SendStreamingMessage, and `subscribe` works.
        """

        async def main() -> T:
            async with await self.client(agent, card, streaming=streaming) as client:
                return await scenario(client)

        return asyncio.run(main())

    async def client(
        self, agent: str, card: AgentCard | None = None, *, streaming: bool = False
    ) -> Client:
        """A new client for `agent` (use it with `async with`), for scenarios that need several."""
        return await create_client(card or self.agent_url(agent), self.config(streaming))

    def new_id(self, kind: str) -> str:
        return f"{self._prefix}-{kind}-{next(self._ids)}"

    def message(
        self,
        text: str | None = None,
        *parts: Part,
        task_id: str = "",
        context_id: str = "",
    ) -> Message:
        """A user message with a fresh messageId: an optional text part, then `parts`."""
        all_parts = ([Part(text=text)] if text is not None else []) + list(parts)
        return Message(
            message_id=self.new_id("msg"),
            role=Role.ROLE_USER,
            parts=all_parts,
            task_id=task_id,
            context_id=context_id,
        )

    def journal(self, agent: str) -> list[Any]:
        return list(self.server.journal(agent))


def data_part(value: Any, media_type: str = "application/json") -> Part:
    part = Part(media_type=media_type)
    json_format.ParseDict(value, part.data)
    return part


async def send(
    client: Client,
    message: Message,
    *,
    return_immediately: bool = False,
    history_length: int | None = None,
) -> StreamResponse:
    """SendMessage (non-streaming): the one response, a task or a message."""
    config = SendMessageConfiguration(return_immediately=return_immediately)
    if history_length is not None:
        config.history_length = history_length
    request = SendMessageRequest(message=message, configuration=config)
    responses = [r async for r in client.send_message(request)]
    assert len(responses) == 1, responses
    return responses[0]


async def send_task(client: Client, message: Message, **kwargs: Any) -> Task:
    """SendMessage that must answer with a task."""
    response = await send(client, message, **kwargs)
    assert response.HasField("task"), f"expected a task, got {response}"
    return response.task


async def get_task(client: Client, task_id: str, history_length: int | None = None) -> Task:
    request = GetTaskRequest(id=task_id)
    if history_length is not None:
        request.history_length = history_length
    return await client.get_task(request)


STREAM_TIMEOUT = 10.0
"""Seconds a stream may take to close: a stream the server leaves open fails the test, not
hangs it."""


async def collect(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    """Every event until the server closes the stream (TimeoutError if it does not)."""

    async def read() -> list[StreamResponse]:
        return [event async for event in events]

    return await asyncio.wait_for(read(), STREAM_TIMEOUT)


async def stream(client: Client, message: Message, **kwargs: Any) -> list[StreamResponse]:
    """SendMessage through a streaming client: every event until the server closes the stream."""
    config = SendMessageConfiguration(**kwargs)
    return await collect(
        client.send_message(SendMessageRequest(message=message, configuration=config))
    )


async def subscribe(client: Client, task_id: str) -> list[StreamResponse]:
    """SubscribeToTask: every event until the server closes the stream."""
    return await collect(client.subscribe(SubscribeToTaskRequest(id=task_id)))


def kind(event: StreamResponse) -> str:
    """`task`, `message`, `status_update` or `artifact_update`."""
    return str(event.WhichOneof("payload"))


def states(events: list[StreamResponse]) -> list[str]:
    """The state each event shows (a task or a status update), by name; `-` for the others."""
    out = []
    for event in events:
        status = event.task.status if kind(event) == "task" else event.status_update.status
        out.append(
            TaskState.Name(status.state) if kind(event) in ("task", "status_update") else "-"
        )
    return out


def texts(parts: Any) -> list[str]:
    """The text of every text part, in order."""
    return [p.text for p in parts if p.WhichOneof("content") == "text"]


def status_text(task: Task) -> str:
    """The status message's text parts, joined."""
    return "\n".join(texts(task.status.message.parts))


def as_json(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message)


def journal_since(kit: Kit, agent: str, before: int) -> list[Any]:
    """The journal entries added after the journal had `before` entries."""
    return kit.journal(agent)[before:]


# -- what several modules check: the test-runner's reference run, the diff sent for review ---

LOG = [
    "collected 12 items\n",
    "tests/test_api.py ......                                  [ 50%]\n",
    "tests/test_cli.py ..F..                                   [ 91%]\n",
    "tests/test_docs.py .                                      [100%]\n",
    "FAILED tests/test_cli.py::test_version_flag - AssertionError\n",
]


def assert_reference_run_completed(task: Task) -> None:
    """The kit's reference run, finished: both artifacts, the whole log, the summary."""
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert status_text(task) == "1 failed, 11 passed"
    artifacts = {a.artifact_id: a for a in task.artifacts}
    assert list(artifacts) == ["test-log", "summary"]
    log = artifacts["test-log"]
    assert log.name == "test-log.txt"
    assert texts(log.parts) == LOG, "one text part per log line, appended chunk after chunk"
    [summary] = artifacts["summary"].parts
    assert summary.WhichOneof("content") == "data"
    assert summary.media_type == "application/json"
    assert as_json(summary)["data"] == {"passed": 11, "failed": 1}


DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
