"""The admin API's task view (and the inspector) says what call a task's next step waits for
(`waitingFor`): a replay whose client never opens a `subscribers` or `finds` gate waits at that
step forever, and this makes it diagnosable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

from mockagent.server.app import create_app
from tests.helpers.agentex import result

A2A = """\
version: 1
agent:
  name: gates
  description: A test agent.
  skills: [{id: s, name: S, description: A skill.}]
clock: {start: 2026-10-06T09:00:00Z}
interactions:
  - name: subscribed
    match: {text: subscribed}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
            after: {subscribers: 1}
  - name: polled
    match: {text: polled}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
            after: {polls: 3}
"""

AGENTEX = """\
version: 1
protocol: agentex
agents:
  - {id: agent-async, name: worker, description: Works., acp_type: async}
clock: {start: 2026-10-06T09:00:00Z}
interactions:
  - name: created
    match: {operation: CreateTask, where: {name: nightly}}
    reply:
      task:
        steps:
          - {state: RUNNING, statusReason: Created}
          - {state: TIMED_OUT, statusReason: Timed out, after: {finds: 1}}
"""


def client_for(tmp_path: Path, text: str) -> FlaskClient:
    path = tmp_path / "gates.yaml"
    path.write_text(text)
    return create_app(path).test_client()


def send(client: FlaskClient, text: str) -> dict[str, Any]:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message, "configuration": {"returnImmediately": True}},
    }
    response = client.post("/", headers={"A2A-Version": "1.0"}, json=body)
    return response.get_json()["result"]["task"]


def waiting_for(client: FlaskClient) -> dict[str, Any]:
    response = client.get("/_mockagent/tasks")
    assert response.status_code == 200
    return {task["id"]: task["waitingFor"] for task in response.get_json()["tasks"]}


def test_a_task_held_by_a_subscribers_gate_says_it_waits_for_a_subscription(
    tmp_path: Path,
) -> None:
    client = client_for(tmp_path, A2A)
    held = send(client, "subscribed")
    polled = send(client, "polled")
    assert waiting_for(client) == {held["id"]: "1 more subscription", polled["id"]: "3 more polls"}
    page = client.get("/_mockagent/").get_data(as_text=True)
    assert '<dd class="waiting-for">1 more subscription</dd>' in page


def test_a_task_held_by_a_finds_gate_says_it_waits_for_a_get_or_create(tmp_path: Path) -> None:
    client = client_for(tmp_path, AGENTEX)
    task = result(client, "agent-async", "task/create", {"name": "nightly"})
    client.get(f"/tasks/{task['id']}")  # a poll does not open it
    assert waiting_for(client) == {task["id"]: "1 more get-or-create"}
    result(client, "agent-async", "task/create", {"name": "nightly"})
    assert waiting_for(client) == {task["id"]: None}  # timed out: nothing left to wait for
