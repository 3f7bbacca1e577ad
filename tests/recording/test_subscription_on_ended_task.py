"""A subscription on a task that has ended, answered with a stream, replays as that stream.

The specification refuses such a subscription (UnsupportedOperation), and so does the replay by
itself; an agent may answer it with the Task as it is and the end of the stream instead (the
quirky agent with `streams_ended`). The official client subscribes, over both bindings, to a
task it canceled and to one that completed: live, through the recording proxy, and on replay
it gets the same events (`compare.differences`), not a refusal.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from a2a.types import CancelTaskRequest, SubscribeToTaskRequest

from mockagent.server.thread import serve_in_thread
from mockagent.verify.compare import differences, event_kind
from tests.helpers.fidelity import Clients, run_scenario, send, user
from tests.helpers.quirky_app import serve_quirky
from tests.helpers.recording import recording

BINDINGS = ("JSONRPC", "HTTP+JSON")


async def _subscribe_all(c: Clients, task_id: str) -> None:
    async for _ in c.streaming.subscribe(SubscribeToTaskRequest(id=task_id)):
        pass


async def canceled(c: Clients) -> None:
    asked = (await send(c.blocking, user("ask me"))).task
    await c.blocking.cancel_task(CancelTaskRequest(id=asked.id))
    await _subscribe_all(c, asked.id)


async def completed(c: Clients) -> None:
    built = (await send(c.blocking, user("build it"))).task
    await _subscribe_all(c, built.id)


SCENARIOS = {"canceled": canceled, "completed": completed}


def _run(url: str) -> dict[tuple[str, str], tuple[Any, str]]:
    async def main() -> dict[tuple[str, str], tuple[Any, str]]:
        return {
            (binding, name): await run_scenario(url, binding, SCENARIOS[name])
            for binding in BINDINGS
            for name in SCENARIOS
        }

    return asyncio.run(main())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("ended") / "ended.yaml"
    with serve_quirky(streams_ended=True) as agent, recording(agent.url, path) as rec:
        live = _run(rec.url)
        rec.finish()
    with serve_in_thread(path, pace="instant") as replay:
        replayed = _run(replay.agent_url())
    return {"live": live, "replayed": replayed}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_subscription_answered_on_an_ended_task_replays_as_live(
    runs: dict[str, Any], binding: str, scenario: str
) -> None:
    live, live_error = runs["live"][binding, scenario]
    replay, replay_error = runs["replayed"][binding, scenario]
    assert live_error == "", live_error
    subscription = live[-1]
    assert subscription.operation == "SubscribeToTask"
    assert [event_kind(e) for e in subscription.events or ()] == ["task"]
    found = differences(live, replay)
    assert found == [], "\n".join([*found, replay_error])
