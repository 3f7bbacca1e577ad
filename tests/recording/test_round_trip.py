"""Record a real a2a-sdk agent through mockagent with the official client, replay offline, and
compare what the client saw: same states, texts, artifacts and event order, over both bindings,
blocking, polled and streamed, with follow-ups on a task."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
)
from google.protobuf import json_format

from mockagent.cassette import load_cassette
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.upstream import serve_upstream

BINDINGS = ("JSONRPC", "HTTP+JSON")
TERMINAL = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
}
_ids = itertools.count(1)


def user(text: str, task: Task | None = None) -> Message:
    message = Message(message_id=f"m-{next(_ids)}", role=Role.ROLE_USER, parts=[Part(text=text)])
    if task is not None:
        message.task_id, message.context_id = task.id, task.context_id
    return message


def seen_task(task: Task) -> dict[str, Any]:
    """What a client sees of a task, without ids and timestamps."""
    data = json_format.MessageToDict(task)
    status = data.get("status", {})
    return {
        "state": status.get("state"),
        "status": [p.get("text") for p in status.get("message", {}).get("parts", [])],
        "artifacts": [
            (a.get("artifactId"), a.get("name"), [{k: v for k, v in p.items()} for p in a["parts"]])
            for a in data.get("artifacts", [])
        ],
    }


def seen_event(event: StreamResponse) -> tuple[Any, ...]:
    """One stream event as the client sees it; a first Task counts as its status."""
    data = json_format.MessageToDict(event)
    if "message" in data:
        return ("message", [p.get("text") for p in data["message"]["parts"]])
    if "task" in data:
        return ("status", data["task"]["status"]["state"])
    if "statusUpdate" in data:
        return ("status", data["statusUpdate"]["status"]["state"])
    update = data["artifactUpdate"]
    return (
        "artifact",
        update["artifact"].get("artifactId"),
        [p.get("text") or p.get("data") for p in update["artifact"]["parts"]],
        bool(update.get("append")),
        bool(update.get("lastChunk")),
    )


async def one(client: Client, message: Message, **configuration: Any) -> Any:
    request = SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(**configuration)
    )
    [response] = [r async for r in client.send_message(request)]
    return response


async def scenario(url: str, binding: str, live: bool) -> list[Any]:
    """Every kind of call; returns what the client saw, in order."""
    seen: list[Any] = []
    blocking = await create_client(
        url, ClientConfig(supported_protocol_bindings=[binding], streaming=False)
    )
    streaming = await create_client(
        url, ClientConfig(supported_protocol_bindings=[binding], streaming=True)
    )
    async with blocking, streaming:
        direct = await one(blocking, user("What time is it?"))
        seen.append(("direct", [p.text for p in direct.message.parts]))
        seen.append(("blocking", seen_task((await one(blocking, user("build it"))).task)))
        seen.append(("fail", seen_task((await one(blocking, user("fail now"))).task)))
        # Polled: live, poll until the task ends; a replay polls as often as the live client did.
        task = (await one(blocking, user("build it"), return_immediately=True)).task
        polls = [seen_task(task)]
        while polls[-1]["state"] not in TERMINAL and len(polls) < 200:
            if live:
                await asyncio.sleep(0.02)
            polls.append(seen_task(await blocking.get_task(GetTaskRequest(id=task.id))))
        seen.append(("polled", polls))
        # A turn that asks for input, then the follow-up on the same task (ids from this server).
        asked = (await one(blocking, user("ask me"))).task
        seen.append(("asked", seen_task(asked)))
        seen.append(("answered", seen_task((await one(blocking, user("main", asked))).task)))
        # Streamed: a build, and an input-required turn answered in a second stream.
        events = [
            e async for e in streaming.send_message(SendMessageRequest(message=user("build it")))
        ]
        seen.append(("stream", [seen_event(e) for e in events]))
        events = [
            e async for e in streaming.send_message(SendMessageRequest(message=user("ask again")))
        ]
        seen.append(("stream-ask", [seen_event(e) for e in events]))
        waiting = events[0].task
        events = [
            e
            async for e in streaming.send_message(SendMessageRequest(message=user("dev", waiting)))
        ]
        seen.append(("stream-answer", [seen_event(e) for e in events]))
    return seen


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[Any]]]:
    """Record the upstream through the proxy over both bindings; what the client saw, live."""
    path = tmp_path_factory.mktemp("round-trip") / "upstream.yaml"
    live = {}
    with serve_upstream() as upstream:
        app = create_recording_app(upstream.url, path, "all")
        proxy = ServerThread(app).start()
        try:
            for binding in BINDINGS:
                live[binding] = asyncio.run(scenario(proxy.url, binding, live=True))
        finally:
            proxy.stop()
    assert finish_recording(app) == path
    return path, live


def test_the_live_run_went_as_the_agent_says(recorded):
    _, live = recorded
    for binding in BINDINGS:
        seen = dict(live[binding])
        assert seen["direct"] == ["Answer: What time is it?"]
        assert seen["blocking"]["state"] == "TASK_STATE_COMPLETED"
        assert seen["polled"][0]["state"] == "TASK_STATE_SUBMITTED"
        assert seen["polled"][-1] == seen["blocking"]
        assert seen["asked"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert seen["answered"]["artifacts"][0][2] == [{"text": "Using branch main"}]
        assert [e[0] for e in seen["stream"]].count("artifact") == 4


@pytest.mark.parametrize("binding", BINDINGS)
def test_replay_shows_the_client_what_it_saw_live(recorded, binding):
    path, live = recorded
    with serve_in_thread(path, pace="instant") as replay:
        replayed = {b: asyncio.run(scenario(replay.agent_url(), b, live=False)) for b in BINDINGS}
        assert replay.journal() and all(entry.matched for entry in replay.journal())
    assert replayed[binding] == live[binding]


def test_the_recording_reads_like_a_written_cassette(recorded):
    path, _ = recorded
    loaded = load_cassette(path)
    text = path.read_text()
    names = [i.name for i in loaded.cassette.interactions]
    assert "what-time-is-it" in names and "build-it" in names
    follow_ups = [i for i in loaded.cassette.interactions if i.match.task is not None]
    assert {i.match.task.from_ for i in follow_ups} <= set(names) and len(follow_ups) == 4
    assert "polls:" in text and "ms:" in text  # the polled script and the streamed gaps
    assert loaded.cassette.agent.capabilities.streaming is True
