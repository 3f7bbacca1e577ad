"""The official `agentex-client` against the bundled Agentex cassettes, sync and async clients
alike.

`serve_in_thread("cassettes/agentex")` mounts each cassette at /NAME/, so a client's base_url is
`server.url + "/sync-agent"` or `… + "/async-agent"`. Every scenario is written once as a coroutine
and run under `asyncio.run` for both `Agentex` and `AsyncAgentex` (`call` awaits what the async
client returns). Tests share one server, so each works with the tasks it created.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from agentex import Agentex, AsyncAgentex

from mockagent.server.thread import serve_in_thread

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "agentex"
SUMMARY = "**Summary**: the three sources agree."
MAX_POLLS = 10  # the research script completes within three polls; more means it is stuck
T = TypeVar("T")
_names = itertools.count(1)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with serve_in_thread(str(CASSETTES), pace="instant") as running:
        yield running


@pytest.fixture(params=["Agentex", "AsyncAgentex"])
def run(request: pytest.FixtureRequest, server: Any) -> Callable[..., Any]:
    """`run(agent_mount, scenario)`: a client of that kind for the mount, passed to the scenario."""
    kind = {"Agentex": Agentex, "AsyncAgentex": AsyncAgentex}[request.param]

    def go(mount: str, scenario: Callable[[Any], Awaitable[T]]) -> T:
        async def main() -> T:
            client = kind(base_url=f"{server.url}/{mount}", max_retries=0)
            try:
                return await scenario(client)
            finally:
                await call(client.close())

        return asyncio.run(main())

    return go


async def call(value: Any) -> Any:
    """What a client method returned: awaited for the async client, as is for the sync one."""
    return await value if inspect.isawaitable(value) else value


async def collect(stream: Any) -> list[Any]:
    if hasattr(stream, "__aiter__"):
        return [chunk async for chunk in stream]
    return list(stream)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "author": "user", "content": value}


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


def test_agents_list_and_retrieve(run):
    async def scenario(client: Any) -> None:
        agents = await call(client.agents.list())
        assert [(a.id, a.name, a.acp_type) for a in agents] == [
            ("agent-async-1", "research-bot", "async")
        ]
        assert (await call(client.agents.retrieve_by_name("research-bot"))).id == "agent-async-1"

    run("async-agent", scenario)


def test_create_task_is_get_or_create_by_name(run):
    async def scenario(client: Any) -> None:
        name = unique("nightly")
        first = await call(
            client.agents.create_task(
                agent_id="agent-sync-1", params={"name": name, "params": {"v": 1}}
            )
        )
        again = await call(
            client.agents.create_task(
                agent_name="echo-bot", params={"name": name, "params": {"v": 2}}
            )
        )
        assert (first.result.status, again.result.id, again.result.params) == (
            "RUNNING",
            first.result.id,
            {"v": 2},
        )
        fetched = await call(client.tasks.retrieve(first.result.id))
        assert (fetched.name, fetched.params) == (name, {"v": 2})
        assert (await call(client.tasks.retrieve_by_name(name))).id == first.result.id

    run("sync-agent", scenario)


def test_send_message_and_read_the_history(run):
    async def scenario(client: Any) -> None:
        task = (await call(client.agents.create_task(agent_name="echo-bot", params={}))).result
        answer = await call(
            client.agents.send_message(
                agent_name="echo-bot", params={"content": text("How are you?"), "task_id": task.id}
            )
        )
        assert [
            (m.content.author, m.content.content, m.streaming_status, m.task_id)
            for m in answer.result
        ] == [("agent", "Hello! You asked a question.", "DONE", task.id)]
        other = await call(
            client.agents.send_message(
                agent_id="agent-sync-1", params={"content": text("hello"), "task_id": task.id}
            )
        )
        assert other.result[0].content.content.startswith("I answer questions")
        history = await call(client.messages.list(task_id=task.id))
        assert [(m.content.author, m.content.content) for m in history] == [
            ("user", "How are you?"),
            ("agent", "Hello! You asked a question."),
            ("user", "hello"),
            ("agent", other.result[0].content.content),
        ]

    run("sync-agent", scenario)


def test_send_message_stream(run):
    async def scenario(client: Any) -> None:
        chunks = await collect(
            client.agents.send_message_stream(
                agent_name="echo-bot",
                params={"content": text("Why?"), "task_name": unique("stream")},
            )
        )
        updates = [chunk.result for chunk in chunks]
        assert [u.type for u in updates] == ["start", "delta", "delta", "delta", "done"]
        assert {u.index for u in updates} == {0}
        assert (
            "".join(u.delta.text_delta for u in updates if u.type == "delta")
            == "Hello! You asked a question."
        )
        done = updates[-1].parent_task_message
        assert (done.streaming_status, done.content.content) == (
            "DONE",
            "Hello! You asked a question.",
        )
        history = await call(client.messages.list(task_id=done.task_id))
        assert [m.id for m in history][-1] == done.id

    run("sync-agent", scenario)


def test_send_data_content_gets_a_data_reply(run):
    async def scenario(client: Any) -> None:
        answer = await call(
            client.agents.send_message(
                agent_name="echo-bot",
                params={"content": {"type": "data", "author": "user", "data": {"q": 1}}},
            )
        )
        assert [(m.content.type, m.content.data) for m in answer.result] == [
            ("data", {"received": True})
        ]

    run("sync-agent", scenario)


def test_sync_agent_refuses_events(run):
    async def scenario(client: Any) -> None:
        answer = await call(
            client.agents.rpc_by_name(
                "echo-bot", method="event/send", params={"task_name": "x", "content": text("hi")}
            )
        )
        assert answer.result is None
        assert answer.error == {
            "code": -32603,
            "message": "Unsupported method: event/send for ACP type: sync",
            "data": None,
        }

    run("sync-agent", scenario)


def test_async_agent_events_then_polled_messages(run):
    async def scenario(client: Any) -> list[str]:
        task = (await call(client.agents.create_task(agent_name="research-bot", params={}))).result
        event = await call(
            client.agents.send_event(
                agent_name="research-bot",
                params={"task_id": task.id, "content": text("research the topic")},
            )
        )
        assert (event.result.sequence_id, event.result.task_id, event.result.agent_id) == (
            1,
            task.id,
            "agent-async-1",
        )
        seen: list[list[str]] = []
        for _ in range(MAX_POLLS):  # a client polls until the agent is done
            seen.append(
                [m.content.content for m in await call(client.messages.list(task_id=task.id))]
            )
            if (await call(client.tasks.retrieve(task.id))).status == "COMPLETED":
                break
        assert seen[-1] == [
            "research the topic",
            "On it: researching.",
            "Found 3 sources.",
            SUMMARY,
        ]
        assert all(
            seen[-1][: len(s)] == s for s in seen
        )  # each poll saw a prefix: nothing reordered
        refused = await call(
            client.agents.rpc(
                "agent-async-1",
                method="event/send",
                params={"task_id": task.id, "content": text("research more")},
            )
        )
        assert refused.error["code"] == -32603 and "terminal" in refused.error["message"]
        events = await call(client.events.list(agent_id="agent-async-1", task_id=task.id))
        return [e.content.content for e in events]

    assert run("async-agent", scenario) == ["research the topic"]


def test_cancel_a_long_job(run):
    async def scenario(client: Any) -> None:
        name = unique("long")
        task = (
            await call(client.agents.create_task(agent_name="research-bot", params={"name": name}))
        ).result
        await call(
            client.agents.send_event(
                agent_name="research-bot",
                params={"task_name": name, "content": text("long job please")},
            )
        )
        canceled = await call(
            client.agents.cancel_task(agent_name="research-bot", params={"task_name": name})
        )
        assert (canceled.result.id, canceled.result.status) == (task.id, "CANCELED")
        assert (await call(client.tasks.retrieve(task.id))).status == "CANCELED"
        history = await call(client.messages.list(task_id=task.id))
        assert [m.content.content for m in history] == ["long job please", "Starting a long job."]

    run("async-agent", scenario)
