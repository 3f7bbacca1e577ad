"""Record an agent that never moves a status message into history (its history holds only the
user's messages; a replaced status message is gone), replay the cassette, and compare on the wire
with `compare.differences`: the replay must not grow history entries the agent never showed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from mockagent.verify.compare import Exchange, differences
from tests.helpers.fidelity import run_scenario
from tests.helpers.history_agent import serve_history_agent

BINDINGS = ("JSONRPC", "HTTP+JSON")
SCENARIOS = ("follow-up-blocking", "follow-up-polled")


def run(url: str, binding: str) -> list[list[Exchange]]:
    """Each scenario over `binding`: its exchanges, after checking the run itself went well."""
    out: list[list[Exchange]] = []
    for name in SCENARIOS:
        exchanges, error = asyncio.run(run_scenario(url, binding, name))
        assert error == "" and exchanges, f"{name}: {error}"
        out.append(exchanges)
    return out


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_agent_that_never_archives_replays_without_extra_history(
    tmp_path: Path, binding: str
) -> None:
    path = tmp_path / "never.yaml"
    with serve_history_agent(archives=False) as agent:
        app = create_recording_app(agent.url, path, "all")
        proxy = ServerThread(app).start()
        try:
            live = run(proxy.url, binding)
        finally:
            proxy.stop()
            assert finish_recording(app) == path
    assert yaml.safe_load(path.read_text())["agent"]["history"] == {"statusMessage": "never"}
    last_poll = live[-1][-1].body
    task = last_poll.get("result", last_poll)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [m["parts"] for m in task["history"]] == [[{"text": "ask me"}], [{"text": "main"}]]
    with serve_in_thread(path, pace="instant") as replay:
        replayed = run(replay.agent_url(), binding)
    for name, seen, again in zip(SCENARIOS, live, replayed, strict=True):
        assert differences(seen, again) == [], name
