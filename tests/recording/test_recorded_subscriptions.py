"""A subscription replays as its client saw it live: every event, whatever order the recording
proxy heard the subscription and a concurrent blocking follow-up in, and cut off where it was.

The upstream (tests/helpers/subscribed_upstream.py) answers "ask me" with a task waiting for
input; a subscription to it gets the Task, and after the follow-up WORKING, the artifact and
COMPLETED. The test holds the subscription's updates until the client has the follow-up's
answer, so the proxy hears them in the order that used to lose the subscription's events.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.recording import recording, view_events, wait_for
from tests.helpers.subscribed_upstream import subscribed_upstream
from tests.helpers.subscribing import interactions, replayed, seen, subscribed


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
