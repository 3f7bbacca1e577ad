"""CancelTask through the recording proxy, replayed as the agent answered it (issue 17).

Three agents refuse and accept cancels differently: the a2a-sdk agent ends a task with a status
message ("Canceled") and refuses with ErrorInfo `metadata: {}`; the quirky agent ends it bare and
refuses with its own text ("Task is done") and no metadata; mockagent as upstream names the task
in a refusal its cassette scripts. The replay must answer each cancel as recorded, not as its
own task store would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.lint.run import lint
from mockagent.server.thread import serve_in_thread
from tests.helpers.quirky_app import serve_quirky
from tests.helpers.recording import BINDINGS, HEADERS, HTTP, message, recording, upstream_agent
from tests.helpers.upstream import serve_upstream

Answer = tuple[int, Any]  # HTTP status, JSON body


def call(url: str, binding: str, method: str, params: dict[str, Any]) -> Answer:
    """One A2A call over `binding`: (HTTP status, the result or the whole error object)."""
    if binding == "JSONRPC":
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = HTTP.post(url.rstrip("/") + "/", json=body, headers=HEADERS)
        payload = response.json()
        return response.status_code, payload.get("result", payload.get("error"))
    path = "/message:send" if method == "SendMessage" else f"/tasks/{params['id']}:cancel"
    response = HTTP.post(url.rstrip("/") + path, json=params, headers=HEADERS)
    payload = response.json()
    return response.status_code, payload.get("error", payload)


def ask_then_cancel_twice(url: str, binding: str, text: str = "ask me") -> list[Answer]:
    """A task waiting for input, canceled, then canceled again (refused: it has ended)."""
    status, sent = call(url, binding, "SendMessage", {"message": message(text)})
    assert status == 200, sent
    task_id = sent["task"]["id"]
    cancels = [call(url, binding, "CancelTask", {"id": task_id}) for _ in range(2)]
    return [without_ids(answer, task_id) for answer in cancels]


def without_ids(answer: Answer, task_id: str) -> Answer:
    """An answer as a client compares it across runs: ids, timestamps and the history left out
    (other tests own those), the task's id inside texts written `<task>`."""
    status, body = answer
    if isinstance(body.get("status"), dict):  # a Task
        said = (body["status"].get("message") or {}).get("parts")
        return status, {"state": body["status"]["state"], "said": said}
    return status, json.loads(json.dumps(body).replace(task_id, "<task>"))


def record_and_replay(
    serve: Callable[[], AbstractContextManager[Any]], tmp: Path, binding: str, text: str = "ask me"
) -> tuple[list[Answer], list[Answer], dict[str, Any]]:
    """(what the client saw live through the proxy, what it saw on replay, the cassette)."""
    path = tmp / "cancel.yaml"
    with serve() as agent, recording(agent.url, path) as rec:
        live = ask_then_cancel_twice(rec.url, binding, text)
        assert rec.finish() == path
    with serve_in_thread(path, pace="instant") as replay:
        again = ask_then_cancel_twice(replay.url, binding, text)
    assert [str(finding) for finding in lint(path)] == []  # it reads as a correct cassette
    return live, again, yaml.safe_load(path.read_text())


