"""A subscription open beside a streamed follow-up on the same task records each step once.

The upstream (tests/helpers/subscribed_upstream.py) hands both streams the same three updates
(WORKING, the artifact, COMPLETED). Whichever stream reaches the recording proxy first, the
other's events are the same steps: merged, not appended again, or the replayed follow-up stream
would send six events where the live one sent three.

With `stepwise` the upstream hands each update to one stream, then the other, only when the test
releases it: the two streams take turns event by event, beside a streamed follow-up and beside
a new task's stream (which a replay must not play ahead of the subscription opened on it).
Either order records the same cassette: the subscription that hears a step first used to gate
it `after: {polls: 1}` as a subscriber's first sight, which the stream never writes.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockagent.server.thread import serve_in_thread
from mockagent.verify.compare import Event, Exchange, differences
from tests.helpers.fidelity import run_scenario, sdk_subscription_first, sdk_taking_turns
from tests.helpers.quirky_app import serve_quirky
from tests.helpers.recording import HEADERS, TIMEOUT, message, recording, rpc, wait_for
from tests.helpers.subscribed_upstream import SubscribedUpstream, subscribed_upstream
from tests.helpers.subscribing import Subscription, interactions


def _streamed(url: str, task_id: str, out: list[Exchange]) -> None:
    """The streamed follow-up "main" on `task_id`, as the client saw it, into `out`."""
    params = {"message": message("main", task_id=task_id, message_id="m2")}
    body = {"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": params}
    events = []
    with (
        httpx.Client(timeout=TIMEOUT, trust_env=False) as http,
        http.stream("POST", url.rstrip("/") + "/", json=body, headers=HEADERS) as answer,
    ):
        for line in answer.iter_lines():
            if line.startswith("data:"):
                events.append(Event("message", json.loads(line[5:])))
    out.append(Exchange("SendStreamingMessage", "JSONRPC", 200, events=tuple(events)))


def conversation(url: str, upstream: SubscribedUpstream | None, first: str) -> list[Exchange]:
    """Ask, subscribe, then follow up streamed; live, the `first` stream reaches the proxy first
    (the upstream holds the other until it has ended)."""
    asked = rpc(url, "SendMessage", {"message": message("ask me")})
    task_id = asked["result"]["task"]["id"]
    subscription = Subscription(url, task_id)
    wait_for(lambda: subscription.events, what="the subscription's Task")
    streamed: list[Exchange] = []
    follow_up = threading.Thread(target=_streamed, args=(url, task_id, streamed), daemon=True)
    follow_up.start()
    if first == "subscription":
        subscription.join()
        if upstream is not None:
            upstream.streamed.set()
        follow_up.join(TIMEOUT)
    else:
        follow_up.join(TIMEOUT)
        if upstream is not None:
            upstream.release.set()
        subscription.join()
    assert streamed, "the streamed follow-up did not end"
    events = tuple(Event(name, {"result": data}) for name, data in subscription.events)
    return [
        Exchange("SendMessage", "JSONRPC", 200, body=asked),
        streamed[0],
        Exchange("SubscribeToTask", "JSONRPC", 200, events=events),
    ]


@pytest.mark.parametrize("first", ["subscription", "message"])
def test_a_subscription_beside_a_message_stream_replays_both_as_live(
    tmp_path: Path, first: str
) -> None:
    path = tmp_path / "beside.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.stamped = True
        if first == "subscription":
            upstream.streamed.clear()
        else:
            upstream.held()
        live = conversation(rec.url, upstream, first)
        rec.finish()
    assert len(live[1].events or ()) == 3 and len(live[2].events or ()) == 4
    follow_up = next(i for i in interactions(path) if i["name"] == "main")
    states = [step.get("state", "artifact") for step in follow_up["reply"]["task"]["steps"]]
    assert states == ["TASK_STATE_WORKING", "artifact", "TASK_STATE_COMPLETED"]
    with serve_in_thread(path, pace="instant") as server:
        replay = conversation(server.url, None, first)
    found = differences(live, replay)
    assert found == [], "\n".join(found)


def take_turns(upstream: SubscribedUpstream, *streams: tuple[Subscription, int]) -> None:
    """Release the upstream's three updates one stream at a time, each once the stream before
    has it; `streams` are the message stream and the subscription, each with the events it had
    before the first update."""
    turns = streams[:: -1 if upstream.subscription_first else 1]
    for k in range(1, 4):
        for stream, opened in turns:
            upstream.step.release()
            wait_for(lambda s=stream, n=k + opened: len(s.events) >= n, what=f"update {k}")


def interleaved(url: str, upstream: SubscribedUpstream | None) -> list[Exchange]:
    """Ask, subscribe, then follow up streamed; live, the upstream sends each update to one
    stream, then the other, each once the client has the update before (the test releases
    it): the proxy hears the two streams' events taking turns."""
    asked = rpc(url, "SendMessage", {"message": message("ask me")})
    task_id = asked["result"]["task"]["id"]
    subscription = Subscription(url, task_id)
    wait_for(lambda: subscription.events, what="the subscription's Task")
    params = {"message": message("main", task_id=task_id, message_id="m2")}
    body = {"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": params}
    streamed = Subscription(url, body=body)
    if upstream is not None:
        take_turns(upstream, (streamed, 0), (subscription, 1))  # the subscription's Task came
    streamed.join()
    subscription.join()
    return [
        Exchange("SendMessage", "JSONRPC", 200, body=asked),
        *(
            Exchange(operation, "JSONRPC", 200, events=tuple(Event(n, d) for n, d in s.events))
            for operation, s in (
                ("SendStreamingMessage", streamed),
                ("SubscribeToTask", subscription),
            )
        ),
    ]


