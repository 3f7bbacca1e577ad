"""CancelTask and SubscribeToTask on a task id the recording never saw (one the client made up)
replay with the agent's own refusal, not mockagent's TaskNotFound (issue 17).

The a2a-sdk agent (tests/helpers/upstream.py) and the quirky agent (tests/helpers/quirky_app.py)
each refuse an unknown id in their own words and details; the cassette keeps that refusal as an
interaction matching the operation only, once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.lint.run import lint
from mockagent.server.thread import serve_in_thread
from tests.helpers.quirky_app import serve_quirky
from tests.helpers.recording import BINDINGS, HEADERS, HTTP, message, recording
from tests.helpers.upstream import serve_upstream

MADE_UP = "no-such-task"

Refusal = tuple[int, list[Any]]  # HTTP status, the JSON payloads (the body, or each SSE event's)


def refusal(url: str, binding: str, operation: str) -> Refusal:
    """`operation` on the made-up task id: the HTTP status and what the client got."""
    url = url.rstrip("/")
    if binding == "JSONRPC":
        body: dict[str, Any] | None = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": operation,
            "params": {"id": MADE_UP},
        }
        method, target = "POST", url + "/"
    elif operation == "CancelTask":
        body, method, target = {}, "POST", f"{url}/tasks/{MADE_UP}:cancel"
    else:
        body, method, target = None, "GET", f"{url}/tasks/{MADE_UP}:subscribe"
    with HTTP.stream(method, target, json=body, headers=HEADERS) as response:
        response.read()
        text = response.text
    if "data:" in text:  # an SSE stream whose event is the error
        lines = text.splitlines()
        payloads = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    else:
        payloads = [json.loads(text)]
    return response.status_code, payloads


def session(url: str, binding: str, cancel_first: bool = False) -> list[Refusal]:
    """A task the recording sees, then a cancel and a subscription on an id nobody minted;
    `cancel_first`: a cancel of the real task before them (answered by the replay's store)."""
    if binding == "JSONRPC":
        params = {"message": message("ask me")}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
        sent = HTTP.post(url.rstrip("/") + "/", json=body, headers=HEADERS)
        task = sent.json()["result"]["task"]
    else:
        sent = HTTP.post(
            url.rstrip("/") + "/message:send", json={"message": message("ask me")}, headers=HEADERS
        )
        task = sent.json()["task"]
    assert sent.status_code == 200
    if cancel_first:
        if binding == "JSONRPC":
            body = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task["id"]}}
            HTTP.post(url.rstrip("/") + "/", json=body, headers=HEADERS)
        else:
            HTTP.post(f"{url.rstrip('/')}/tasks/{task['id']}:cancel", json={}, headers=HEADERS)
    return [refusal(url, binding, op) for op in ("CancelTask", "SubscribeToTask")]


def record_and_replay(
    serve: Callable[[], AbstractContextManager[Any]], tmp: Path, binding: str
) -> tuple[list[Refusal], list[Refusal], dict[str, Any]]:
    path = tmp / "unknown.yaml"
    with serve() as agent, recording(agent.url, path) as rec:
        live = session(rec.url, binding)
        assert rec.finish() == path
    with serve_in_thread(path, pace="instant") as replay:
        again = session(replay.url, binding)
    with serve_in_thread(path, pace="instant") as replay:  # a real task's cancel takes nothing
        assert session(replay.url, binding, cancel_first=True) == again
    assert [str(finding) for finding in lint(path)] == []
    return live, again, yaml.safe_load(path.read_text())


def refusals(cassette: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        i
        for i in cassette["interactions"]
        if i["match"].get("task") == {"known": False} and "error" in i.get("reply", {})
    ]


@pytest.mark.parametrize("serve", [serve_upstream, serve_quirky], ids=["a2a-sdk", "quirky"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_an_unknown_task_is_refused_on_replay_as_the_agent_refused_it(
    tmp_path: Path, binding: str, serve: Callable[[], AbstractContextManager[Any]]
) -> None:
    live, again, cassette = record_and_replay(serve, tmp_path, binding)
    assert all(status != 200 or payloads for status, payloads in live)
    assert again == live
    recorded = refusals(cassette)
    assert [i["match"]["operation"] for i in recorded] == ["CancelTask", "SubscribeToTask"]
    for interaction in recorded:
        assert interaction["match"]["task"] == {"known": False}
        assert interaction["times"] == 1
        assert interaction["reply"]["error"]["name"] == "TaskNotFound"
