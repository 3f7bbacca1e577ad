"""A recorded stream opens on replay as it did live: agents that open a follow-up stream with the
task as it is (a raw agent, with and without its question still in the status) or with a bare
statusUpdate (a2a-sdk's server), recorded through the proxy with the official client over both
bindings, replay the same event kinds, states, order and count."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest
import yaml
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse, Task
from google.protobuf import json_format

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.as_is_agent import serve_as_is_agent
from tests.helpers.upstream import serve_upstream

BINDINGS = ("JSONRPC", "HTTP+JSON")
_ids = itertools.count(1)


@contextmanager
def sdk_agent() -> Iterator[str]:
    with serve_upstream() as upstream:
        yield upstream.url


# name -> (the upstream, how its follow-up streams open: the `first` the recording writes)
UPSTREAMS: dict[str, tuple[Callable[[], AbstractContextManager[str]], str]] = {
    "task-as-is": (lambda: serve_as_is_agent(keep_question=True), "task-as-is"),
    "task-as-is, question moved to history": (
        lambda: serve_as_is_agent(keep_question=False),
        "task-as-is",
    ),
    "a2a-sdk: bare statusUpdate": (sdk_agent, "update"),
    "task-as-is, a new task's first Task already busy": (
        lambda: serve_as_is_agent(keep_question=True, busy=True),
        "task-as-is",
    ),
}


def user(text: str, task: Task | None = None) -> Message:
    message = Message(message_id=f"m-{next(_ids)}", role=Role.ROLE_USER, parts=[Part(text=text)])
    if task is not None:
        message.task_id, message.context_id = task.id, task.context_id
    return message


def seen(event: StreamResponse) -> tuple[Any, ...]:
    """An event's kind and what it says, without ids and timestamps."""
    data = json_format.MessageToDict(event)
    kind = event.WhichOneof("payload")
    if kind == "artifact_update":
        update = data["artifactUpdate"]
        return (kind, update["artifact"]["parts"], bool(update.get("lastChunk")))
    body = data.get("task") or data.get("statusUpdate") or {}
    return (kind, body["status"]["state"])


async def scenario(url: str, binding: str) -> list[list[tuple[Any, ...]]]:
    """A streamed message that asks for input, then the streamed answer on its task."""
    config = ClientConfig(supported_protocol_bindings=[binding], streaming=True)
    async with await create_client(url, config) as client:
        asked = [e async for e in client.send_message(SendMessageRequest(message=user("ask me")))]
        task = asked[0].task
        answer = SendMessageRequest(message=user("branch main", task))
        answered = [e async for e in client.send_message(answer)]
    return [[seen(e) for e in asked], [seen(e) for e in answered]]


@pytest.fixture(scope="module", params=list(UPSTREAMS))
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The upstream recorded through the proxy over both bindings; what the client saw live."""
    serve, opening = UPSTREAMS[request.param]
    path = tmp_path_factory.mktemp("first-event") / "agent.yaml"
    with serve() as upstream_url:
        app = create_recording_app(upstream_url, path, "all")
        proxy = ServerThread(app).start()
        try:
            live = {b: asyncio.run(scenario(proxy.url, b)) for b in BINDINGS}
        finally:
            proxy.stop()
    assert finish_recording(app) == path
    return path, live, opening


def test_the_recording_says_how_each_follow_up_stream_opened(recorded):
    path, _, opening = recorded
    interactions = yaml.safe_load(path.read_text())["interactions"]
    follow_ups = [i for i in interactions if "task" in i["match"]]
    assert len(follow_ups) == len(BINDINGS)
    assert all(i["reply"]["task"]["first"] == opening for i in follow_ups)
    assert all("first" not in i["reply"]["task"] for i in interactions if i not in follow_ups)


def test_a_first_task_showing_several_changes_is_recorded_as_one_opening(recorded):
    path, live, _ = recorded
    interactions = yaml.safe_load(path.read_text())["interactions"]
    asks = [i["reply"]["task"] for i in interactions if "task" not in i["match"]]
    opened = live[BINDINGS[0]][0][0]  # the first event of the first stream
    if opened == ("task", "TASK_STATE_WORKING"):  # WORKING and the artifact in one Task
        assert all(ask.get("firstSteps") == 2 for ask in asks)
    else:  # one step each: the Task shows the first
        assert all("firstSteps" not in ask for ask in asks)


def test_the_replay_streams_the_events_the_client_saw_live(recorded):
    path, live, opening = recorded
    opened = [("task", "TASK_STATE_INPUT_REQUIRED")] if opening == "task-as-is" else []
    for binding in BINDINGS:  # live, the follow-up stream opened as the agent does
        _, answered = live[binding]
        assert answered[: len(opened) + 1] == [*opened, ("status_update", "TASK_STATE_WORKING")]
        assert answered[-1] == ("status_update", "TASK_STATE_COMPLETED")
    with serve_in_thread(path, pace="instant") as replay:
        replayed = {b: asyncio.run(scenario(replay.agent_url(), b)) for b in BINDINGS}
        assert all(entry.matched for entry in replay.journal())
    assert replayed == live
