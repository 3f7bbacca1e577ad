"""The upstream agent (tests/helpers/upstream.py) behaves as specified, seen through the official
a2a-sdk client over both JSON bindings, so later recording failures can be blamed on the proxy.

Client code is async and runs inside `asyncio.run` (no pytest-asyncio). One agent serves the whole
module; every test works only with the tasks it created.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskNotCancelableError,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf import json_format

from tests.helpers.upstream import DEFAULT_DELAY, UpstreamAgent, serve_upstream

T = TypeVar("T")

BINDINGS = ["JSONRPC", "HTTP+JSON"]
SEND_PATH = {"JSONRPC": "/", "HTTP+JSON": "/message:send"}
STREAM_PATH = {"JSONRPC": "/", "HTTP+JSON": "/message:stream"}
TIMEOUT = 5.0
"""Seconds any one stream or poll may take: a hang fails the test instead of stalling the run."""

SUBMITTED = TaskState.TASK_STATE_SUBMITTED
WORKING = TaskState.TASK_STATE_WORKING
COMPLETED = TaskState.TASK_STATE_COMPLETED
FAILED = TaskState.TASK_STATE_FAILED
CANCELED = TaskState.TASK_STATE_CANCELED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED


@pytest.fixture(scope="module")
def upstream() -> Iterator[UpstreamAgent]:
    with serve_upstream() as agent:
        yield agent


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def agent(upstream: UpstreamAgent, binding: str) -> Agent:
    return Agent(upstream, binding)


class Agent:
    """The upstream agent as one binding of the official client sees it.

    `requests` lists the (method, path) of every HTTP request the clients made, to prove the
    binding under test was the one used.
    """

    def __init__(self, upstream: UpstreamAgent, binding: str) -> None:
        self.upstream = upstream
        self.binding = binding
        self.requests: list[tuple[str, str]] = []

    def run(self, scenario: Callable[[Client], Awaitable[T]], *, streaming: bool = False) -> T:
        async def main() -> T:
            async with self.client(streaming=streaming) as client:
                return await scenario(client)

        return asyncio.run(main())

    def client(self, *, streaming: bool = False) -> _ClientContext:
        return _ClientContext(self, streaming)


_SHARED_TLS = ssl.create_default_context()
"""One TLS context for every client (the agent is plain HTTP): httpx would load the CA bundle
afresh for each client, ~50 ms apiece."""


class _ClientContext:
    """`async with agent.client() as client`: a client on its own recorded httpx client."""

    def __init__(self, agent: Agent, streaming: bool) -> None:
        self.agent = agent
        self.streaming = streaming

    async def __aenter__(self) -> Client:
        async def record(request: httpx.Request) -> None:
            self.agent.requests.append((request.method, request.url.path))

        self.http = httpx.AsyncClient(
            event_hooks={"request": [record]}, timeout=TIMEOUT, verify=_SHARED_TLS
        )
        config = ClientConfig(
            supported_protocol_bindings=[self.agent.binding],
            streaming=self.streaming,
            httpx_client=self.http,
        )
        self.client = await create_client(self.agent.upstream.url, config)
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        await self.client.close()
        await self.http.aclose()


def user(text: str, *, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=f"m-{time.monotonic_ns()}",
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def request(message: Message, **config: Any) -> SendMessageRequest:
    return SendMessageRequest(message=message, configuration=SendMessageConfiguration(**config))


async def send(client: Client, message: Message, **config: Any) -> StreamResponse:
    """SendMessage through a non-streaming client: its one response."""
    responses = [r async for r in client.send_message(request(message, **config))]
    assert len(responses) == 1, responses
    return responses[0]


async def send_task(client: Client, message: Message, **config: Any) -> Task:
    response = await send(client, message, **config)
    assert response.HasField("task"), response
    return response.task


async def collect(events: AsyncIterator[StreamResponse]) -> list[tuple[float, StreamResponse]]:
    """(arrival time, event) for every event until the server closes the stream."""

    async def read() -> list[tuple[float, StreamResponse]]:
        return [(time.monotonic(), event) async for event in events]

    return await asyncio.wait_for(read(), TIMEOUT)


async def stream(client: Client, message: Message, **config: Any) -> list[StreamResponse]:
    """SendStreamingMessage through a streaming client: every event until the stream closes."""
    return [event for _, event in await collect(client.send_message(request(message, **config)))]


async def poll(client: Client, task_id: str, until: Callable[[Task], bool]) -> list[Task]:
    """GetTask until `until(task)`; every task seen."""
    seen: list[Task] = []
    deadline = time.monotonic() + TIMEOUT
    while True:
        seen.append(await client.get_task(GetTaskRequest(id=task_id)))
        if until(seen[-1]):
            return seen
        assert time.monotonic() < deadline, f"task never got there: {seen[-1]}"
        await asyncio.sleep(0.01)


def kind(event: StreamResponse) -> str:
    return str(event.WhichOneof("payload"))


def kinds(events: list[StreamResponse]) -> list[str]:
    return [kind(e) for e in events]


def texts(parts: Any) -> list[str]:
    return [p.text for p in parts if p.WhichOneof("content") == "text"]


def status_text(status: Any) -> str:
    return "".join(texts(status.message.parts))


def artifact(task: Task, name: str) -> Any:
    [found] = [a for a in task.artifacts if a.name == name]
    return found


def data_of(part: Part) -> Any:
    return json_format.MessageToDict(part.data)


def state_of(event: StreamResponse) -> int:
    return event.task.status.state if kind(event) == "task" else event.status_update.status.state


def assert_build_artifacts(task: Task) -> None:
    log = artifact(task, "build-log")
    assert log.artifact_id == "build-log"
    assert texts(log.parts) == ["step 1\n", "step 2\n", "step 3\n"]
    result = artifact(task, "result")
    assert result.artifact_id == "result"
    assert [data_of(p) for p in result.parts] == [{"ok": True, "steps": 3}]
    assert [a.name for a in task.artifacts] == ["build-log", "result"]


# --- the card and the runner ------------------------------------------------------------------


def test_the_card_names_both_bindings_at_the_servers_root(upstream: UpstreamAgent) -> None:
    response = httpx.get(upstream.url + "/.well-known/agent-card.json")
    assert response.status_code == 200
    card = response.json()
    assert card["name"] == "upstream"
    assert card["capabilities"] == {"streaming": True, "pushNotifications": True}
    assert card["supportedInterfaces"] == [
        {"url": upstream.url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": upstream.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]
    assert upstream.url.startswith("http://127.0.0.1:") and upstream.card_url == upstream.url + (
        "/.well-known/agent-card.json"
    )

    async def resolve() -> Any:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, upstream.url).get_agent_card()

    parsed = asyncio.run(resolve())
    assert parsed.name == "upstream" and parsed.capabilities.streaming


def test_start_and_stop_leave_no_threads_behind() -> None:
    before = set(threading.enumerate())
    agent = UpstreamAgent().start()
    assert httpx.get(agent.card_url).status_code == 200
    assert set(threading.enumerate()) - before, "serves from a thread of its own"
    agent.stop()
    assert set(threading.enumerate()) - before == set()  # none of its threads is left (one of
    # an earlier test may have ended meanwhile)
    with pytest.raises(httpx.ConnectError):
        httpx.get(agent.card_url)
    agent.stop()  # idempotent


def test_stop_ends_an_open_subscription_promptly() -> None:
    """A subscription to a task waiting for input never ends by itself; stop() must not hang on
    it."""
    before = set(threading.enumerate())
    upstream = UpstreamAgent().start()
    agent = Agent(upstream, "JSONRPC")

    async def scenario(client: Client) -> tuple[list[StreamResponse], float]:
        async with agent.client(streaming=True) as subscriber:
            asked = await send_task(client, user("ask and leave"))
            events = subscriber.subscribe(SubscribeToTaskRequest(id=asked.id))
            first = await asyncio.wait_for(anext(events), TIMEOUT)
            started = time.monotonic()
            await asyncio.to_thread(upstream.stop)
            stopped_in = time.monotonic() - started
            rest = [event for _, event in await collect(events)]
        return [first, *rest], stopped_in

    try:
        events, stopped_in = agent.run(scenario)
    finally:
        upstream.stop()

    assert kinds(events) == ["task"] and events[0].task.status.state == INPUT_REQUIRED
    assert stopped_in < 1.0, "stop() closes open streams instead of waiting them out"
    assert set(threading.enumerate()) - before == set()  # none of its threads is left (one of
    # an earlier test may have ended meanwhile)


# --- "?" -> a direct Message -------------------------------------------------------------------


def test_a_question_gets_a_direct_message(agent: Agent) -> None:
    response = agent.run(lambda c: send(c, user("What is up?")))

    assert kind(response) == "message"
    assert response.message.role == Role.ROLE_AGENT
    assert texts(response.message.parts) == ["Answer: What is up?"]
    assert response.message.context_id and not response.message.task_id
    assert ("POST", SEND_PATH[agent.binding]) in agent.requests


def test_a_streamed_question_is_one_message_then_the_stream_closes(agent: Agent) -> None:
    events = agent.run(lambda c: stream(c, user("Why?")), streaming=True)

    assert kinds(events) == ["message"]
    assert texts(events[0].message.parts) == ["Answer: Why?"]
    assert ("POST", STREAM_PATH[agent.binding]) in agent.requests


# --- "build" -> a streamed task with artifacts -------------------------------------------------


def test_a_blocking_build_returns_the_completed_task_with_both_artifacts(agent: Agent) -> None:
    task = agent.run(lambda c: send_task(c, user("please build it")))

    assert task.status.state == COMPLETED
    assert status_text(task.status) == "Build done"
    assert_build_artifacts(task)
    # The user's message, then the superseded WORKING status message.
    assert [(m.role, texts(m.parts)) for m in task.history] == [
        (Role.ROLE_USER, ["please build it"]),
        (Role.ROLE_AGENT, ["Building"]),
    ]


def test_a_build_with_return_immediately_answers_at_once_and_completes_under_polling(
    agent: Agent,
) -> None:
    async def scenario(client: Client) -> tuple[Task, list[Task]]:
        first = await send_task(client, user("build now"), return_immediately=True)
        polled = await poll(client, first.id, lambda t: t.status.state == COMPLETED)
        return first, polled

    first, polled = agent.run(scenario)

    # The SDK answers with the first Task the executor enqueues: SUBMITTED, nothing produced yet.
    assert first.status.state == SUBMITTED
    assert list(first.artifacts) == []
    assert texts(first.history[0].parts) == ["build now"]
    done = polled[-1]
    assert done.id == first.id and done.context_id == first.context_id
    assert status_text(done.status) == "Build done"
    assert_build_artifacts(done)


def test_a_streamed_build_sends_every_event_in_order_with_real_gaps(agent: Agent) -> None:
    async def scenario(client: Client) -> list[tuple[float, StreamResponse]]:
        return await collect(client.send_message(request(user("build the app"))))

    timed = agent.run(scenario, streaming=True)
    events = [event for _, event in timed]

    assert kinds(events) == [
        "task",
        "status_update",
        "artifact_update",
        "artifact_update",
        "artifact_update",
        "artifact_update",
        "status_update",
    ]
    task = events[0].task
    assert task.status.state == SUBMITTED and task.id and task.context_id
    for event in events[1:]:
        update = event.status_update if kind(event) == "status_update" else event.artifact_update
        assert (update.task_id, update.context_id) == (task.id, task.context_id)

    working, *chunks, result, completed = events[1:]
    assert working.status_update.status.state == WORKING
    assert status_text(working.status_update.status) == "Building"
    assert [
        (
            c.artifact_update.artifact.artifact_id,
            c.artifact_update.artifact.name,
            texts(c.artifact_update.artifact.parts),
            c.artifact_update.append,
            c.artifact_update.last_chunk,
        )
        for c in chunks
    ] == [
        ("build-log", "build-log", ["step 1\n"], False, False),
        ("build-log", "build-log", ["step 2\n"], True, False),
        ("build-log", "build-log", ["step 3\n"], True, True),
    ]
    assert result.artifact_update.artifact.name == "result"
    assert [data_of(p) for p in result.artifact_update.artifact.parts] == [{"ok": True, "steps": 3}]
    assert completed.status_update.status.state == COMPLETED
    assert status_text(completed.status_update.status) == "Build done"

    # Events arrive as produced, not buffered: five gaps of `DEFAULT_DELAY` after WORKING.
    times = [t for t, _ in timed]
    assert times[-1] - times[1] >= 4 * DEFAULT_DELAY
    assert ("POST", STREAM_PATH[agent.binding]) in agent.requests


# --- "ask" -> input-required, then a follow-up -------------------------------------------------


def test_ask_waits_for_input_and_the_follow_up_completes_the_same_task(agent: Agent) -> None:
    async def scenario(client: Client) -> tuple[Task, Task, Task]:
        asked = await send_task(client, user("ask me something"))
        answered = await send_task(client, user("main", task_id=asked.id))
        again = await client.get_task(GetTaskRequest(id=asked.id))
        return asked, answered, again

    asked, answered, again = agent.run(scenario)

    assert asked.status.state == INPUT_REQUIRED
    assert status_text(asked.status) == "Which branch?"
    assert answered.id == asked.id and answered.context_id == asked.context_id
    assert answered.status.state == COMPLETED
    assert texts(artifact(answered, "answer").parts) == ["Using branch main"]
    assert again.status.state == COMPLETED
    user_turns = [texts(m.parts) for m in again.history if m.role == Role.ROLE_USER]
    assert user_turns == [["ask me something"], ["main"]]


def test_streamed_ask_closes_at_input_required_and_the_streamed_follow_up_completes(
    agent: Agent,
) -> None:
    async def scenario(client: Client) -> tuple[list[StreamResponse], list[StreamResponse]]:
        asked = await stream(client, user("ask away"))
        answered = await stream(client, user("dev", task_id=asked[0].task.id))
        return asked, answered

    asked, answered = agent.run(scenario, streaming=True)

    assert kinds(asked) == ["task", "status_update", "status_update"]
    assert [state_of(e) for e in asked] == [SUBMITTED, WORKING, INPUT_REQUIRED]
    assert status_text(asked[2].status_update.status) == "Which branch?"
    task_id = asked[0].task.id

    # The follow-up stream has no Task first: the task exists, and the executor enqueues none.
    assert kinds(answered) == ["status_update", "artifact_update", "status_update"]
    assert [e.status_update.task_id or e.artifact_update.task_id for e in answered] == [task_id] * 3
    assert state_of(answered[0]) == WORKING
    assert texts(answered[1].artifact_update.artifact.parts) == ["Using branch dev"]
    assert answered[1].artifact_update.artifact.name == "answer"
    assert state_of(answered[2]) == COMPLETED


def test_subscribe_to_a_waiting_task_sees_the_snapshot_then_the_follow_up(agent: Agent) -> None:
    async def scenario(client: Client) -> list[StreamResponse]:
        async with agent.client(streaming=True) as subscriber:
            asked = await send_task(client, user("ask please"))
            events = subscriber.subscribe(SubscribeToTaskRequest(id=asked.id))
            # The first event (the snapshot) means the subscription is in place.
            first = await asyncio.wait_for(anext(events), TIMEOUT)
            answered = await send_task(client, user("release", task_id=asked.id))
            assert answered.status.state == COMPLETED
            rest = [event for _, event in await collect(events)]
        return [first, *rest]

    events = agent.run(scenario)

    assert kinds(events) == ["task", "status_update", "artifact_update", "status_update"]
    assert [state_of(e) for e in events if kind(e) != "artifact_update"] == [
        INPUT_REQUIRED,
        WORKING,
        COMPLETED,
    ]
    assert texts(events[2].artifact_update.artifact.parts) == ["Using branch release"]


def test_cancel_a_waiting_task(agent: Agent) -> None:
    async def scenario(client: Client) -> tuple[Task, Task, Task]:
        asked = await send_task(client, user("ask, then cancel"))
        canceled = await client.cancel_task(CancelTaskRequest(id=asked.id))
        after = await client.get_task(GetTaskRequest(id=asked.id))
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=asked.id))
        return asked, canceled, after

    asked, canceled, after = agent.run(scenario)

    assert asked.status.state == INPUT_REQUIRED
    assert canceled.id == asked.id and canceled.status.state == CANCELED
    assert after.status.state == CANCELED


# --- "fail" and everything else ----------------------------------------------------------------


def test_fail_ends_failed(agent: Agent) -> None:
    task = agent.run(lambda c: send_task(c, user("fail please")))

    assert task.status.state == FAILED
    assert status_text(task.status) == "Something broke"


def test_a_streamed_fail_goes_working_then_failed(agent: Agent) -> None:
    events = agent.run(lambda c: stream(c, user("fail fast")), streaming=True)

    assert kinds(events) == ["task", "status_update", "status_update"]
    assert [state_of(e) for e in events] == [SUBMITTED, WORKING, FAILED]
    assert status_text(events[2].status_update.status) == "Something broke"


def test_anything_else_completes_with_done(agent: Agent) -> None:
    task = agent.run(lambda c: send_task(c, user("hello there")))

    assert task.status.state == COMPLETED
    assert status_text(task.status) == "Done: hello there"
    assert list(task.artifacts) == []


def test_a_streamed_anything_else_is_the_task_then_completed(agent: Agent) -> None:
    events = agent.run(lambda c: stream(c, user("hi")), streaming=True)

    assert kinds(events) == ["task", "status_update"]
    assert [state_of(e) for e in events] == [SUBMITTED, COMPLETED]
    assert status_text(events[1].status_update.status) == "Done: hi"


# --- push notifications ------------------------------------------------------------------------


class _Receiver(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], Any]]

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        received = self.server.received  # type: ignore[attr-defined]
        received.append((dict(self.headers), json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_an_inline_push_config_gets_every_event_of_a_build(
    agent: Agent, webhook: ThreadingHTTPServer
) -> None:
    url = f"http://127.0.0.1:{webhook.server_address[1]}/hook"
    push = TaskPushNotificationConfig(id="hook-1", url=url, token="tok-1")

    task = agent.run(
        lambda c: send_task(c, user("build with push"), task_push_notification_config=push)
    )

    # The SDK delivers each push before it hands the event on, so all arrived by now.
    received = webhook.received  # type: ignore[attr-defined]
    assert all(headers.get("X-A2A-Notification-Token") == "tok-1" for headers, _ in received)
    bodies = [body for _, body in received]
    assert [next(iter(b)) for b in bodies] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert bodies[-1]["statusUpdate"]["taskId"] == task.id
    assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
