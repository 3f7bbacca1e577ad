"""Record a raw agent whose answers skip states (issue 17, problems 1 and 3), replay the cassette,
and compare what the client saw, history included: status messages the client only ever saw in
`history`, and a returnImmediately follow-up answered with the task as it was, then polled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mockagent.lint.run import lint
from mockagent.server.thread import serve_in_thread
from tests.helpers.history_agent import serve_history_agent
from tests.helpers.recording import A2A, BINDINGS, message, recording, task_id_of
from tests.helpers.upstream import serve_upstream

TERMINAL = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED")
Scenario = Callable[[A2A], list[Any]]


def seen_message(message: dict[str, Any] | None) -> Any:
    """A message as the client sees it, ids aside: role, parts and metadata."""
    if not message:
        return None
    return {k: message.get(k) for k in ("role", "parts", "metadata")}


def seen(ok: bool, payload: Any) -> dict[str, Any]:
    """A SendMessage or GetTask answer without ids and timestamps, history included."""
    assert ok, payload
    task = payload.get("task", payload)
    return {
        "state": task["status"]["state"],
        "status": seen_message(task["status"].get("message")),
        "history": [seen_message(m) for m in task.get("history") or []],
        "artifacts": [
            (a["artifactId"], a.get("name"), a["parts"]) for a in task.get("artifacts") or []
        ],
    }


def poll_to_the_end(client: A2A, task_id: str) -> list[dict[str, Any]]:
    polls = [seen(*client.get_task(task_id))]
    while polls[-1]["state"] not in TERMINAL and len(polls) < 10:
        polls.append(seen(*client.get_task(task_id)))
    return polls


def blocking_turns(client: A2A) -> list[Any]:
    """Problem 1: blocking calls and a poll that only show the end of a turn."""
    out = []
    ok, asked = client.send(message("ask me", message_id="u1"))
    task_id = task_id_of(ok, asked)
    out += [seen(ok, asked), seen(*client.get_task(task_id))]
    out.append(seen(*client.send(message("main", task_id=task_id, message_id="u2"))))
    out.append(seen(*client.get_task(task_id)))
    ok, polled = client.send(message("ask again", message_id="u3"), return_immediately=True)
    task_id = task_id_of(ok, polled)
    out += [seen(ok, polled), seen(*client.get_task(task_id))]
    out.append(seen(*client.send(message("dev", task_id=task_id, message_id="u4"))))
    return out


def polled_follow_up(client: A2A) -> list[Any]:
    """Problem 3: a returnImmediately follow-up, answered INPUT_REQUIRED, then polled."""
    ok, asked = client.send(message("ask me", message_id="u1"))
    task_id = task_id_of(ok, asked)
    answer = client.send(message("main", task_id=task_id, message_id="u2"), True)
    return [seen(ok, asked), seen(*answer), poll_to_the_end(client, task_id)]


def sdk_turns(client: A2A) -> list[Any]:
    """The a2a-sdk agent: a blocking build (WORKING "Building" is only in history), a question
    and its answer, each looked at again with GetTask."""
    out = []
    for text, follow_up in (("build it", None), ("ask me", "main")):
        ok, sent = client.send(message(text, message_id="u1"))
        task_id = task_id_of(ok, sent)
        out += [seen(ok, sent), seen(*client.get_task(task_id))]
        if follow_up:
            out.append(seen(*client.send(message(follow_up, task_id=task_id, message_id="u2"))))
    return out


def record_and_replay(
    tmp_path: Path, scenario: Scenario, upstream: Callable[[], Any] = serve_history_agent
) -> tuple[Path, dict[str, Any]]:
    """What the client saw live through the proxy, and on replay, per binding."""
    path = tmp_path / "history.yaml"
    live, replayed = {}, {}
    with upstream() as agent, recording(agent.url, path) as rec:
        for binding in BINDINGS:
            live[binding] = scenario(A2A(rec.url, binding))
        assert rec.finish() == path
    with serve_in_thread(path, pace="instant") as replay:
        for binding in BINDINGS:
            replayed[binding] = scenario(A2A(replay.agent_url(), binding))
        assert all(entry.matched for entry in replay.journal())
    return path, {"live": live, "replayed": replayed}


@pytest.mark.parametrize("binding", BINDINGS)
def test_history_keeps_the_status_messages_a_blocking_answer_skipped(
    tmp_path: Path, binding: str
) -> None:
    path, views = record_and_replay(tmp_path, blocking_turns)
    live = views["live"][binding]
    texts = [m["parts"][0]["text"] for m in live[3]["history"]]
    assert texts == ["ask me", "Working on it", "Which branch?", "main", "Checking out main"]
    assert live[0]["history"][1]["metadata"] == {"phase": "prepare"}
    assert live[5]["state"] == "TASK_STATE_INPUT_REQUIRED" and len(live[5]["history"]) == 2
    assert views["replayed"][binding] == live
    assert lint(path) == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_polled_follow_up_that_first_shows_the_task_as_it_was_finishes(
    tmp_path: Path, binding: str
) -> None:
    path, views = record_and_replay(tmp_path, polled_follow_up)
    live = views["live"][binding]
    assert live[1]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert live[1]["history"][-1]["parts"] == [{"text": "main"}]
    assert [p["state"] for p in live[2]] == [
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
    ]
    assert views["replayed"][binding] == live
    assert lint(path) == []


def test_the_a2a_sdk_agents_history_replays_as_it_was(tmp_path: Path) -> None:
    path, views = record_and_replay(tmp_path, sdk_turns, serve_upstream)
    built = views["live"]["JSONRPC"][0]
    assert [m["parts"] for m in built["history"][1:]] == [[{"text": "Building"}]]
    assert views["replayed"] == views["live"]
    assert lint(path) == []