def cancels(cassette: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in cassette["interactions"] if i["match"].get("operation") == "CancelTask"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_a2a_sdk_cancel_replays_its_status_message_and_error_details(
    tmp_path: Path, binding: str
) -> None:
    live, again, cassette = record_and_replay(serve_upstream, tmp_path, binding)
    accepted, refused = live
    assert accepted == (200, {"state": "TASK_STATE_CANCELED", "said": [{"text": "Canceled"}]})
    details = refused[1]["data" if binding == "JSONRPC" else "details"]
    assert details[0]["metadata"] == {}  # the a2a-sdk sends an empty ErrorInfo metadata
    assert again == live
    script, error = cancels(cassette)
    assert script["match"] == {"operation": "CancelTask", "task": {"from": "ask-me"}}
    assert script["reply"]["task"]["steps"] == [
        {"state": "TASK_STATE_CANCELED", "message": {"parts": [{"text": "Canceled"}]}}
    ]
    assert error["match"]["task"] == {"state": "TASK_STATE_CANCELED", "from": "ask-me"}
    # "Task cannot be canceled" is the kind's own message: only the details are written
    assert error["reply"] == {"error": {"name": "TaskNotCancelable", "details": details}}


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_refusal_replays_with_the_agents_text_and_no_metadata_of_mockagents(
    tmp_path: Path, binding: str
) -> None:
    live, again, cassette = record_and_replay(serve_quirky, tmp_path, binding)
    accepted, refused = live
    assert accepted == (200, {"state": "TASK_STATE_CANCELED", "said": None})
    assert refused[1]["message"] == "Task is done"
    assert "metadata" not in refused[1]["data" if binding == "JSONRPC" else "details"][0]
    assert again == live
    # the bare cancel is what the replay's store answers: only the refusal is an interaction
    (error,) = cancels(cassette)
    assert error["reply"] == {"error": {"name": "TaskNotCancelable", "message": "Task is done"}}


NAMING_AGENT = """\
version: 1
agent:
  name: naming
  description: Refuses a second cancel naming the task.
  skills: [{id: s, name: S, description: A skill.}]
clock: {start: 2026-10-06T09:00:00Z, tick: {ms: 250}}
ids: {seed: naming}
interactions:
- name: wait
  match: {text: wait}
  reply: {task: {steps: [{state: TASK_STATE_WORKING}]}}
- name: refuse
  match: {operation: CancelTask, task: {state: TASK_STATE_CANCELED}}
  reply:
    error: {name: TaskNotCancelable, message: "Task {taskId} was canceled already"}
"""


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_refusal_that_names_the_task_names_the_replayed_task(
    tmp_path: Path, binding: str
) -> None:
    agent = tmp_path / "naming.yaml"
    agent.write_text(NAMING_AGENT)
    live, again, cassette = record_and_replay(
        lambda: upstream_agent(agent), tmp_path, binding, "wait"
    )
    assert live[1][1]["message"] == "Task <task> was canceled already"
    assert again == live  # the replay names its own task, not the recorded one
    (error,) = cancels(cassette)
    assert error["reply"] == {
        "error": {"name": "TaskNotCancelable", "message": "Task {taskId} was canceled already"}
    }


STATUS_409 = """\
version: 1
agent:
  name: conflicted
  description: Refuses a second cancel with 409, as spec 1.0.0 and the TCK have it.
  skills: [{id: s, name: S, description: A skill.}]
clock: {start: 2026-10-06T09:00:00Z, tick: {ms: 250}}
ids: {seed: conflicted}
interactions:
- name: wait
  match: {text: wait}
  reply: {task: {steps: [{state: TASK_STATE_WORKING}]}}
- name: refuse
  match: {operation: CancelTask, task: {state: TASK_STATE_CANCELED}}
  fault:
    status: 409
    body: >-
      {"error": {"code": 409, "status": "FAILED_PRECONDITION",
      "message": "Task cannot be canceled", "details": [{"@type":
      "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_CANCELABLE",
      "domain": "a2a-protocol.org"}]}}
"""


def test_a_rest_refusal_replays_with_the_agents_http_status(tmp_path: Path) -> None:
    agent = tmp_path / "conflicted.yaml"
    agent.write_text(STATUS_409)
    live, again, cassette = record_and_replay(
        lambda: upstream_agent(agent), tmp_path, "HTTP+JSON", "wait"
    )
    assert live[1][0] == 409 and live[1][1]["code"] == 409
    assert again == live  # not the table's 400
    (refusal,) = cancels(cassette)
    assert refusal["reply"] == {"error": {"name": "TaskNotCancelable", "status": 409}}
