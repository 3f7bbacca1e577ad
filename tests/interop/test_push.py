"""Push notifications through the official a2a-sdk client: webhook configs created, read, listed
and deleted; every task event POSTed to a local receiver as StreamResponse JSON with the config's
credentials; deliveries in the journal; code-reviewer refuses push."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from a2a.client import Client
from a2a.types import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    PushNotificationNotSupportedError,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf import json_format

from tests.helpers.interop import Kit, as_json, get_task, send_task, states, stream

DEADLINE_S = 5.0
# The events of the reference run after SUBMITTED: WORKING, five log chunks, the summary, COMPLETED.
RUN_EVENTS = ["statusUpdate"] + ["artifactUpdate"] * 6 + ["statusUpdate"]


@dataclass(frozen=True)
class Hit:
    """One POST the receiver got."""

    path: str
    headers: dict[str, str]  # names lowercased
    body: Any


class Receiver:
    """A webhook receiver on 127.0.0.1: records every POST, answers 200."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hit = Hit(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw)
                )
                with receiver._changed:
                    receiver.hits.append(hit)
                    receiver._changed.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    def at(self, path: str) -> list[Hit]:
        with self._changed:
            return [hit for hit in self.hits if hit.path == path]

    def wait_for(self, path: str, count: int) -> list[Hit]:
        """The POSTs to `path` once there are `count` of them; fails after the deadline."""
        with self._changed:
            arrived = self._changed.wait_for(lambda: len(self.at(path)) >= count, DEADLINE_S)
        hits = self.at(path)
        assert arrived, f"{path}: {len(hits)} of {count} notifications after {DEADLINE_S} s"
        return hits

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll `check` until it returns something truthy; fail after the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while not (result := check()):
        assert time.monotonic() < deadline, f"not within {DEADLINE_S} s: {what}"
        time.sleep(0.01)
    return result


def deliveries(kit: Kit, task_id: str, count: int) -> list[Any]:
    """The journal's webhook deliveries for one task, once there are `count` of them."""
    journal = kit.server.agents["test-runner"].journal

    def found() -> list[Any]:
        mine = [d for d in list(journal.deliveries) if d.task_id == task_id]
        return mine if len(mine) >= count else []

    return eventually(found, f"{count} deliveries for task {task_id}")


def config(task_id: str, url: str, config_id: str = "cfg-1") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        id=config_id,
        url=url,
        token="tok",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )


