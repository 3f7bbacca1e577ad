"""`agent.errorTable` over real HTTP and real gRPC: an agent of spec 1.0.0's table (the TCK's
1.0-dev branch, a2a-java) answers UNIMPLEMENTED and 409 where the default (spec 1.0.1, a2a-sdk)
answers FAILED_PRECONDITION and 400; the card never shows the field; and the official client,
which maps errors by their ErrorInfo reason, raises the same typed errors from either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from a2a.client import Client
from a2a.types import (
    CancelTaskRequest,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskPushNotificationConfig,
    TaskState,
    UnsupportedOperationError,
    a2a_pb2,
)

from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.grpc_calls import VERSION, error_info, send_request, status_of, stub
from tests.helpers.interop import BINDINGS, Kit, send_task

AGENT = """\
version: 1
agent:
  name: {name}
  description: An agent without streaming or push notifications.
  capabilities: {{streaming: false, pushNotifications: false, extendedAgentCard: true}}
  skills: [{{id: s, name: S, description: A skill.}}]
  extendedCard: {{description: The extended card.}}
{table}clock: {{start: 2026-10-06T09:00:00Z}}
interactions:
  - name: done
    reply:
      task:
        steps:
          - state: TASK_STATE_COMPLETED
"""
OLD, NEW = "spec-1-0-0", "spec-1-0-1"  # a2a-java's table, and the default (no field)
HEADERS = {"A2A-Version": "1.0"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """Both agents in one folder, over HTTP at /NAME/ and over gRPC as the tenant NAME."""
    folder: Path = tmp_path_factory.mktemp("tables")
    (folder / f"{OLD}.yaml").write_text(AGENT.format(name=OLD, table='  errorTable: "1.0.0"\n'))
    (folder / f"{NEW}.yaml").write_text(AGENT.format(name=NEW, table=""))
    with serve_in_thread(str(folder), grpc_port=0) as running:
        yield running


def grpc_refusals(server: ServerThread, tenant: str) -> dict[str, tuple[str, str]]:
    """(gRPC code, ErrorInfo reason) of each refusal, by raw protobuf calls."""
    push = a2a_pb2.TaskPushNotificationConfig(tenant=tenant, task_id="t", url="https://x.test/")
    calls: dict[str, Any] = {
        "push": lambda a2a: a2a.CreateTaskPushNotificationConfig(push, metadata=VERSION),
        "stream": lambda a2a: list(
            a2a.SendStreamingMessage(send_request("hi", tenant=tenant), metadata=VERSION)
        ),
        "version": lambda a2a: a2a.SendMessage(
            send_request("hi", tenant=tenant), metadata=(("a2a-version", "99.0"),)
        ),
    }
    refused = {}
    with stub(server.grpc_target) as a2a:
        task = a2a.SendMessage(send_request("hi", tenant=tenant), metadata=VERSION).task
        calls["cancel"] = lambda a2a: a2a.CancelTask(
            a2a_pb2.CancelTaskRequest(tenant=tenant, id=task.id), metadata=VERSION
        )
        for name, call in calls.items():
            with pytest.raises(grpc.RpcError) as caught:
                call(a2a)
            refused[name] = (caught.value.code().name, error_info(status_of(caught.value)).reason)
    return refused


def test_grpc_codes_follow_the_agents_table(server: ServerThread) -> None:
    reasons = {
        "push": "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "stream": "UNSUPPORTED_OPERATION",
        "version": "VERSION_NOT_SUPPORTED",
        "cancel": "TASK_NOT_CANCELABLE",
    }
    old = {name: ("UNIMPLEMENTED", reason) for name, reason in reasons.items()}
    new = {name: ("FAILED_PRECONDITION", reason) for name, reason in reasons.items()}
    old["cancel"] = new["cancel"]  # FAILED_PRECONDITION in both specifications
    assert grpc_refusals(server, OLD) == old
    assert grpc_refusals(server, NEW) == new


def rest_cancel_of_a_completed_task(server: ServerThread, agent: str) -> tuple[int, str, str]:
    """(HTTP status, body `status`, ErrorInfo reason) of a CancelTask on a completed task."""
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    with httpx.Client(base_url=server.agent_url(agent), headers=HEADERS, timeout=5) as http:
        task = http.post("/message:send", json={"message": message}).json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        response = http.post(f"/tasks/{task['id']}:cancel")
    error = response.json()["error"]
    assert error["code"] == response.status_code
    return response.status_code, error["status"], error["details"][0]["reason"]


def test_rest_statuses_follow_the_agents_table(server: ServerThread) -> None:
    assert rest_cancel_of_a_completed_task(server, OLD) == (
        409,
        "FAILED_PRECONDITION",
        "TASK_NOT_CANCELABLE",
    )
    assert rest_cancel_of_a_completed_task(server, NEW) == (
        400,
        "FAILED_PRECONDITION",
        "TASK_NOT_CANCELABLE",
    )
    with httpx.Client(base_url=server.agent_url(OLD), headers=HEADERS, timeout=5) as http:
        refused = http.post("/message:stream", json={"message": {}})
    assert (refused.status_code, refused.json()["error"]["status"]) == (400, "UNIMPLEMENTED")


def test_the_cards_do_not_show_the_table(server: ServerThread) -> None:
    public = httpx.get(server.card_url(OLD), timeout=5)
    extended = httpx.get(server.agent_url(OLD) + "/extendedAgentCard", headers=HEADERS, timeout=5)
    assert extended.json()["description"] == "The extended card."
    for card in (public, extended):
        assert card.status_code == 200 and "errorTable" not in card.text
    assert public.json().keys() == httpx.get(server.card_url(NEW), timeout=5).json().keys()


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_official_client_raises_the_same_typed_errors_from_either_table(
    server: ServerThread, binding: str, request: pytest.FixtureRequest
) -> None:
    kit = Kit(server, binding, request.node.name)

    async def scenario(client: Client) -> list[type[Exception]]:
        task = await send_task(client, kit.message("hi"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        raised: list[type[Exception]] = []
        calls = [
            lambda: client.cancel_task(CancelTaskRequest(id=task.id)),
            lambda: send_task(client, kit.message("again", task_id=task.id)),
            lambda: client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, url="https://x.test/hook")
            ),
        ]
        for call in calls:
            try:
                await call()
            except Exception as exc:  # which class the client raises is what is tested
                raised.append(type(exc))
        return raised

    expected = [
        TaskNotCancelableError,
        UnsupportedOperationError,
        PushNotificationNotSupportedError,
    ]
    assert kit.run(OLD, scenario) == expected
    assert kit.run(NEW, scenario) == expected
