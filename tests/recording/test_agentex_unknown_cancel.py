"""An Agentex task/cancel on a task the recording never saw (an id or a name the client made up)
replays with the platform's refusal, not the replay store's TaskNotFound (issue 17), and a
cancel of a real task before it does not use that refusal up.

The platform is tests/helpers/agentex_platform.py; A2A's counterpart is
tests/recording/test_unknown_task_refusals.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import yaml

from mockagent.lint.run import lint
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.agentex_platform import create_platform_app
from tests.helpers.recording import recording

MADE_UP = [{"task_id": "no-such-task"}, {"task_name": "no-such-name"}]


def rpc(http: httpx.Client, url: str, method: str, params: dict[str, Any]) -> Any:
    reply = http.post(f"{url}/agents/name/worker/rpc", json={"method": method, "params": params})
    assert reply.status_code == 200
    return reply.json()


def session(url: str, cancel_first: bool = False) -> list[Any]:
    """A task the recording sees, then cancels of made-up tasks: their error envelopes;
    `cancel_first`: the real task is canceled before them (the replay's store answers it)."""
    with httpx.Client(trust_env=False) as http:
        task = rpc(http, url, "task/create", {"name": "nightly"})["result"]
        if cancel_first:
            assert rpc(http, url, "task/cancel", {"task_id": task["id"]})["result"] is not None
        return [rpc(http, url, "task/cancel", params)["error"] for params in MADE_UP]


def test_a_made_up_task_is_refused_on_replay_as_the_platform_refused_it(tmp_path: Path) -> None:
    path = tmp_path / "unknown.yaml"
    platform = ServerThread(create_platform_app()).start()
    try:
        with recording(platform.url, path) as rec:
            live = session(rec.url)
            assert rec.finish() == path
    finally:
        platform.stop()
    assert [error["message"] for error in live] == [
        "Task no-such-task not found",
        "Task no-such-name not found",
    ]
    with serve_in_thread(path, pace="instant") as replay:
        assert session(replay.url) == live
    with serve_in_thread(path, pace="instant") as replay:
        assert session(replay.url, cancel_first=True) == live
    assert [str(finding) for finding in lint(path)] == []
    cassette = yaml.safe_load(path.read_text())
    refusals = [i for i in cassette["interactions"] if i["match"].get("task") == {"known": False}]
    assert [i["reply"]["error"] for i in refusals] == [
        {"name": "TaskNotFound", "message": "Task no-such-name not found"}
    ]  # the made-up id's refusal is the store's own: only the name's is recorded
