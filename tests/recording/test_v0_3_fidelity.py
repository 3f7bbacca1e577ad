"""Recording an A2A v0.3 agent: a v0.3 client's calls through the recording proxy are recorded as
the v1.0 interactions they are, and the replay shows the v0.3 client what it saw live, on both
bindings, except ids and timestamps (issue 17).

The agent is a2a-sdk's server with its v0.3 compat routes and a card that lists only v0.3
interfaces (tests/helpers/v0_3_agent.py); the client is a2a-sdk's v0.3 compat transport driving
the scenarios of tests/helpers/fidelity.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from mockagent.verify.compare import differences
from tests.helpers import fidelity
from tests.helpers.v0_3_agent import run_all, run_scenario, serve_v0_3

BINDINGS = ("JSONRPC", "HTTP+JSON")


def cases() -> list[Any]:
    return [(binding, scenario) for binding in BINDINGS for scenario in fidelity.SCENARIOS]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every scenario by a v0.3 client through the recording proxy, then replayed; and a v1.0
    client's blocking scenarios straight to the agent and on the same replay."""
    path = tmp_path_factory.mktemp("v0-3") / "v0-3.yaml"
    with serve_v0_3() as agent:
        v1_live = asyncio.run(v1_blocking(agent.url))
        app = create_recording_app(agent.url, path, "all")
        proxy = ServerThread(app).start()
        try:
            proxied = run_all(proxy.url, BINDINGS)
        finally:
            proxy.stop()
            written = finish_recording(app)
    with serve_in_thread(path, pace="instant") as replay:
        replayed = run_all(replay.agent_url(), BINDINGS)
    with serve_in_thread(path, pace="instant") as replay:
        v1_replayed = asyncio.run(v1_blocking(replay.agent_url()))
    return {
        "path": written,
        "proxied": proxied,
        "replayed": replayed,
        "v1": (v1_live, v1_replayed),
    }


async def v1_blocking(url: str) -> list[Any]:
    """The blocking scenarios by a v1.0 client (their answers do not depend on timing)."""
    return [
        await run_scenario(url, binding, name, version="1.0")
        for binding in BINDINGS
        for name in ("blocking", "follow-up-blocking")
    ]


@pytest.mark.parametrize("binding,scenario", cases())
def test_replay_shows_the_v0_3_client_what_it_saw_live(recorded, binding, scenario):
    live, live_error = recorded["proxied"][binding, scenario]
    replay, replay_error = recorded["replayed"][binding, scenario]
    assert live_error == "" and live, f"the live run itself failed: {live_error}"
    # the v0.3 client spoke v0.3: JSON-RPC slash methods, REST under /v1 (named by its route)
    if binding == "JSONRPC":
        assert {c.operation for c in live} & {"message/send", "message/stream"}
    assert differences(live, replay) == [], replay_error


def test_v0_3_calls_are_recorded_as_v1_0_interactions(recorded):
    assert recorded["path"] is not None, "nothing was recorded"
    text = Path(recorded["path"]).read_text()
    data = yaml.safe_load(text)
    states = {
        step["state"]
        for interaction in data["interactions"]
        for step in interaction.get("reply", {}).get("task", {}).get("steps", [])
        if "state" in step
    }
    assert {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"} <= states
    assert all(state.startswith("TASK_STATE_") for state in states)
    # v1.0 shapes only: no `kind`, no v0.3 REST `content` for parts, no lowercase state
    assert "kind:" not in text and "content:" not in text and "state: input-required" not in text
    # both bindings' calls: each scenario's turns, follow-ups matched to their task
    names = [i["name"] for i in data["interactions"]]
    assert len(names) >= 2 * len(fidelity.SCENARIOS)
    assert any("task" in i["match"] for i in data["interactions"])
    # the a2a-sdk agent's v0.3 ways, which a v1.0 interaction has no field for
    assert data["agent"]["v03"] == {
        "interruptedFinal": False,
        "errorData": "null",
        "restErrors": "status",
    }


def test_a_v1_0_client_sees_a_v0_3_recording_as_the_agent_answers_v1_0(recorded):
    live, replay = recorded["v1"]
    for (live_calls, live_error), (replay_calls, replay_error) in zip(live, replay, strict=True):
        assert live_error == "" and replay_error == ""
        assert differences(live_calls, replay_calls) == []
