"""A2A v0.3 over HTTP+JSON: the `/v1/...` routes in v0.3 *proto* JSON (`content` not `parts`,
`TASK_STATE_CANCELLED`, `final`), as reference/a2a.md §7 says; the `/v1` tenant collision; and
a2a-sdk 1.x's CompatRestTransport against the kit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mockagent.server.app import create_app
from mockagent.server.thread import serve_in_thread
from tests.helpers.dialects import SMALL
from tests.helpers.paths import KIT

RUN = "Run the tests at 9f3c2e1"
V03 = {"Content-Type": "application/json", "A2A-Version": "0.3"}


def proto_message(text: str, message_id: str = "m-1", **extra: Any) -> dict[str, Any]:
    """A v0.3 proto Message as a2a-sdk's compat transport sends it (proto field names)."""
    return {"message_id": message_id, "role": "ROLE_USER", "content": [{"text": text}], **extra}


def post(client, path: str, body: Any = None, headers: dict[str, str] | None = None):
    data = "" if body is None else json.dumps(body)
    return client.post(f"/test-runner{path}", data=data, headers={**V03, **(headers or {})})


def events_of(response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.data
    assert response.headers["Content-Type"].startswith("text/event-stream")
    text = response.get_data(as_text=True)
    return [
        json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")
    ]


def assert_v03_proto(value: Any) -> None:
    """No v0.3 JSON-RPC or v1.0-only shapes: no `kind`, no `parts` in messages, no lowercase
    states."""
    text = json.dumps(value)
    assert '"kind"' not in text and 'TASK_STATE_CANCELED"' not in text, text
    for state in ("submitted", "working", "completed"):
        assert f'"state": "{state}"' not in text


def test_message_send_blocks_and_answers_in_v03_proto_json(kit):
    response = post(
        kit,
        "/v1/message:send",
        {"request": proto_message(RUN), "configuration": {"blocking": True}},
    )
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    body = response.get_json()
    assert list(body) == ["task"]
    task = body["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["role"] == "ROLE_AGENT"
    assert task["status"]["message"]["content"] == [{"text": "1 failed, 11 passed"}]
    assert "parts" not in task["status"]["message"]
    [log, summary] = task["artifacts"]
    assert log["artifactId"] == "test-log" and len(log["parts"]) == 5
    assert summary["parts"] == [{"data": {"data": {"passed": 11, "failed": 1}}}]
    assert task["history"][0]["role"] == "ROLE_USER" and task["history"][0]["content"] == [
        {"text": RUN}
    ]
    assert_v03_proto(body)


def test_get_and_cancel_say_task_state_cancelled(kit):
    # proto3 JSON leaves out `blocking: false`: a configuration without it is non-blocking
    task = post(
        kit, "/v1/message:send", {"message": proto_message(RUN), "configuration": {}}
    ).get_json()["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    got = kit.get(
        f"/test-runner/v1/tasks/{task['id']}?historyLength=0", headers={"A2A-Version": "0.3"}
    )
    assert got.status_code == 200 and got.get_json()["id"] == task["id"]
    assert (
        got.get_json()["status"]["state"] == "TASK_STATE_WORKING"
        and "history" not in got.get_json()
    )
    canceled = post(
        kit, f"/v1/tasks/{task['id']}:cancel", {"name": f"tasks/{task['id']}"}
    ).get_json()
    assert canceled["id"] == task["id"] and canceled["status"]["state"] == "TASK_STATE_CANCELLED"
    again = post(kit, f"/v1/tasks/{task['id']}:cancel")
    assert again.status_code == 400 and again.get_json()["type"] == "TaskNotCancelableError"


def test_errors_carry_the_sdk_error_type(kit):
    missing = kit.get("/test-runner/v1/tasks/no-such-task")  # no header at all: v0.3 by the spec
    assert missing.status_code == 404
    assert missing.get_json() == {
        "message": missing.get_json()["message"],
        "type": "TaskNotFoundError",
    }
    invalid = post(kit, "/v1/message:send", {})
    assert invalid.status_code == 400 and invalid.get_json()["type"] == "InvalidParamsError"
    wrong_verb = kit.delete("/test-runner/v1/message:send")
    assert wrong_verb.status_code == 405


def test_stream_has_final_and_proto_events(kit):
    events = events_of(post(kit, "/v1/message:stream", {"request": proto_message(RUN)}))
    assert [next(iter(e)) for e in events] == ["task", "statusUpdate"] + ["artifactUpdate"] * 6 + [
        "statusUpdate"
    ]
    assert events[-1]["statusUpdate"]["final"] is True
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "final" not in events[1]["statusUpdate"]  # proto3: false is left out
    assert events[2]["artifactUpdate"]["artifact"]["artifactId"] == "test-log"
    assert_v03_proto(events)


def test_subscribe_by_get_and_post(kit):
    task = post(
        kit, "/v1/message:send", {"request": proto_message(RUN), "configuration": {}}
    ).get_json()["task"]
    events = events_of(
        kit.get(f"/test-runner/v1/tasks/{task['id']}:subscribe", headers={"A2A-Version": "0.3"})
    )
    assert "task" in events[0] and events[-1]["statusUpdate"]["final"] is True
    finished = post(kit, f"/v1/tasks/{task['id']}:subscribe")
    assert (
        finished.status_code == 400 and finished.get_json()["type"] == "UnsupportedOperationError"
    )


def test_push_config_crud_in_v03_shapes(kit):
    task = post(
        kit, "/v1/message:send", {"request": proto_message(RUN), "configuration": {}}
    ).get_json()["task"]
    base = f"/v1/tasks/{task['id']}/pushNotificationConfigs"
    inner = {
        "id": "cfg-1",
        "url": "https://example.com/hook",
        "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
    }
    body = {
        "parent": f"tasks/{task['id']}",
        "config_id": "cfg-1",
        "config": {"push_notification_config": inner},
    }
    created = post(kit, base, body)
    assert created.status_code == 200, created.data
    expected = {
        "name": f"tasks/{task['id']}/pushNotificationConfigs/cfg-1",
        "pushNotificationConfig": inner,
    }
    assert created.get_json() == expected
    headers = {"A2A-Version": "0.3"}
    assert kit.get(f"/test-runner{base}/cfg-1", headers=headers).get_json() == expected
    assert kit.get(f"/test-runner{base}", headers=headers).get_json() == {"configs": [expected]}
    assert kit.delete(f"/test-runner{base}/cfg-1", headers=headers).get_json() == {}
    assert kit.get(f"/test-runner{base}", headers=headers).get_json() == {"configs": []}


def test_card_route(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    client = create_app(path).test_client()
    card = client.get("/v1/card", headers={"A2A-Version": "0.3"})
    assert card.status_code == 200, card.data
    assert (
        card.get_json()["protocolVersion"] == "0.3.0"
        and card.get_json()["preferredTransport"] == "JSONRPC"
    )
    assert [s["id"] for s in card.get_json()["skills"]] == ["admin"]  # the extended card's


def test_v1_prefix_with_a_1_0_header_is_a_tenant(tmp_path):
    """`/v1/message:send` with `A2A-Version: 1.0` is a v1.0 call with tenant `v1`; a longer
    prefix (Google CES) is a tenant whatever the header."""
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    client = create_app(path).test_client()
    v10 = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Is it?"}]}
    answer = client.post(
        "/v1/message:send",
        data=json.dumps({"message": v10}),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    assert answer.status_code == 200 and answer.get_json()["message"]["parts"] == [{"text": "Yes."}]
    ces = client.post(
        "/v1/projects/p/locations/l/apps/a/message:send",
        data=json.dumps({"message": v10}),
        headers={"Content-Type": "application/json"},
    )
    assert ces.status_code == 200 and ces.get_json()["message"]["parts"] == [{"text": "Yes."}]
    v03 = client.post(
        "/v1/message:send",
        data=json.dumps({"request": proto_message("Is it?")}),
        headers={"Content-Type": "application/json"},
    )
    assert v03.status_code == 200 and v03.get_json()["message"]["content"] == [{"text": "Yes."}]


# --- a2a-sdk 1.x CompatRestTransport ----------------------------------------------------------


@pytest.fixture(scope="module")
def live_kit() -> Iterator[str]:
    with serve_in_thread(KIT, pace="instant") as server:
        yield server.agent_url("test-runner")


def _compat_client(url: str, streaming: bool):
    from a2a.client import A2ACardResolver, ClientConfig, create_client
    from a2a.types import AgentInterface

    async def make():
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, url).get_agent_card()
        del card.supported_interfaces[:]
        card.supported_interfaces.append(
            AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="0.3")
        )
        return await create_client(
            card, ClientConfig(streaming=streaming, supported_protocol_bindings=["HTTP+JSON"])
        )

    return make


def test_a2a_sdk_compat_rest_transport(live_kit):
    from a2a.types import (
        CancelTaskRequest,
        GetTaskRequest,
        Message,
        Part,
        Role,
        SendMessageConfiguration,
        SendMessageRequest,
        SubscribeToTaskRequest,
        TaskNotFoundError,
        TaskState,
    )

    def message(text: str, n: int) -> Message:
        return Message(message_id=f"rest-compat-{n}", role=Role.ROLE_USER, parts=[Part(text=text)])

    async def scenario():
        async with await _compat_client(live_kit, streaming=False)() as client:
            assert type(client._transport).__name__ == "CompatRestTransport"  # noqa: SLF001
            [sent] = [
                r async for r in client.send_message(SendMessageRequest(message=message(RUN, 1)))
            ]
            got = await client.get_task(GetTaskRequest(id=sent.task.id))
            config = SendMessageConfiguration(return_immediately=True)
            [started] = [
                r
                async for r in client.send_message(
                    SendMessageRequest(message=message(RUN, 2), configuration=config)
                )
            ]
            canceled = await client.cancel_task(CancelTaskRequest(id=started.task.id))
            with pytest.raises(TaskNotFoundError):
                await client.get_task(GetTaskRequest(id="no-such-task"))
        async with await _compat_client(live_kit, streaming=True)() as client:
            streamed = [
                r async for r in client.send_message(SendMessageRequest(message=message(RUN, 3)))
            ]
            [fresh] = [
                r
                async for r in (await _compat_client(live_kit, streaming=False)()).send_message(
                    SendMessageRequest(message=message(RUN, 4), configuration=config)
                )
            ]
            resubscribed = [
                e async for e in client.subscribe(SubscribeToTaskRequest(id=fresh.task.id))
            ]
        return sent.task, got, started.task, canceled, streamed, resubscribed

    sent, got, started, canceled, streamed, resubscribed = asyncio.run(scenario())
    assert sent.status.state == TaskState.TASK_STATE_COMPLETED
    assert [a.artifact_id for a in sent.artifacts] == ["test-log", "summary"]
    assert sent.status.message.parts[0].text == "1 failed, 11 passed"
    assert got.id == sent.id and got.history[0].role == Role.ROLE_USER
    assert started.status.state == TaskState.TASK_STATE_SUBMITTED
    assert canceled.id == started.id and canceled.status.state == TaskState.TASK_STATE_CANCELED
    kinds = [e.WhichOneof("payload") for e in streamed]
    assert kinds == ["task", "status_update"] + ["artifact_update"] * 6 + ["status_update"]
    assert streamed[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert resubscribed[0].WhichOneof("payload") == "task"
    assert resubscribed[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