async def poll_to_the_end(client: Client, task_id: str) -> Task:
    """GetTask until the task is terminal (the reference run needs two polls)."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        task = await get_task(client, task_id, history_length=0)
        if task.status.state in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED):
            return task
        assert time.monotonic() < deadline, (
            f"task {task_id} still {TaskState.Name(task.status.state)}"
        )


def as_stream_responses(hits: list[Hit]) -> list[StreamResponse]:
    """Each body parsed as a StreamResponse: fails on anything that is not one."""
    return [json_format.ParseDict(hit.body, StreamResponse()) for hit in hits]


def test_a_webhook_gets_every_event_with_the_configs_credentials(
    kit: Kit, receiver: Receiver
) -> None:
    path = f"/hook/{kit.new_id('created')}"

    async def scenario(client: Client):
        sent = await send_task(
            client, kit.message("Run the tests at 9f3c2e1"), return_immediately=True
        )
        created = await client.create_task_push_notification_config(
            config(sent.id, receiver.url + path)
        )
        done = await poll_to_the_end(client, sent.id)
        return sent, created, done

    sent, created, done = kit.run("test-runner", scenario)

    assert sent.status.state == TaskState.TASK_STATE_SUBMITTED
    assert (created.id, created.task_id, created.url) == ("cfg-1", sent.id, receiver.url + path)
    assert (created.token, created.authentication.scheme, created.authentication.credentials) == (
        "tok",
        "Bearer",
        "secret",
    )
    assert done.status.state == TaskState.TASK_STATE_COMPLETED

    # SUBMITTED came before the config, so the webhook gets the eight events after it.
    hits = receiver.wait_for(path, len(RUN_EVENTS))
    assert [next(iter(hit.body)) for hit in hits] == RUN_EVENTS
    for hit in hits:
        assert hit.headers["authorization"] == "Bearer secret"
        assert hit.headers["x-a2a-notification-token"] == "tok"
        assert hit.headers["content-type"].startswith("application/json")
    events = as_stream_responses(hits)
    assert (
        states(events)[0] == "TASK_STATE_WORKING" and states(events)[-1] == "TASK_STATE_COMPLETED"
    )
    assert {hit.body[next(iter(hit.body))]["taskId"] for hit in hits} == {sent.id}
    assert [e.artifact_update.artifact.artifact_id for e in events[1:7]] == ["test-log"] * 5 + [
        "summary"
    ]
    assert as_json(events[-1].status_update.status.message)["parts"] == [
        {"text": "1 failed, 11 passed"}
    ]
    assert events[-1].status_update.status.timestamp == done.status.timestamp

    # The journal: the Create call, and one successful delivery per event.
    entries = [
        e
        for e in kit.journal("test-runner")
        if e.operation == "CreateTaskPushNotificationConfig" and e.params.get("taskId") == sent.id
    ]
    assert [(e.binding, e.error) for e in entries] == [(kit.binding, None)]
    journaled = deliveries(kit, sent.id, len(RUN_EVENTS))
    assert [(d.ok, d.url, d.config_id, d.event) for d in journaled] == [
        (True, receiver.url + path, "cfg-1", event) for event in RUN_EVENTS
    ]


def test_configs_are_read_listed_and_deleted_and_a_deleted_one_gets_nothing(
    kit: Kit, receiver: Receiver
) -> None:
    kept, dropped = f"/hook/{kit.new_id('kept')}", f"/hook/{kit.new_id('dropped')}"

    async def scenario(client: Client):
        sent = await send_task(
            client, kit.message("Run the tests at 9f3c2e1"), return_immediately=True
        )
        await client.create_task_push_notification_config(config(sent.id, receiver.url + dropped))
        minted = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=sent.id, url=receiver.url + kept)
        )
        read = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=sent.id, id="cfg-1")
        )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=sent.id)
        )
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=sent.id, id="cfg-1")
        )
        await client.delete_task_push_notification_config(  # deleting again is fine
            DeleteTaskPushNotificationConfigRequest(task_id=sent.id, id="cfg-1")
        )
        relisted = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=sent.id)
        )
        gone = None
        try:
            await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=sent.id, id="cfg-1")
            )
        except TaskNotFoundError as exc:
            gone = exc
        await poll_to_the_end(client, sent.id)
        return sent, minted, read, listed, relisted, gone

    sent, minted, read, listed, relisted, gone = kit.run("test-runner", scenario)

    assert minted.id and minted.id != "cfg-1", "a config without an id gets one from the server"
    assert minted.task_id == sent.id and not minted.token
    assert (read.id, read.task_id, read.url, read.token) == (
        "cfg-1",
        sent.id,
        receiver.url + dropped,
        "tok",
    )
    assert (read.authentication.scheme, read.authentication.credentials) == ("Bearer", "secret")
    assert sorted(c.id for c in listed.configs) == sorted(["cfg-1", minted.id])
    assert all(c.task_id == sent.id for c in listed.configs)
    assert [c.id for c in relisted.configs] == [minted.id]
    assert gone is not None, "GetTaskPushNotificationConfig of a deleted config is TaskNotFound"

    # Both webhooks share one delivery lane, in order: once the kept one has all eight events,
    # the deleted one would have had its share too.
    hits = receiver.wait_for(kept, len(RUN_EVENTS))
    assert [next(iter(hit.body)) for hit in hits] == RUN_EVENTS
    assert (
        "authorization" not in hits[0].headers and "x-a2a-notification-token" not in hits[0].headers
    )
    assert receiver.at(dropped) == []


def test_config_operations_on_an_unknown_task_are_task_not_found(
    kit: Kit, receiver: Receiver
) -> None:
    async def scenario(client: Client):
        await client.create_task_push_notification_config(
            config("no-such-task", receiver.url + "/hook/none")
        )

    with pytest.raises(TaskNotFoundError):
        kit.run("test-runner", scenario)


def test_an_inline_config_gets_the_same_events_as_the_stream(kit: Kit, receiver: Receiver) -> None:
    path = f"/hook/{kit.new_id('inline')}"
    inline = TaskPushNotificationConfig(
        id="inline-1",
        url=receiver.url + path,
        token="tok",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )

    async def scenario(client: Client):
        events = await stream(
            client, kit.message("Run the tests at 9f3c2e1"), task_push_notification_config=inline
        )
        stored = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=events[0].task.id, id="inline-1")
        )
        return events, stored

    events, stored = kit.run("test-runner", scenario, streaming=True)

    task_id = events[0].task.id
    assert (stored.id, stored.task_id, stored.url) == ("inline-1", task_id, receiver.url + path)
    # Registered with the message, before any event: the webhook sees SUBMITTED too, as a status
    # update, then exactly what the stream carried after its first frame.
    hits = receiver.wait_for(path, 9)
    pushed = as_stream_responses(hits)
    assert states(pushed)[0] == "TASK_STATE_SUBMITTED" and "statusUpdate" in hits[0].body
    assert pushed[0].status_update.status.timestamp == events[0].task.status.timestamp
    assert [as_json(e) for e in pushed[1:]] == [as_json(e) for e in events[1:]]
    assert {(h.headers["authorization"], h.headers["x-a2a-notification-token"]) for h in hits} == {
        ("Bearer secret", "tok")
    }
    assert [d.config_id for d in deliveries(kit, task_id, 9)] == ["inline-1"] * 9


def test_an_inline_config_on_a_blocking_send_delivers_too(kit: Kit, receiver: Receiver) -> None:
    path = f"/hook/{kit.new_id('blocking')}"

    async def scenario(client: Client):
        configuration = SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=receiver.url + path)
        )
        request = SendMessageRequest(
            message=kit.message("Run the tests at deadbee"), configuration=configuration
        )
        return [r async for r in client.send_message(request)]

    [response] = kit.run("test-runner", scenario)

    assert response.task.status.state == TaskState.TASK_STATE_FAILED
    hits = receiver.wait_for(path, 4)
    assert states(as_stream_responses(hits)) == [
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "-",
        "TASK_STATE_FAILED",
    ]


def test_a_failed_delivery_is_journaled_and_holds_nothing_up(kit: Kit) -> None:
    # A port nobody listens on: bind one, then close it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/hook"

    async def scenario(client: Client):
        sent = await send_task(
            client, kit.message("Run the tests at 9f3c2e1"), return_immediately=True
        )
        await client.create_task_push_notification_config(config(sent.id, dead, "dead"))
        return await poll_to_the_end(client, sent.id)

    done = kit.run("test-runner", scenario)

    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    failed = deliveries(kit, done.id, len(RUN_EVENTS))
    assert [(d.ok, d.url, d.event) for d in failed] == [
        (False, dead, event) for event in RUN_EVENTS
    ]
    assert all(d.error and d.status is None for d in failed), failed


def test_code_reviewer_does_not_support_push(kit: Kit, receiver: Receiver) -> None:
    hook = receiver.url + "/hook/code-reviewer"
    inline = SendMessageConfiguration(
        task_push_notification_config=TaskPushNotificationConfig(url=hook)
    )
    calls: list[Callable[[Client], Awaitable[Any]]] = [
        lambda c: c.create_task_push_notification_config(config("any-task", hook)),
        lambda c: c.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id="any-task", id="cfg-1")
        ),
        lambda c: c.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id="any-task")
        ),
        lambda c: c.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id="any-task", id="cfg-1")
        ),
        # A question it would otherwise answer, with an inline webhook.
        lambda c: anext(
            c.send_message(
                SendMessageRequest(
                    message=kit.message("Which languages do you review?"), configuration=inline
                )
            )
        ),
    ]

    async def scenario(client: Client) -> list[BaseException | None]:
        outcomes: list[BaseException | None] = []
        for call in calls:
            try:
                await call(client)
                outcomes.append(None)
            except PushNotificationNotSupportedError as exc:
                outcomes.append(exc)
        return outcomes

    outcomes = kit.run("code-reviewer", scenario)

    assert [type(o) for o in outcomes] == [PushNotificationNotSupportedError] * len(calls), outcomes
    assert kit.card("code-reviewer").capabilities.push_notifications is False
    assert receiver.at("/hook/code-reviewer") == []
