"""A client that always asks for a shortened history (`historyLength`) sees less than the whole
history: a status message cut off by it is not a status message the agent dropped. Recorded
through the proxy with the official a2a-sdk client, the cassette must not say `statusMessage:
never` of an agent that archives its status messages, and the replay must equal live."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from a2a.types import GetTaskRequest

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from mockagent.verify.compare import differences
from tests.helpers.fidelity import ENDED, MAX_POLLS, POLL_GAP, Clients, run_scenario, send, user
from tests.helpers.history_agent import serve_history_agent

SHORT = 1  # the last message only: the answer cuts the archived question off


async def follow_up_shortened(c: Clients) -> None:
    """Ask, answer with returnImmediately, and poll to the end with `historyLength`; then one
    GetTask for the whole history."""
    asked = (await send(c.blocking, user("ask me"), history_length=SHORT)).task
    task = (
        await send(c.blocking, user("main", asked), return_immediately=True, history_length=SHORT)
    ).task
    for _ in range(MAX_POLLS):
        if task.status.state in ENDED:
            break
        await asyncio.sleep(POLL_GAP)
        task = await c.blocking.get_task(GetTaskRequest(id=task.id, history_length=SHORT))
    await c.blocking.get_task(GetTaskRequest(id=task.id))


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_history_shortened_by_history_length_is_not_a_dropped_status_message(
    tmp_path: Path, binding: str
) -> None:
    path = tmp_path / "short.yaml"
    with serve_history_agent() as agent:
        app = create_recording_app(agent.url, path, "all")
        proxy = ServerThread(app).start()
        try:
            live, error = asyncio.run(run_scenario(proxy.url, binding, follow_up_shortened))
        finally:
            proxy.stop()
            assert finish_recording(app) == path
    assert error == "" and live, error
    polled, whole = (exchange.body.get("result", exchange.body) for exchange in live[-2:])
    assert polled["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(polled["history"]) == SHORT  # the agent did shorten it
    texts = [m["parts"][0]["text"] for m in whole["history"]]
    assert texts == ["ask me", "Working on it", "Which branch?", "main", "Checking out main"]
    with serve_in_thread(path, pace="instant") as replay:
        replayed, error = asyncio.run(
            run_scenario(replay.agent_url(), binding, follow_up_shortened)
        )
    assert error == ""
    assert differences(live, replayed) == []
    assert "history" not in yaml.safe_load(path.read_text())["agent"]
