"""What a recorded Agentex platform answered, as a cassette writes it (issue 17): a task's
`status_reason` (`statusReason` on a state step, never a message), task/create and task/cancel
answered by interactions, and a streamed message that opened without `start` (`start: false`).
Hand-written cassettes without them play as before (tests/agentex/test_rpc.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mockagent.cassette.loader import load_cassette
from mockagent.errors import CassetteError
from mockagent.server.app import create_app
from tests.helpers.agentex import error, result, stream, text

CREATED = "Task created, forwarding to ACP server"
RECORDED = f"""\
version: 1
protocol: agentex
agents:
  - {{id: agent-sync, name: echo-bot, description: Answers., acp_type: sync}}
  - {{id: agent-async, name: worker, description: Works., acp_type: async}}
clock: {{start: 2026-10-06T09:00:00Z}}
ids: {{seed: recorded-answers}}
interactions:
  - name: created
    match: {{operation: CreateTask, where: {{agent: worker}}}}
    reply: {{task: {{steps: [{{state: RUNNING, statusReason: "{CREATED}"}}]}}}}
    times: 2
  - name: work
    match: {{operation: SendEvent, text: work}}
    reply:
      task:
        steps:
          - say: On it.
          - {{state: COMPLETED, statusReason: Task completed, after: {{polls: 2}}}}
  - name: cancel
    match: {{operation: CancelTask, task: {{from: created}}}}
    reply: {{task: {{steps: [{{state: CANCELED, statusReason: Canceled by the user}}]}}}}
    times: 1
  - name: refuse
    match: {{operation: CancelTask, task: {{state: CANCELED, from: created}}}}
    reply:
      error: {{name: TaskNotCancelable, message: "Task {{taskId}} is CANCELED, not again"}}
  - name: mixed
    match: {{text: mixed?}}
    reply:
      task:
        steps:
          - {{say: Here., deltas: [He, re.]}}
          - {{say: {{type: data, data: {{n: 1}}}}, start: false}}
          - {{say: Pieces., deltas: [Pie, ces.], start: false}}
"""


@pytest.fixture
def client(tmp_path: Path):
    path = tmp_path / "recorded.yaml"
    path.write_text(RECORDED)
    return create_app(path).test_client()


def create(client, name: str | None = None) -> dict[str, Any]:
    return result(client, "agent-async", "task/create", {"name": name} if name else {})


def test_a_create_interaction_gives_a_new_task_its_status_reason(client):
    first = create(client)
    assert (first["status"], first["status_reason"]) == ("RUNNING", CREATED)
    assert client.get(f"/tasks/{first['id']}").get_json()["status_reason"] == CREATED
    create(client)
    third = create(client)  # `times: 2`: the task store's own answer from now on
    assert (third["status"], third["status_reason"]) == ("RUNNING", None)


def test_get_or_create_of_a_name_returns_that_task_and_leaves_the_interaction_unused(client):
    named = create(client, "nightly")
    again = create(client, "nightly")
    assert again["id"] == named["id"] and again["status_reason"] == CREATED
    assert create(client)["status_reason"] == CREATED  # its second use
    assert create(client)["status_reason"] is None


def test_a_status_reason_is_not_a_message_and_outlives_a_user_turn(client):
    task = create(client)
    result(client, "agent-async", "event/send", {"task_id": task["id"], "content": text("work")})
    polled = client.get(f"/tasks/{task['id']}").get_json()
    assert polled["status_reason"] == CREATED  # the user's turn did not move it into history
    finished = client.get(f"/tasks/{task['id']}").get_json()
    assert (finished["status"], finished["status_reason"]) == ("COMPLETED", "Task completed")
    messages = client.get(f"/messages?task_id={task['id']}").get_json()
    assert [m["content"]["content"] for m in messages] == ["work", "On it."]


def test_a_recorded_cancel_ends_the_task_as_recorded_and_refuses_with_its_text(client):
    task = create(client, "nightly")
    canceled = result(client, "agent-async", "task/cancel", {"task_name": "nightly"})
    assert (canceled["status"], canceled["status_reason"]) == ("CANCELED", "Canceled by the user")
    refused = error(client, "agent-async", "task/cancel", {"task_id": task["id"]})
    assert refused == {
        "code": -32603,
        "message": f"Task {task['id']} is CANCELED, not again",
        "data": None,
    }
    shown = client.get(f"/tasks/{task['id']}").get_json()
    assert shown["status_reason"] == "Canceled by the user"


def test_a_message_that_opened_without_start_streams_without_one(client):
    lines = [line["result"] for line in stream(client, "agent-sync", {"content": text("mixed?")})]
    assert [(u["index"], u["type"]) for u in lines] == [
        (0, "start"),
        (0, "delta"),
        (0, "delta"),
        (0, "done"),
        (1, "full"),
        (1, "done"),
        (2, "delta"),
        (2, "delta"),
        (2, "done"),
    ]
    full = lines[4]
    assert full["content"] == {"type": "data", "author": "agent", "data": {"n": 1}}
    assert full["parent_task_message"]["streaming_status"] == "IN_PROGRESS"
    assert lines[-1]["parent_task_message"]["content"]["content"] == "Pieces."


A2A_WITH_REASON = """\
version: 1
agent: {name: a, description: A., skills: [{id: s, name: S, description: S.}]}
interactions:
  - name: x
    reply: {task: {steps: [{state: COMPLETED, statusReason: done}]}}
"""
MISPLACED = """\
version: 1
protocol: agentex
agents: [{id: a, name: a, description: A., acp_type: sync}]
interactions:
  - name: x
    reply: {task: {steps: [%s]}}
"""


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (A2A_WITH_REASON, "`statusReason` is an Agentex task's"),
        (MISPLACED % "{say: hi, statusReason: why}", "`statusReason` belongs to a `state` step"),
        (MISPLACED % "{state: COMPLETED, start: false}", "`start: false` belongs to a `say`"),
    ],
)
def test_the_new_fields_are_refused_where_they_mean_nothing(tmp_path: Path, text, says):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError, match=says):
        load_cassette(path)
