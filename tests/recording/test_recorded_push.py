"""Push-notification config calls through the recording proxy, replayed as the agent answered.

The upstream is the a2a-sdk agent (tests/helpers/upstream.py). On replay the engine keeps the
configs a client creates on a replayed task; what the recording must add is where the agent
refused a call, with its error, message and details. Tokens never reach the cassette.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.server.thread import serve_in_thread
from tests.helpers.recording import BINDINGS, HEADERS, HTTP, message, recording
from tests.helpers.upstream import serve_upstream

TOKEN = "tok-secret-9999"
CONFIG = {"id": "cfg-1", "url": "http://127.0.0.1:9/hook", "token": TOKEN}


class PushClient:
    """The four push-config operations over one binding; answers as (ok, result or error)."""

    def __init__(self, url: str, binding: str) -> None:
        self.url, self.binding = url.rstrip("/"), binding

    def _call(self, method: str, params: dict[str, Any], verb: str, path: str) -> Any:
        if self.binding == "JSONRPC":
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            answer = HTTP.post(self.url + "/", json=body, headers=HEADERS).json()
            return ("error", answer["error"]) if "error" in answer else ("ok", answer["result"])
        payload = None if verb in ("GET", "DELETE") else params
        response = HTTP.request(verb, self.url + path, json=payload, headers=HEADERS)
        body = response.json()
        return ("error", body["error"]) if response.status_code >= 400 else ("ok", body)

    def task(self) -> str:
        """A task waiting for input, to configure push notifications on."""
        params = {"message": message("please ask me")}
        _, result = self._call("SendMessage", params, "POST", "/message:send")
        return str(result["task"]["id"])

    def create(self, task_id: str) -> Any:
        path = f"/tasks/{task_id}/pushNotificationConfigs"
        params = {"taskId": task_id, **CONFIG} if self.binding == "JSONRPC" else CONFIG
        return self._call("CreateTaskPushNotificationConfig", params, "POST", path)

    def get(self, task_id: str, config_id: str) -> Any:
        path = f"/tasks/{task_id}/pushNotificationConfigs/{config_id}"
        params = {"taskId": task_id, "id": config_id}
        return self._call("GetTaskPushNotificationConfig", params, "GET", path)

    def list(self, task_id: str) -> Any:
        path = f"/tasks/{task_id}/pushNotificationConfigs"
        return self._call("ListTaskPushNotificationConfigs", {"taskId": task_id}, "GET", path)

    def delete(self, task_id: str, config_id: str) -> Any:
        path = f"/tasks/{task_id}/pushNotificationConfigs/{config_id}"
        params = {"taskId": task_id, "id": config_id}
        return self._call("DeleteTaskPushNotificationConfig", params, "DELETE", path)


def conversation(client: PushClient) -> list[Any]:
    """Create, get and list a config, get one that never existed, delete the config."""
    task_id = client.task()
    answers = [
        client.create(task_id),
        client.get(task_id, "cfg-1"),
        client.list(task_id),
        client.get(task_id, "cfg-missing"),
        client.delete(task_id, "cfg-1"),
    ]
    return [view(answer, task_id) for answer in answers]


def view(answer: tuple[str, Any], task_id: str) -> Any:
    """An answer without the task id (re-minted on replay). A List keeps its configs only: the
    engine also writes an empty `nextPageToken` that a2a-sdk leaves out (not the recording's to
    change). Errors: code, message and the ErrorInfo reason."""
    how, body = answer
    if how == "error":
        details = body.get("data") or body.get("details") or []
        return ("error", body["code"], body["message"], [d.get("reason") for d in details])
    if body is None or body == {}:
        return ("ok", {})
    if "configs" in body:
        return ("ok", [view(("ok", c), task_id)[1] for c in body["configs"]])
    return (
        "ok",
        {k: v for k, v in body.items() if k != "taskId"} | {"task": body["taskId"] == task_id},
    )


@pytest.mark.parametrize("binding", BINDINGS)
def test_push_config_calls_replay_as_the_agent_answered(tmp_path: Path, binding: str) -> None:
    path = tmp_path / "push.yaml"
    with serve_upstream() as upstream, recording(upstream.url, path) as rec:
        live = conversation(PushClient(rec.url, binding))
        rec.finish()
    assert live[3][:2] == ("error", -32001 if binding == "JSONRPC" else 404)
    assert live[4] == ("ok", {})  # a JSON-RPC `result: null` goes through as the agent sent it
    assert TOKEN not in path.read_text()
    with serve_in_thread(path) as server:
        replayed = conversation(PushClient(server.url, binding))
    assert replayed == live


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_push_config_refusal_replays_with_the_agents_details(
    tmp_path: Path, binding: str
) -> None:
    path = tmp_path / "push.yaml"
    with serve_upstream() as upstream, recording(upstream.url, path) as rec:
        client = PushClient(rec.url, binding)
        live = client.get(client.task(), "cfg-missing")
        rec.finish()
    with serve_in_thread(path) as server:
        client = PushClient(server.url, binding)
        replayed = client.get(client.task(), "cfg-missing")
    assert live[0] == "error"
    details = live[1]["data" if binding == "JSONRPC" else "details"]
    assert details[0]["metadata"] == {}  # a2a-sdk's ErrorInfo, not quite mockagent's own
    assert replayed == live  # the whole error: code, message, every detail as sent
    (refusal,) = [
        i
        for i in yaml.safe_load(path.read_text())["interactions"]
        if i["match"].get("operation") == "GetTaskPushNotificationConfig"
    ]
    assert refusal["reply"]["error"]["details"] == details
