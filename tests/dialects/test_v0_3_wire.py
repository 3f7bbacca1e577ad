"""`agent.v03`: a cassette says how its agent speaks A2A v0.3 where agents differ (`final` at an
interrupted stop, JSON-RPC `data: null`, REST errors as google.rpc.Status), and both v0.3
bindings answer so; without it they answer as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mockagent.server.app import create_app

CASSETTE = """\
version: 1
agent:
  name: asker
  description: Asks back.
  skills: [{id: ask, name: Ask, description: Asks back.}]
  capabilities: {streaming: true}
{v03}
clock: {start: 2026-10-06T09:00:00Z}
interactions:
  - name: wait
    match: {text: {startswith: wait}}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which one?
"""
SDK_WAY = "  v03: {interruptedFinal: false, errorData: 'null', restErrors: status}\n"
V03 = {"Content-Type": "application/json", "A2A-Version": "0.3"}


def client(tmp_path: Path, v03: str) -> Any:
    path = tmp_path / "asker.yaml"
    path.write_text(CASSETTE.replace("{v03}\n", v03))
    return create_app(path, pace="instant").test_client()


def rpc(app: Any, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
    return app.post("/", data=json.dumps(body), headers={"Content-Type": "application/json"})


def sse(response: Any) -> list[dict[str, Any]]:
    text = response.get_data(as_text=True)
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def stream_rpc(app: Any) -> dict[str, Any]:
    message = {"kind": "message", "messageId": "m1", "role": "user", "parts": []}
    message["parts"] = [{"kind": "text", "text": "wait for me"}]
    events = sse(rpc(app, "message/stream", {"message": message}))
    return events[-1]["result"]


def stream_rest(app: Any) -> dict[str, Any]:
    body = {"request": {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "wait"}]}}
    events = sse(app.post("/v1/message:stream", data=json.dumps(body), headers=V03))
    return events[-1]["statusUpdate"]


@pytest.mark.parametrize("v03,final", [("", True), (SDK_WAY, False)])
def test_an_interrupted_stop_is_final_unless_the_agent_said_otherwise(tmp_path, v03, final):
    app = client(tmp_path, v03)
    last = stream_rpc(app)
    assert last["kind"] == "status-update" and last["status"]["state"] == "input-required"
    assert last["final"] is final
    rest = stream_rest(app)
    assert rest["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert rest.get("final", False) is final  # proto3 JSON leaves a false out


def test_a_detail_free_jsonrpc_error_gets_data_null(tmp_path):
    cassette = CASSETTE.replace(
        "interactions:\n",
        "interactions:\n  - name: refuse\n    match: {operation: GetTask}\n"
        "    reply: {error: {name: TaskNotFound, details: []}}\n",
    )
    for v03, null in (("", {}), (SDK_WAY, {"data": None})):
        path = tmp_path / "refuse.yaml"
        path.write_text(cassette.replace("{v03}\n", v03))
        error = rpc(create_app(path).test_client(), "tasks/get", {"id": "x"}).get_json()["error"]
        assert error == {"code": -32001, "message": "Task not found", **null}


def test_rest_errors_are_google_rpc_status_when_the_agent_answered_so(tmp_path):
    plain = client(tmp_path, "").get("/v1/tasks/nope", headers=V03)
    assert plain.status_code == 404
    assert plain.get_json()["type"] == "TaskNotFoundError"
    status = client(tmp_path, SDK_WAY).get("/v1/tasks/nope", headers=V03)
    assert status.status_code == 404
    error = status.get_json()["error"]
    assert error["code"] == 404 and error["status"] == "NOT_FOUND"
    assert error["details"][0]["reason"] == "TASK_NOT_FOUND"
