"""A subscription replays as its client saw it live: every event, whatever order the recording
proxy heard the subscription and a concurrent blocking follow-up in, and cut off where it was.

The upstream (tests/helpers/subscribed_upstream.py) answers "ask me" with a task waiting for
input; a subscription to it gets the Task, and after the follow-up WORKING, the artifact and
COMPLETED. The test holds the subscription's updates until the client has the follow-up's
answer, so the proxy hears them in the order that used to lose the subscription's events.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from mockagent.server.thread import serve_in_thread
from tests.helpers.recording import (
    HEADERS,
    TIMEOUT,
    message,
    recording,
    rpc,
    view_events,
    view_result,
    wait_for,
)
from tests.helpers.subscribed_upstream import subscribed_upstream

Seen = tuple[Any, list[Any], str]  # the follow-up's answer, the subscription's events, its end


class Subscription:
    """A SubscribeToTask stream read on a thread: its events and how it ended."""

    def __init__(self, url: str, task_id: str) -> None:
        self.events: list[tuple[str, Any]] = []
        self.ended = ""
        body = {"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task_id}}
        self._thread = threading.Thread(target=self._read, args=(url, body), daemon=True)
        self._thread.start()

    def _read(self, url: str, body: dict[str, Any]) -> None:
        try:
            with (
                httpx.Client(timeout=TIMEOUT, trust_env=False) as http,
                http.stream("POST", url.rstrip("/") + "/", json=body, headers=HEADERS) as answer,
            ):
                for line in answer.iter_lines():
                    if line.startswith("data:"):
                        self.events.append(("message", json.loads(line[5:])["result"]))
            self.ended = "end"
        except (httpx.RemoteProtocolError, httpx.ReadError):
            self.ended = "dropped"

    def join(self) -> None:
        self._thread.join(TIMEOUT)
        assert self.ended, "the subscription did not end"


@contextmanager
def subscribed(url: str) -> Iterator[tuple[Subscription, Callable[[], Any]]]:
    """Ask, subscribe to the task, and (once the Task came) offer the follow-up to send."""
    asked = rpc(url, "SendMessage", {"message": message("ask me")})["result"]["task"]
    subscription = Subscription(url, asked["id"])
    wait_for(lambda: subscription.events, what="the subscription's Task")

    def follow_up() -> Any:
        answer = message("main", task_id=asked["id"], message_id="m2")
        return view_result(True, rpc(url, "SendMessage", {"message": answer})["result"])

    yield subscription, follow_up
    subscription.join()


def seen(url: str, after_answer: Callable[[], Any] = lambda: None) -> Seen:
    with subscribed(url) as (subscription, follow_up):
        answer = follow_up()
        after_answer()
    return answer, view_events(subscription.events), subscription.ended


def replayed(path: Path) -> Seen:
    with serve_in_thread(path, pace="instant") as server:
        return seen(server.url)


def interactions(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text())["interactions"])


def test_a_subscription_heard_after_the_blocking_answer_replays_every_event(
    tmp_path: Path,
) -> None:
    path = tmp_path / "behind.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.held()
        live = seen(rec.url, after_answer=upstream.release.set)
        rec.finish()
    assert [e[:2] for e in live[1]] == [
        (
            "task",
            {
                "state": "TASK_STATE_INPUT_REQUIRED",
                "status": [{"text": "Which branch?"}],
                "artifacts": [],
            },
        ),
        ("status", "TASK_STATE_WORKING"),
        ("artifact", "answer"),
        ("status", "TASK_STATE_COMPLETED"),
    ]
    assert replayed(path) == live
    follow_up = interactions(path)[1]["reply"]["task"]["steps"]
    assert [s.get("state") or "artifact" for s in follow_up] == [
        "TASK_STATE_WORKING",
        "artifact",
        "TASK_STATE_COMPLETED",
    ]
    assert follow_up[1]["lastChunk"] is True  # the flag the subscription saw, not the snapshot's


def test_a_subscription_the_upstream_drops_replays_dropped_at_the_same_event(
    tmp_path: Path,
) -> None:
    path = tmp_path / "dropped.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.drop_after = 2
        live = seen(rec.url)
        rec.finish()
    assert len(live[1]) == 2 and live[2] == "dropped"
    subscription = interactions(path)[-1]
    assert subscription == {
        "name": "subscribe-ask-me",
        "match": {"operation": "SubscribeToTask", "task": {"from": "ask-me"}},
        "fault": {"dropAfter": 2},
        "times": 1,
    }
    assert "# recorded: the upstream closed the stream after 2 events" in path.read_text()
    assert replayed(path) == live


def test_a_subscription_open_when_the_recording_stops_replays_as_dropped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "held.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.hold_at = 2
        with subscribed(rec.url) as (subscription, follow_up):
            answer = follow_up()
            wait_for(lambda: len(subscription.events) == 2, what="the WORKING event")
            rec.finish()
    live = answer, view_events(subscription.events), subscription.ended
    assert live[2] == "dropped"
    assert interactions(path)[-1]["fault"] == {"dropAfter": 2}
    assert replayed(path) == live
