"""`after: {polls: N, strict: true}`: a step of a CreateTask script only polls show (issue 17:
recorded where a poll showed a task no turn had run on changed). A plain polls gate in a
CreateTask script plays through as the task is created, as hand-written scripts always have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mockagent.server.app import create_app
from tests.helpers.agentex import result

CASSETTE = """\
version: 1
protocol: agentex
agents:
  - {id: agent-async, name: worker, description: Works., acp_type: async}
clock: {start: 2026-10-06T09:00:00Z}
ids: {seed: strict-polls}
interactions:
  - name: created
    match: {operation: CreateTask, where: {name: GATE}}
    reply:
      task:
        steps:
          - {state: RUNNING, statusReason: Created}
          - {state: TIMED_OUT, statusReason: Timed out, after: {polls: 2STRICT}}
"""


def statuses(tmp_path: Path, strict: bool, polls: int) -> list[Any]:
    path = tmp_path / "strict.yaml"
    text = CASSETTE.replace("STRICT", ", strict: true" if strict else "")
    path.write_text(text.replace("GATE", "nightly"))
    client = create_app(path).test_client()
    task = result(client, "agent-async", "task/create", {"name": "nightly"})
    seen = [task["status"]]
    for _ in range(polls):
        seen.append(client.get(f"/tasks/{task['id']}").get_json()["status"])
    return seen


def test_a_plain_polls_gate_of_a_create_script_plays_through_as_before(tmp_path: Path) -> None:
    assert statuses(tmp_path, strict=False, polls=2) == ["TIMED_OUT"] * 3


def test_a_strict_polls_gate_waits_for_its_polls(tmp_path: Path) -> None:
    seen = statuses(tmp_path, strict=True, polls=3)
    assert seen == ["RUNNING", "RUNNING", "TIMED_OUT", "TIMED_OUT"]
