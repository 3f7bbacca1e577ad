"""How a subscription ended or was refused live is how its replay ends or is refused.

The upstream (tests/helpers/subscribed_upstream.py) answers "ask me" with a task waiting for
input. Here it ends a subscription cleanly before the task ends, or refuses SubscribeToTask with
an error of its own; the replay, which would keep a subscription open until the task ends and
answer a known task's subscription with the task, must do as the upstream did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockagent.server.thread import serve_in_thread
from tests.helpers.recording import HEADERS, TIMEOUT, message, recording, rpc
from tests.helpers.subscribed_upstream import subscribed_upstream
from tests.helpers.subscribing import interactions, replayed, seen


def test_a_subscription_the_upstream_ends_early_replays_ending_there(tmp_path: Path) -> None:
    path = tmp_path / "closed.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.close_after = 1
        live = seen(rec.url)
        rec.finish()
    assert len(live[1]) == 1 and live[2] == "end"  # the Task, INPUT_REQUIRED, then the end
    subscription = next(i for i in interactions(path) if i["name"] == "subscribe-ask-me")
    assert subscription["fault"] == {"closeAfter": 1}
    assert "# recorded: the upstream ended the subscription after 1 events" in path.read_text()
    assert replayed(path) == live


def subscribe(url: str, task_id: str) -> Any:
    """SubscribeToTask's answer as the client saw it: `stream`, or the error with the task's
    id written `{id}` (the replay's task has another)."""
    body = {"jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask", "params": {"id": task_id}}
    with httpx.Client(timeout=TIMEOUT, trust_env=False) as http:
        with http.stream("POST", url.rstrip("/") + "/", json=body, headers=HEADERS) as answer:
            if "text/event-stream" in answer.headers.get("content-type", ""):
                return "stream"
            answer.read()
    return json.loads(answer.text.replace(task_id, "{id}"))["error"]


def refused(url: str, finish: bool) -> Any:
    """Ask (and answer the question when `finish`), then subscribe to the task."""
    task_id = rpc(url, "SendMessage", {"message": message("ask me")})["result"]["task"]["id"]
    if finish:
        answer = message("main", task_id=task_id, message_id="m2")
        rpc(url, "SendMessage", {"message": answer})
    return subscribe(url, task_id)


@pytest.mark.parametrize(
    ("finish", "error"),
    [
        (False, {"code": -32001, "message": "no subscriptions here: {id}"}),
        (True, {"code": -32004, "message": "{id} is done"}),
    ],
    ids=["not-found-while-open", "unsupported-when-done"],
)
def test_a_refused_subscription_replays_refused_the_same_way(
    tmp_path: Path, finish: bool, error: dict[str, Any]
) -> None:
    path = tmp_path / "refused.yaml"
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.refuse = error  # the message names the upstream's task id
        upstream.minted = True
        live = refused(rec.url, finish)
        rec.finish()
    assert live == error
    with serve_in_thread(path, pace="instant") as server:
        assert refused(server.url, finish) == live


def refused_after_cancel(url: str) -> Any:
    """Ask, cancel the task, then subscribe to it."""
    task_id = rpc(url, "SendMessage", {"message": message("ask me")})["result"]["task"]["id"]
    rpc(url, "CancelTask", {"id": task_id})
    return subscribe(url, task_id)


def test_a_subscription_refused_on_a_canceled_task_replays_refused_the_same_way(
    tmp_path: Path,
) -> None:
    path = tmp_path / "canceled.yaml"
    error = {"code": -32004, "message": "{id} was canceled: nothing to watch"}
    with subscribed_upstream() as upstream, recording(upstream.url, path) as rec:
        upstream.refuse = error
        upstream.minted = True
        live = refused_after_cancel(rec.url)
        rec.finish()
    assert live == error
    with serve_in_thread(path, pace="instant") as server:
        assert refused_after_cancel(server.url) == live
