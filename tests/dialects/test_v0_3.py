"""A2A v0.3 over JSON-RPC: slash method names on the same cassettes, answered in v0.3 shapes
(`kind`, lowercase states, `final`, `kind` parts), as reference/a2a.md §7 says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mockagent.server.app import create_app
from tests.helpers.dialects import SMALL

RUN = "Run the tests at 9f3c2e1"


def v03_message(text: str, message_id: str = "m-1", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": message_id,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


def call(
    client,
    method: str,
    params: Any = None,
    *,
    path: str = "/test-runner/",
    headers: dict[str, str] | None = None,
) -> Any:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": "r1", "method": method}
    if params is not None:
        body["params"] = params
    return client.post(
        path, data=json.dumps(body), headers={"Content-Type": "application/json", **(headers or {})}
    )


def rpc(client, method: str, params: Any = None, **kwargs: Any) -> dict[str, Any]:
    response = call(client, method, params, **kwargs)
    assert response.status_code == 200, response.data
    assert response.headers["Content-Type"] == "application/json"
    reply = response.get_json()
    assert reply["id"] == "r1"
    return reply


def events_of(response) -> list[dict[str, Any]]:
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    text = response.get_data(as_text=True)
    return [
        json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")
    ]


def assert_v03_parts(parts: list[dict[str, Any]]) -> None:
    for part in parts:
        assert part["kind"] in ("text", "file", "data"), part


def test_message_send_blocks_and_returns_the_bare_task(kit):
    reply = rpc(
        kit, "message/send", {"message": v03_message(RUN), "configuration": {"blocking": True}}
    )
    task = reply["result"]
    assert task["kind"] == "task" and "task" not in task
    assert task["status"]["state"] == "completed"
    assert (
        task["status"]["message"]["role"] == "agent"
        and task["status"]["message"]["kind"] == "message"
    )
    assert task["status"]["message"]["parts"] == [{"kind": "text", "text": "1 failed, 11 passed"}]
    [log, summary] = task["artifacts"]
    assert log["artifactId"] == "test-log" and len(log["parts"]) == 5
    assert_v03_parts(log["parts"])
    assert summary["parts"] == [{"kind": "data", "data": {"passed": 11, "failed": 1}}]
    assert task["history"][0]["role"] == "user" and task["history"][0]["kind"] == "message"
    assert "TASK_STATE" not in json.dumps(task) and "ROLE_" not in json.dumps(task)


def test_non_blocking_send_then_tasks_get_polls(kit):
    task = rpc(
        kit, "message/send", {"message": v03_message(RUN), "configuration": {"blocking": False}}
    )["result"]
    assert task["status"]["state"] == "submitted"
    got = rpc(kit, "tasks/get", {"id": task["id"], "historyLength": 0})["result"]
    assert got["kind"] == "task" and got["id"] == task["id"]
    assert got["status"]["state"] == "working" and "history" not in got


def test_the_version_header_may_be_missing_or_0_3_but_not_1_0(kit):
    for headers in ({}, {"A2A-Version": "0.3"}, {"a2a-version": "0.3.0"}):
        assert "result" in rpc(kit, "message/send", {"message": v03_message(RUN)}, headers=headers)
    error = rpc(kit, "message/send", {"message": v03_message(RUN)}, headers={"A2A-Version": "1.0"})[
        "error"
    ]
    assert error["code"] == -32603  # VersionNotSupported is newer than v0.3
    error = rpc(kit, "SendMessage", {"message": v03_message(RUN)}, headers={"A2A-Version": "0.3"})[
        "error"
    ]
    assert error["code"] == -32009  # a v1.0 method with a v0.3 header, as before


def test_message_stream_has_kinds_and_final(kit):
    events = [
        e["result"] for e in events_of(call(kit, "message/stream", {"message": v03_message(RUN)}))
    ]
    assert [e["kind"] for e in events] == ["task", "status-update"] + ["artifact-update"] * 6 + [
        "status-update"
    ]
    assert events[0]["status"]["state"] == "submitted"
    assert [e["final"] for e in events if e["kind"] == "status-update"] == [False, True]
    assert events[-1]["status"]["state"] == "completed"
    chunks = [e for e in events if e["kind"] == "artifact-update"]
    assert [(c["append"], c["lastChunk"]) for c in chunks[:5]] == [
        (False, False),
        (True, False),
        (True, False),
        (True, False),
        (True, True),
    ]
    assert all(e["taskId"] == events[0]["id"] for e in events[1:])


def test_stream_errors_are_sse_too(kit):
    [event] = events_of(call(kit, "tasks/resubscribe", {"id": "no-such-task"}))
    assert event["error"]["code"] == -32001 and event["id"] == "r1"
    [event] = events_of(call(kit, "message/stream", {"message": {"kind": "message"}}))
    assert event["error"]["code"] == -32602


def test_resubscribe_starts_with_the_task(kit):
    task = rpc(
        kit, "message/send", {"message": v03_message(RUN), "configuration": {"blocking": False}}
    )["result"]
    events = [e["result"] for e in events_of(call(kit, "tasks/resubscribe", {"id": task["id"]}))]
    assert events[0]["kind"] == "task" and events[0]["id"] == task["id"]
    assert events[-1]["kind"] == "status-update" and events[-1]["final"] is True
    assert events[-1]["status"]["state"] == "completed"


def test_v03_parts_reach_the_matchers_as_v1_parts(kit):
    message = v03_message(RUN)
    message["parts"] += [
        {"kind": "file", "file": {"bytes": "dGNr", "mimeType": "text/plain", "name": "a.txt"}},
        {"kind": "file", "file": {"uri": "https://example.com/x.png"}},
        {"kind": "data", "data": {"k": 1}},
    ]
    task = rpc(kit, "message/send", {"message": message})["result"]
    assert task["status"]["state"] == "completed"
    assert task["history"][0]["parts"][1:] == [
        {"kind": "file", "file": {"bytes": "dGNr", "mimeType": "text/plain", "name": "a.txt"}},
        {"kind": "file", "file": {"uri": "https://example.com/x.png"}},
        {"kind": "data", "data": {"k": 1}},
    ]


def test_cancel_and_errors_keep_v03_codes(kit):
    task = rpc(
        kit, "message/send", {"message": v03_message(RUN), "configuration": {"blocking": False}}
    )["result"]
    canceled = rpc(kit, "tasks/cancel", {"id": task["id"]})["result"]
    assert canceled["kind"] == "task" and canceled["status"]["state"] == "canceled"
    assert rpc(kit, "tasks/cancel", {"id": task["id"]})["error"]["code"] == -32002
    assert rpc(kit, "tasks/get", {"id": "nope"})["error"]["code"] == -32001
    assert rpc(kit, "message/send", {})["error"]["code"] == -32602


def test_push_config_crud_in_v03_shapes(kit):
    task = rpc(kit, "message/send", {"message": v03_message(RUN)})["result"]
    config = {
        "id": "c1",
        "url": "http://example.com/hook",
        "token": "t",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
    }
    created = rpc(
        kit,
        "tasks/pushNotificationConfig/set",
        {"taskId": task["id"], "pushNotificationConfig": config},
    )["result"]
    assert created == {"taskId": task["id"], "pushNotificationConfig": config}
    got = rpc(
        kit,
        "tasks/pushNotificationConfig/get",
        {"id": task["id"], "pushNotificationConfigId": "c1"},
    )
    assert got["result"] == created
    assert rpc(kit, "tasks/pushNotificationConfig/list", {"id": task["id"]})["result"] == [created]
    deleted = rpc(
        kit,
        "tasks/pushNotificationConfig/delete",
        {"id": task["id"], "pushNotificationConfigId": "c1"},
    )
    assert "result" in deleted and deleted["result"] is None
    assert rpc(kit, "tasks/pushNotificationConfig/list", {"id": task["id"]})["result"] == []


@pytest.fixture
def small_v03(tmp_path: Path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL.replace("  tenant: projects/p/locations/l/apps/a\n", "  v03Card: true\n"))
    return create_app(path).test_client()


def test_direct_message_reply(small_v03):
    reply = rpc(small_v03, "message/send", {"message": v03_message("Are you there?")}, path="/")
    message = reply["result"]
    assert message["kind"] == "message" and message["role"] == "agent"
    assert message["parts"] == [{"kind": "text", "text": "Yes."}]


def test_extended_card_has_the_v03_fields(small_v03):
    card = rpc(small_v03, "agent/getAuthenticatedExtendedCard", path="/")["result"]
    assert card["protocolVersion"] == "0.3.0" and card["url"]
    assert card["supportsAuthenticatedExtendedCard"] is True
    assert [s["id"] for s in card["skills"]] == ["admin"]


def test_the_v03_card_mode_is_opt_in(kit, small_v03):
    plain = kit.get("/test-runner/.well-known/agent-card.json").get_json()
    assert not {"url", "preferredTransport", "protocolVersion", "additionalInterfaces"} & set(plain)
    card = small_v03.get("/.well-known/agent-card.json").get_json()
    assert card["protocolVersion"] == "0.3.0" and card["preferredTransport"] == "JSONRPC"
    assert card["url"] == card["supportedInterfaces"][0]["url"]
    assert card["additionalInterfaces"] == [
        {"url": card["url"], "transport": "JSONRPC"},
        {"url": card["url"], "transport": "HTTP+JSON"},
    ]  # REST: /v1/
    assert card["supportsAuthenticatedExtendedCard"] is True
    assert [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
        ("HTTP+JSON", "0.3"),
    ]
