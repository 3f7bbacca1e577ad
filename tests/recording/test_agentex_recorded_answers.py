"""Recording an Agentex platform writes what the replay's task store would answer otherwise
(issue 17): a new task's and a cancel's `status_reason`, a refused cancel's text, and a streamed
message that opened with `full`; the replay then answers those calls as the platform did.

The platform is tests/helpers/agentex_platform.py; the full wire comparison of its scenarios is
tests/recording/test_agentex_fidelity.py. These tests pin what the cassette says.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml
from agentex import Agentex

from mockagent.lint.run import lint
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.agentex_platform import create_platform_app

CREATED = "Task created, forwarding to ACP server"


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "author": "user", "content": value}


@contextlib.contextmanager
def recording(path: Path) -> Iterator[str]:
    """The URL of a recording proxy in front of a new platform; the cassette written after."""
    live = ServerThread(create_platform_app()).start()
    app = create_recording_app(live.url, path, "all")
    proxy = ServerThread(app).start()
    try:
        yield proxy.url
    finally:
        proxy.stop()
        live.stop()
    assert finish_recording(app) == path


def create_and_cancel_twice(url: str) -> list[Any]:
    """A named task created twice (get-or-create), canceled by name, then refused by id."""
    client = Agentex(base_url=url, max_retries=0)
    seen: list[Any] = []
    try:
        for _ in range(2):
            task = client.agents.create_task(agent_name="worker", params={"name": "nightly"})
            assert task.result is not None
            seen.append((task.result.status, task.result.status_reason))
        task_id = task.result.id
        canceled = client.agents.cancel_task(agent_name="worker", params={"task_name": "nightly"})
        assert canceled.result is not None
        seen.append((canceled.result.status, canceled.result.status_reason))
        with httpx.Client(trust_env=False) as http:  # the client's typed result cannot hold it
            refused = http.post(
                f"{url}/agents/name/worker/rpc",
                json={"method": "task/cancel", "params": {"task_id": task_id}},
            ).json()
        seen.append(str(refused["error"]["message"]).replace(task_id, "<task>"))
        seen.append(client.tasks.retrieve(task_id).status_reason)
    finally:
        client.close()
    return seen


def test_create_and_cancel_replay_as_the_platform_answered(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    with recording(path) as url:
        live = create_and_cancel_twice(url)
    with serve_in_thread(path, pace="instant") as replay:
        again = create_and_cancel_twice(replay.url)
    assert live == [
        ("RUNNING", CREATED),
        ("RUNNING", CREATED),
        ("CANCELED", "Canceled by the user"),
        "Task <task> is CANCELED and cannot be canceled",
        "Canceled by the user",
    ]
    assert again == live
    assert [str(finding) for finding in lint(path)] == []
    created, canceled, refused = yaml.safe_load(path.read_text())["interactions"]
    assert created["match"] == {
        "operation": "CreateTask",
        "where": {"agent": "worker", "name": "nightly"},
    }
    assert created["reply"] == {
        "task": {"steps": [{"state": "RUNNING", "statusReason": CREATED}]}
    }  # once: the second create found the task by its name
    assert canceled["match"]["task"] == {"from": created["name"]}
    assert canceled["reply"]["task"]["steps"] == [
        {"state": "CANCELED", "statusReason": "Canceled by the user"}
    ]
    assert refused["match"]["task"] == {"state": "CANCELED", "from": created["name"]}
    assert refused["reply"] == {
        "error": {
            "name": "TaskNotCancelable",
            "message": "Task {taskId} is CANCELED and cannot be canceled",
        }
    }


def stream_kinds(url: str) -> list[tuple[int, str]]:
    client = Agentex(base_url=url, max_retries=0)
    try:
        updates = client.agents.send_message_stream(
            agent_name="echo-bot", params={"content": text("Can you stream?")}
        )
        return [(u.result.index, u.result.type) for u in updates]  # type: ignore[union-attr]
    finally:
        client.close()


def test_a_message_streamed_as_full_alone_is_recorded_without_a_start(tmp_path: Path) -> None:
    path = tmp_path / "stream.yaml"
    with recording(path) as url:
        live = stream_kinds(url)
    with serve_in_thread(path, pace="instant") as replay:
        again = stream_kinds(replay.url)
    assert live[4:] == [(1, "full"), (1, "done")]
    assert again == live
    (interaction,) = yaml.safe_load(path.read_text())["interactions"]
    text_step, data_step = interaction["reply"]["task"]["steps"]
    assert "start" not in text_step  # it opened with `start`, as a `say` step streams by default
    assert data_step["start"] is False
