"""A replay is the live agent: for every call, the client sees on replay what it saw live, field
for field, except ids and timestamps (issue 17).

Two agents that differ within what the A2A specification allows: the a2a-sdk server agent
(tests/helpers/upstream.py) and a raw agent with the quirks of issue 17 (quirky_agent.py). Each
is driven by the official client, over both bindings, through every scenario of
tests/helpers/fidelity.py: straight to the agent, then through the recording proxy, then against
the written cassette served offline. `compare.differences` judges on the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from mockagent.verify.compare import differences, event_kind
from tests.helpers.fidelity import SCENARIOS, run_all
from tests.helpers.quirky_app import serve_quirky
from tests.helpers.upstream import UpstreamAgent, serve_upstream

BINDINGS = ("JSONRPC", "HTTP+JSON")
AGENTS: dict[str, Callable[[], AbstractContextManager[UpstreamAgent]]] = {
    "a2a-sdk": serve_upstream,
    "quirky": serve_quirky,
}
Runs = dict[str, dict[tuple[str, str], tuple[Any, str]]]  # run -> (binding, scenario) -> answer


# Every case replays as it ran live, subscribe too whichever of its two connections the proxy
# hears first (test_recorded_subscriptions.py holds the order that once lost events).
def cases() -> Iterator[Any]:
    for agent in AGENTS:
        for binding in BINDINGS:
            for scenario in SCENARIOS:
                yield pytest.param(agent, binding, scenario)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Runs]:
    """Per agent: every scenario straight to it, through the recording proxy, and replayed."""
    out: dict[str, Runs] = {}
    for name, serve in AGENTS.items():
        path = tmp_path_factory.mktemp("fidelity") / f"{name}.yaml"
        with serve() as agent:
            direct = run_all(agent.url, BINDINGS)
            app = create_recording_app(agent.url, path, "all")
            proxy = ServerThread(app).start()
            try:
                proxied = run_all(proxy.url, BINDINGS)
            finally:
                proxy.stop()
                assert finish_recording(app) == Path(path)
        with serve_in_thread(path, pace="instant") as replay:
            replayed = run_all(replay.agent_url(), BINDINGS)
        out[name] = {"direct": direct, "proxied": proxied, "replayed": replayed}
    return out


@pytest.mark.parametrize("agent,binding,scenario", list(cases()))
def test_replay_shows_the_client_what_it_saw_live(runs, agent, binding, scenario):
    live, live_error = runs[agent]["proxied"][binding, scenario]
    replay, replay_error = runs[agent]["replayed"][binding, scenario]
    assert live_error == "" and live, f"the live run itself failed: {live_error}"
    assert differences(live, replay) == [], replay_error


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_recording_proxy_is_transparent(runs, binding, scenario):
    # The quirky agent is deterministic, so straight or proxied the client sees the same.
    direct, _ = runs["quirky"]["direct"][binding, scenario]
    proxied, _ = runs["quirky"]["proxied"][binding, scenario]
    assert differences(direct, proxied) == []


def result(exchange: Any) -> Any:
    """A call's result, either binding; a SendMessage's task unwrapped."""
    body = exchange.body["result"] if exchange.binding == "JSONRPC" else exchange.body
    return body.get("task", body)


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_quirky_agent_shows_its_quirks_live(runs, binding):
    direct = runs["quirky"]["direct"]
    texts = [
        [p["text"] for p in m["parts"]][0]
        for m in result(direct[binding, "follow-up-blocking"][0][1])["history"]
    ]
    # quirk 1: the WORKING status message stays in the history
    assert texts == ["ask me", "Working on ask me", "Which branch?", "main"]
    # quirk 2: a streamed follow-up starts with the task still waiting for input
    events = direct[binding, "follow-up-streamed"][0][1].events
    assert [event_kind(e) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    first = events[0].data["result"] if binding == "JSONRPC" else events[0].data
    assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    # quirk 3: a polled follow-up answers INPUT_REQUIRED, then polls show WORKING, COMPLETED
    calls = direct[binding, "follow-up-polled"][0]
    assert [result(c)["status"]["state"][11:] for c in calls] == [
        "INPUT_REQUIRED",
        "INPUT_REQUIRED",
        "WORKING",
        "COMPLETED",
    ]
