"""v0.3 is translated at the edge of each binding (`v0_3.JsonRpcEdge`, `v0_3_rest.RestEdge`): a
v1.0 call, answered or refused, never runs v0.3 code. Every function and class of the v0.3
modules is replaced by a tripwire while v1.0 calls of every operation, errors included, are
served over JSON-RPC and HTTP+JSON; the v0.3 calls at the end show that the tripwires are live."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from mockagent.dialects.a2a import v0_3, v0_3_rest
from mockagent.server.app import create_app
from tests.helpers.dialects import user_message

AGENT = """\
version: 1
agent:
  name: edge
  description: Every operation of v1.0.
  capabilities: {streaming: true, pushNotifications: true, extendedAgentCard: true}
  skills: [{id: s, name: S, description: A skill.}]
  extendedCard: {skills: [{id: x, name: X, description: Extended only., tags: []}]}
interactions:
  - name: work
    match: {text: {startswith: work}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
  - name: stream
    match: {text: {startswith: stream}}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
"""
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}
MODULES = (v0_3, v0_3_rest)


@pytest.fixture
def entered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of v0.3 code a call ran: each one raises too, so no answer comes from it."""
    names: list[str] = []
    ours = {module.__name__ for module in MODULES}

    def tripwire(name: str) -> Callable[..., Any]:
        def tripped(*_: Any, **__: Any) -> Any:
            names.append(name)
            raise AssertionError(f"the v1.0 path ran v0.3's {name}")

        return tripped

    for module in MODULES:
        for name, value in list(vars(module).items()):
            if callable(value) and getattr(value, "__module__", None) in ours:
                monkeypatch.setattr(module, name, tripwire(f"{module.__name__}.{name}"))
    return names


@pytest.fixture
def client(tmp_path: Path) -> FlaskClient:
    path = tmp_path / "edge.yaml"
    path.write_text(AGENT)
    return create_app(path, pace="instant").test_client()


def _rpc(client: FlaskClient, method: str, params: Any = None, **headers: str) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = client.post("/", data=json.dumps(body), headers={**V1, **headers})
    data = response.get_data()  # a stream too, to its end
    if response.mimetype == "text/event-stream":
        return data
    return response.get_json()


def _rest(client: FlaskClient, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body)
    response = client.open(path, method=method, data=data, headers=V1)
    response.get_data()
    return response.status_code


def test_jsonrpc_v1_calls_never_enter_v0_3(client: FlaskClient, entered: list[str]) -> None:
    send = {"message": user_message("work"), "configuration": {"returnImmediately": True}}
    task = _rpc(client, "SendMessage", send)["result"]["task"]["id"]
    config = {"taskId": task, "id": "c", "url": "https://example.com/hook"}
    answers = [
        _rpc(client, "GetTask", {"id": task}),
        _rpc(client, "ListTasks", {}),
        _rpc(client, "CreateTaskPushNotificationConfig", config),
        _rpc(client, "GetTaskPushNotificationConfig", {"taskId": task, "id": "c"}),
        _rpc(client, "ListTaskPushNotificationConfigs", {"taskId": task}),
        _rpc(client, "DeleteTaskPushNotificationConfig", {"taskId": task, "id": "c"}),
        _rpc(client, "CancelTask", {"id": task}),
        _rpc(client, "GetExtendedAgentCard", {}),
        _rpc(client, "SendStreamingMessage", {"message": user_message("stream")}),
        _rpc(client, "SubscribeToTask", {"id": task}),
        # errors: no task, no method, params no object, no match, another version
        _rpc(client, "GetTask", {"id": "none"}),
        _rpc(client, "SubscribeToTask", {"id": "none"}),
        _rpc(client, "tasks/nothing", {}),
        _rpc(client, "GetTask", [1]),
        _rpc(client, "SendMessage", {"message": user_message("nothing matches")}),
        _rpc(client, "GetTask", {"id": task}, **{"A2A-Version": "0.3"}),
    ]
    assert entered == []
    assert answers[7]["result"]["skills"][0]["id"] == "x"
    assert b"TASK_STATE_COMPLETED" in answers[8]
    codes = [answer["error"]["code"] for answer in answers[10:]]  # each refused, by v1.0's table
    assert {-32001, -32601, -32602} <= set(codes) and len(codes) == 6
    malformed = client.post("/", data=b"{", headers=V1).get_json()
    assert malformed["error"]["code"] == -32700 and entered == []


def test_rest_v1_calls_never_enter_v0_3(client: FlaskClient, entered: list[str]) -> None:
    body = {"message": user_message("work"), "configuration": {"returnImmediately": True}}
    response = client.post("/message:send", data=json.dumps(body), headers=V1)
    task = response.get_json()["task"]["id"]
    statuses = [
        _rest(client, "GET", f"/tasks/{task}"),
        _rest(client, "GET", "/tasks"),
        _rest(
            client,
            "POST",
            f"/tasks/{task}/pushNotificationConfigs",
            {"id": "c", "url": "https://example.com/h"},
        ),
        _rest(client, "GET", f"/tasks/{task}/pushNotificationConfigs/c"),
        _rest(client, "GET", f"/tasks/{task}/pushNotificationConfigs"),
        _rest(client, "DELETE", f"/tasks/{task}/pushNotificationConfigs/c"),
        _rest(client, "POST", f"/tasks/{task}:cancel"),
        _rest(client, "GET", "/extendedAgentCard"),
        _rest(client, "POST", "/message:stream", {"message": user_message("stream")}),
        _rest(client, "GET", f"/tasks/{task}:subscribe"),
        # `v1` is a tenant for a v1.0 call; then errors: no task, wrong verb, no route, no JSON
        _rest(client, "GET", f"/v1/tasks/{task}"),
        _rest(client, "GET", "/tasks/none"),
        _rest(client, "PUT", "/tasks/none"),
        _rest(client, "GET", "/nothing/here"),
        _rest(client, "POST", "/message:send", "not an object"),
    ]
    assert entered == []
    # the subscription comes after the cancel: a canceled task's refusal (400)
    assert statuses == [200] * 9 + [400, 200, 404, 405, 404, 400]


def test_the_tripwires_are_live_for_v0_3_calls(client: FlaskClient, entered: list[str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}
    assert client.post("/", json=body).status_code == 500  # the tripwire, caught by the server
    assert client.get("/v1/tasks/t").status_code == 500
    assert len(entered) == 2  # each call tripped on the first v0.3 code it ran
