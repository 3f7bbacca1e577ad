"""The tasks view says when a live task can never finish (`stuck`): a script that ends in WORKING,
a stop at INPUT_REQUIRED no follow-up answers, a gate no call can open; and says nothing of a
task that a poll, the clock or a follow-up still moves on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from mockagent.server.app import create_app
from tests.helpers.agentex import PLATFORM, rpc, text

AGENT = """\
version: 1
agent:
  name: stuck
  description: Scripts that end well and badly.
  skills: [{id: s, name: S, description: A skill.}]
clock: {start: 2026-10-06T09:00:00Z}
interactions:
  - name: forever
    match: {text: forever}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
  - name: asks
    match: {text: asks}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which one?
  - name: answered
    match: {text: answered}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which one?
  - name: answer
    match: {task: {from: answered, state: TASK_STATE_INPUT_REQUIRED}}
    times: 1
    reply:
      task:
        steps:
          - state: TASK_STATE_COMPLETED
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


@pytest.fixture
def client(tmp_path: Any) -> Iterator[FlaskClient]:
    path = tmp_path / "stuck.yaml"
    path.write_text(AGENT)
    app = create_app(path)
    yield app.test_client()
    app.extensions["mockagent"].close()


def send(client: FlaskClient, text: str, task_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    if task_id is not None:
        message["taskId"] = task_id
    body = {"message": message, "configuration": {"returnImmediately": True}}
    answer = client.post("/message:send", json=body, headers={"A2A-Version": "1.0"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.get_json()["task"]


def stuck(client: FlaskClient, task_id: str) -> Any:
    tasks = client.get("/_mockagent/tasks").get_json()["tasks"]
    return next(t for t in tasks if t["id"] == task_id)["stuck"]


def test_a_script_that_ends_in_working_never_finishes(client: FlaskClient) -> None:
    task = send(client, "forever")
    assert stuck(client, task["id"]) == (
        "the script ends in TASK_STATE_WORKING: no step is left, so the task never finishes "
        "(unless a client cancels it); end the script in a terminal state"
    )
    page = client.get("/_mockagent/").get_data(as_text=True)
    assert '<dt>never finishes</dt><dd class="stuck">the script ends in TASK_STATE_WORKING' in page


def test_a_stop_no_follow_up_answers_never_finishes(client: FlaskClient) -> None:
    task = send(client, "asks")
    assert stuck(client, task["id"]) == (
        "the task waits in TASK_STATE_INPUT_REQUIRED for a follow-up message, but no follow-up "
        "interaction answers one: add one that matches `task: {from: asks}`"
    )


def test_a_follow_up_keeps_a_stop_alive_until_it_is_used_up(client: FlaskClient) -> None:
    first = send(client, "answered")
    assert stuck(client, first["id"]) is None  # `answer` can still continue it
    assert send(client, "ok", first["id"])["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stuck(client, first["id"]) is None  # finished
    second = send(client, "answered")
    assert stuck(client, second["id"]) == (
        "the task waits in TASK_STATE_INPUT_REQUIRED for a follow-up message, but every "
        "interaction that answers one is used up ('answer'): raise its `times`"
    )


def test_a_subscribers_gate_on_a_card_without_streaming_never_opens(client: FlaskClient) -> None:
    task = send(client, "subscribed")
    assert stuck(client, task["id"]) == (
        "the next step waits for 1 more subscription (`after: {subscribers}`), but the card says "
        "capabilities.streaming: false, so SubscribeToTask is refused: the task never finishes"
    )


def test_a_polls_gate_is_not_stuck(client: FlaskClient) -> None:
    task = send(client, "polled")
    assert stuck(client, task["id"]) is None


FINDS = """\
version: 1
agent:
  name: finds
  description: Waits for a call only Agentex has.
  skills: [{id: s, name: S, description: A skill.}]
interactions:
  - name: found
    match: {text: found}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: a, parts: [{text: half}]}
          - state: TASK_STATE_COMPLETED
            after: {finds: 1}
"""


def test_a_finds_gate_on_an_a2a_agent_never_opens(tmp_path: Any) -> None:
    path = tmp_path / "finds.yaml"
    path.write_text(FINDS)
    app = create_app(path)
    client = app.test_client()
    task = send(client, "found")
    assert stuck(client, task["id"]) == (
        "the next step waits for 1 get-or-create (`after: {finds}`), which only an Agentex "
        "agent answers: the task never finishes"
    )
    app.extensions["mockagent"].close()


def test_an_agentex_task_between_turns_is_not_stuck(tmp_path: Any) -> None:
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    app = create_app(path)
    client = app.test_client()
    assert rpc(client, "agent-sync", "message/send", {"content": text("Hi?")})["result"]
    tasks = client.get("/_mockagent/tasks").get_json()["tasks"]
    app.extensions["mockagent"].close()
    assert tasks and not tasks[0]["remainingSteps"] and tasks[0]["state"] == "submitted"
    assert tasks[0]["stuck"] is None  # the A2A rule would say it ends in SUBMITTED