@pytest.mark.parametrize("first", ["subscription", "message"])
def test_a_subscription_and_a_message_stream_taking_turns_replay_as_live(
    tmp_path: Path, first: str
) -> None:
    path = tmp_path / "interleaved.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.stamped = upstream.stepwise = True
        upstream.subscription_first = first == "subscription"
        live = interleaved(rec.url, upstream)
        rec.finish()
    assert [len(e.events or ()) for e in live[1:]] == [3, 4]
    with serve_in_thread(path, pace="instant") as server:
        replay = interleaved(server.url, None)
    found = differences(live, replay)
    assert found == [], "\n".join(found)


def new_task_interleaved(url: str, upstream: SubscribedUpstream | None) -> list[Exchange]:
    """Stream a new message; once its Task came, subscribe to the task; live, the two streams
    then take turns as in `interleaved`. The replay must not run the streamed task ahead of the
    subscription that, live, saw every update."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage"}
    body["params"] = {"message": message("build it")}
    streamed = Subscription(url, body=body)
    wait_for(lambda: streamed.events, what="the streamed Task")
    subscription = Subscription(url, streamed.events[0][1]["task"]["id"])
    wait_for(lambda: subscription.events or subscription.ended, what="the subscription's Task")
    if upstream is not None:
        take_turns(upstream, (streamed, 1), (subscription, 1))
    streamed.join()
    subscription.join()
    return [
        Exchange(operation, "JSONRPC", 200, events=tuple(Event(n, d) for n, d in s.events))
        for operation, s in (("SendStreamingMessage", streamed), ("SubscribeToTask", subscription))
    ]


@pytest.mark.parametrize("pace", ["instant", "recorded"])
@pytest.mark.parametrize("first", ["subscription", "message"])
def test_a_subscription_to_a_streamed_new_task_taking_turns_replays_as_live(
    tmp_path: Path, first: str, pace: str
) -> None:
    path = tmp_path / "new-task.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.stamped = upstream.stepwise = True
        upstream.subscription_first = first == "subscription"
        live = new_task_interleaved(rec.url, upstream)
        rec.finish()
    assert [len(e.events or ()) for e in live] == [4, 4]
    with serve_in_thread(path, pace=pace) as server:
        replay = new_task_interleaved(server.url, None)
    found = differences(live, replay)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_official_client_on_both_streams_taking_turns_replays_as_live(
    tmp_path: Path, binding: str
) -> None:
    path = tmp_path / "turns.yaml"
    step = threading.Semaphore(0)
    with serve_quirky(stepwise=step) as agent, recording(agent.url, path) as rec:
        scenarios = {"turns": sdk_taking_turns(step)}
        live, error = asyncio.run(run_scenario(rec.url, binding, scenarios["turns"]))
        rec.finish()
    assert error == "", error
    assert [len(e.events or ()) for e in live] == [5, 5]
    with serve_in_thread(path, pace="instant") as server:
        scenarios = {"turns": sdk_taking_turns(None)}
        replay, error = asyncio.run(run_scenario(server.agent_url(), binding, scenarios["turns"]))
    found = differences(live, replay)
    assert found == [], "\n".join([*found, error])


Conversation = Callable[[str, SubscribedUpstream | None], Any]


def gates(path: Path, conversation: Conversation, first: str) -> list[list[Any]]:
    """The conversation recorded with the `first` stream heard first: for each interaction,
    its steps' `after` without the measured gaps."""
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.stamped = upstream.stepwise = True
        upstream.subscription_first = first == "subscription"
        conversation(rec.url, upstream)
        rec.finish()
    return [
        [
            {k: v for k, v in (step.get("after") or {}).items() if k != "ms"}
            for step in (interaction.get("reply") or {}).get("task", {}).get("steps", [])
        ]
        for interaction in interactions(path)
    ]


@pytest.mark.parametrize("conversation", [interleaved, new_task_interleaved])
def test_the_recording_is_the_same_whichever_stream_is_heard_first(
    tmp_path: Path, conversation: Conversation
) -> None:
    """A message stream plays its task on replay: no step of it waits for a poll, whoever saw
    it first (the gaps measured aside)."""
    heard = {
        first: gates(tmp_path / f"{first}.yaml", conversation, first)
        for first in ("message", "subscription")
    }
    assert heard["subscription"] == heard["message"]
    assert not any("polls" in after for script in heard["message"] for after in script)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_official_client_hearing_the_subscription_first_records_the_same_gates(
    tmp_path: Path, binding: str
) -> None:
    """The official client's streams taking turns as above, the subscription's client getting
    each step first: the recording's gates are those of the stream heard first."""
    path = tmp_path / "subscription-first.yaml"
    step, held = threading.Semaphore(0), threading.Semaphore(0)
    with serve_quirky(stepwise=step, held=held) as agent, recording(agent.url, path) as rec:
        scenario = sdk_subscription_first(step, held)
        live, error = asyncio.run(run_scenario(rec.url, binding, scenario))
        rec.finish()
    assert error == "", error
    steps = interactions(path)[0]["reply"]["task"]["steps"]
    assert [sorted(step.get("after") or {}) for step in steps] == [
        [],
        ["ms", "subscribers"],
        ["ms"],
        ["ms"],
        ["ms"],
    ]
    with serve_in_thread(path, pace="instant") as server:
        scenario = sdk_subscription_first(None, None)
        replay, error = asyncio.run(run_scenario(server.agent_url(), binding, scenario))
    found = differences(live, replay)
    assert found == [], "\n".join([*found, error])
