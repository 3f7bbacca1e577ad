"""`after: {finds: N}`: a step only an Agentex get-or-create (task/create of a name that exists)
shows, the Nth since the step before (issue 17: a recorded platform moved the task on where no
poll saw it, and the client's get-or-create did). Polls, the clock, blocking calls and streams
never show it; a script without the gate plays as before (tests/agentex/test_rpc.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mockagent.server.app import create_app
from tests.helpers.agentex import result, stream, text

CASSETTE = """\
version: 1
protocol: agentex
agents:
  - {id: agent-sync, name: echo-bot, description: Answers., acp_type: sync}
  - {id: agent-async, name: worker, description: Works., acp_type: async}
clock: {start: 2026-10-06T09:00:00Z}
ids: {seed: found-steps}
interactions:
  - name: created
    match: {operation: CreateTask, where: {name: quiet}}
    reply:
      task:
        steps:
          - {state: RUNNING, statusReason: Created}
          - {state: TIMED_OUT, statusReason: Timed out, after: {finds: 1}}
  - name: work
    match: {operation: SendEvent, text: work}
    reply:
      task:
        steps:
          - say: On it.
          - {state: COMPLETED, statusReason: Done, after: {finds: 2}}
  - name: hello
    match: {text: hello}
    reply:
      task:
        steps:
          - say: Hi.
          - {state: FAILED, statusReason: Gone, after: {finds: 1}}
"""


@pytest.fixture
def client(tmp_path: Path):
    path = tmp_path / "found.yaml"
    path.write_text(CASSETTE)
    return create_app(path).test_client()


def create(client, name: str) -> dict[str, Any]:
    return result(client, "agent-async", "task/create", {"name": name})


def status(client, task_id: str) -> tuple[str, str | None]:
    task = client.get(f"/tasks/{task_id}").get_json()
    return task["status"], task["status_reason"]


def test_only_a_get_or_create_shows_a_step_of_a_new_tasks_script(client):
    task = create(client, "quiet")
    assert (task["status"], task["status_reason"]) == ("RUNNING", "Created")  # not played through
    assert [status(client, task["id"]) for _ in range(3)] == [("RUNNING", "Created")] * 3
    found = create(client, "quiet")
    assert (found["id"], found["status"], found["status_reason"]) == (
        task["id"],
        "TIMED_OUT",
        "Timed out",
    )
    assert status(client, task["id"]) == ("TIMED_OUT", "Timed out")


def test_a_step_waits_for_the_nth_get_or_create_whatever_the_polls(client):
    task = create(client, "nightly")
    result(client, "agent-async", "event/send", {"task_id": task["id"], "content": text("work")})
    client.get(f"/messages?task_id={task['id']}")
    assert create(client, "nightly")["status"] == "RUNNING"  # the first of two
    assert [status(client, task["id"])[0] for _ in range(4)] == ["RUNNING"] * 4
    assert create(client, "nightly")["status"] == "COMPLETED"
    assert status(client, task["id"]) == ("COMPLETED", "Done")


def test_a_blocking_or_streamed_message_stops_before_the_step(client):
    said = result(
        client,
        "agent-sync",
        "message/send",
        {"content": text("hello"), "task_name": "chat"},
    )
    assert [m["content"]["content"] for m in said] == ["Hi."]
    assert status(client, said[0]["task_id"]) == ("RUNNING", None)
    updates = stream(client, "agent-sync", {"content": text("hello"), "task_name": "talk"})
    assert [u["result"]["type"] for u in updates][-1] == "done"  # ended: not held open
    talk = updates[-1]["result"]["parent_task_message"]["task_id"]
    assert status(client, talk)[0] == "RUNNING"
    found = result(client, "agent-sync", "task/create", {"name": "talk"})
    assert (found["id"], found["status"]) == (talk, "FAILED")
