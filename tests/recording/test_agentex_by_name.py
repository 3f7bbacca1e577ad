"""Agentex tasks named by `name` in a recording (issue 17): a refused cancel by name names the
replayed task, and a get-or-create that finds a task the platform moved on unseen shows it on
replay as it showed it live.

The platform is tests/helpers/agentex_platform.py; its async agent moves on when polled, and a
test moves it on directly to stand for an agent that works in the background.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml
from agentex import Agentex

from mockagent.lint.run import lint
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.agentex_platform import create_platform_app

Moved = Callable[[str], None]  # moves the task of that id on, unseen (live only)


@contextlib.contextmanager
def recording(path: Path) -> Iterator[tuple[str, Moved]]:
    """A recording proxy in front of a new platform: (its URL, how to move a task on unseen)."""
    platform_app = create_platform_app()
    platform = platform_app.extensions["platform"]
    live = ServerThread(platform_app).start()
    app = create_recording_app(live.url, path, "all")
    proxy = ServerThread(app).start()
    try:
        yield proxy.url, lambda task_id: platform.step(platform.tasks[task_id])
    finally:
        proxy.stop()
        live.stop()
    assert finish_recording(app) == path


def refused_by_name(url: str, task_id: str) -> str:
    """The text of a task/cancel by name that the platform refuses, the task's id as `<task>`."""
    with httpx.Client(trust_env=False) as http:  # the client's typed result cannot hold it
        refused = http.post(
            f"{url}/agents/name/worker/rpc",
            json={"method": "task/cancel", "params": {"task_name": "nightly"}},
        ).json()
    return str(refused["error"]["message"]).replace(task_id, "<task>")


def cancel_twice_by_name(url: str) -> list[Any]:
    client = Agentex(base_url=url, max_retries=0)
    try:
        task = client.agents.create_task(agent_name="worker", params={"name": "nightly"})
        assert task.result is not None
        canceled = client.agents.cancel_task(agent_name="worker", params={"task_name": "nightly"})
        assert canceled.result is not None
        return [canceled.result.status, refused_by_name(url, task.result.id)]
    finally:
        client.close()


def test_a_refused_cancel_by_name_names_the_replayed_task(tmp_path: Path) -> None:
    path = tmp_path / "by-name.yaml"
    with recording(path) as (url, _):
        live = cancel_twice_by_name(url)
    with serve_in_thread(path, pace="instant") as replay:
        again = cancel_twice_by_name(replay.url)
    assert live == ["CANCELED", "Task <task> is CANCELED and cannot be canceled"]
    assert again == live  # before: "Task {taskId} is CANCELED …", the placeholder unfilled
    assert [str(finding) for finding in lint(path)] == []


def work_then_find(url: str, moved: Moved | None) -> list[Any]:
    """A named task given an event, polled through three messages; then (live) the agent ends it
    unseen, and a get-or-create of its name shows it; a cancel by name is refused."""
    client = Agentex(base_url=url, max_retries=0)
    try:
        task = client.agents.create_task(agent_name="worker", params={"name": "nightly"})
        assert task.result is not None
        task_id = task.result.id
        client.agents.send_event(
            agent_name="worker",
            params={
                "task_id": task_id,
                "content": {"type": "text", "author": "user", "content": "report"},
            },
        )
        said = [len(client.messages.list(task_id=task_id)) for _ in range(3)]
        if moved is not None:
            moved(task_id)  # the agent finishes in the background: no poll shows it
        again = client.agents.create_task(agent_name="worker", params={"name": "nightly"})
        assert again.result is not None and again.result.id == task_id
        found = (again.result.status, again.result.status_reason)
        return [said, found, refused_by_name(url, task_id)]
    finally:
        client.close()


def test_a_get_or_create_shows_the_state_the_platform_reached_unseen(tmp_path: Path) -> None:
    path = tmp_path / "found.yaml"
    with recording(path) as (url, moved):
        live = work_then_find(url, moved)
    with serve_in_thread(path, pace="instant") as replay:
        again = work_then_find(replay.url, None)
    assert live == [
        [2, 3, 4],
        ("COMPLETED", "Task completed"),
        "Task <task> is COMPLETED and cannot be canceled",
    ]
    assert again == live  # before: the replay's get-or-create said RUNNING
    assert [str(finding) for finding in lint(path)] == []
    steps = [
        i["reply"]["task"]["steps"]
        for i in yaml.safe_load(path.read_text())["interactions"]
        if i["match"].get("operation") == "SendEvent"
    ]
    assert steps[0][-1] == {
        "state": "COMPLETED",
        "statusReason": "Task completed",
        "after": {"finds": 1},  # the get-or-create shows it, not a poll
    }
