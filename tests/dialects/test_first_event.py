"""`reply.task.first` says how a SendStreamingMessage stream opens, on every binding and version:
`task` (unset) a Task showing the first step, `task-as-is` a Task as the call found it, `update`
no Task at all. The kinds, order and count of events follow it; replays stay byte-identical."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mockagent.server.app import create_app

OPENINGS = [None, "task", "task-as-is", "update"]
FOLLOW_UPS = "\n".join(
    f"""\
  - name: follow-up-{opening or "unset"}
    match: {{text: {opening or "unset"}, task: {{state: INPUT_REQUIRED, from: ask}}}}
    reply:
      task:
        {"" if opening is None else f"first: {opening}"}
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {{artifactId: answer, parts: [{{text: Using main}}]}}
            after: {{ms: 40}}
          - state: TASK_STATE_COMPLETED
            after: {{ms: 40}}
  - name: new-{opening or "unset"}
    match: {{text: new {opening or "unset"}}}
    reply:
      task:
        {"" if opening is None else f"first: {opening}"}
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
            after: {{ms: 40}}"""
    for opening in OPENINGS
)
CASSETTE = f"""\
version: 1
agent:
  name: opener
  description: Opens its streams in each way.
  capabilities: {{streaming: true}}
  skills: [{{id: s, name: S, description: Streams.}}]
clock: {{start: 2026-10-06T09:00:00Z, pace: instant}}
interactions:
  - name: ask
    match: {{text: ask}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which branch?
{FOLLOW_UPS}
"""
V1 = {"A2A-Version": "1.0"}
V03 = {"A2A-Version": "0.3"}
FLAVOURS = ["v1.0 JSONRPC", "v1.0 HTTP+JSON", "v0.3 JSONRPC", "v0.3 HTTP+JSON"]
FOLLOW_UP = {
    None: [("task", "working"), ("artifact", None), ("status", "completed")],
    "task": [("task", "working"), ("artifact", None), ("status", "completed")],
    "task-as-is": [
        ("task", "input-required"),
        ("status", "working"),
        ("artifact", None),
        ("status", "completed"),
    ],
    "update": [("status", "working"), ("artifact", None), ("status", "completed")],
}
NEW = {
    None: [("task", "working"), ("status", "completed")],
    "task": [("task", "working"), ("status", "completed")],
    "task-as-is": [("task", "submitted"), ("status", "working"), ("status", "completed")],
    "update": [("status", "working"), ("status", "completed")],
}


@pytest.fixture
def opener(tmp_path: Path) -> Any:
    path = tmp_path / "opener.yaml"
    path.write_text(CASSETTE)
    return create_app(path).test_client()


def waiting_task(client: Any) -> dict[str, Any]:
    """A task asking for input (a blocking v1.0 SendMessage)."""
    message = {"messageId": "m-ask", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    task = client.post("/", json=body, headers=V1).get_json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    return dict(task)


def streamed(client: Any, flavour: str, text: str, task: dict[str, Any] | None) -> str:
    """The SSE body of a streamed message in `flavour`; a follow-up on `task` if given."""
    ids = {} if task is None else {"taskId": task["id"], "contextId": task["contextId"]}
    if flavour == "v1.0 JSONRPC":
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}], **ids}
        body = {"method": "SendStreamingMessage", "params": {"message": message}}
        response = client.post("/", json={"jsonrpc": "2.0", "id": 7, **body}, headers=V1)
    elif flavour == "v1.0 HTTP+JSON":
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}], **ids}
        response = client.post("/message:stream", json={"message": message}, headers=V1)
    elif flavour == "v0.3 JSONRPC":
        parts = [{"kind": "text", "text": text}]
        message = {"kind": "message", "messageId": "m-1", "role": "user", "parts": parts, **ids}
        body = {"method": "message/stream", "params": {"message": message}}
        response = client.post("/", json={"jsonrpc": "2.0", "id": 7, **body}, headers=V03)
    else:
        proto = {"task_id": ids["taskId"], "context_id": ids["contextId"]} if ids else {}
        message = {"message_id": "m-1", "role": "ROLE_USER", "content": [{"text": text}], **proto}
        response = client.post("/v1/message:stream", json={"request": message}, headers=V03)
    assert response.status_code == 200, response.data
    assert response.headers["Content-Type"].startswith("text/event-stream")
    return str(response.get_data(as_text=True))


def stream(client: Any, flavour: str, text: str, task: dict[str, Any] | None) -> list[Any]:
    """The events of a streamed message in `flavour` (the JSON-RPC results, or REST bodies)."""
    lines = streamed(client, flavour, text, task).splitlines()
    events = [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: ")]
    return [e["result"] if "jsonrpc" in e else e for e in events]


def state_word(state: str) -> str:
    """`TASK_STATE_INPUT_REQUIRED` (v1.0, v0.3 REST) or `input-required` (v0.3 JSON-RPC)."""
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")


def seen(event: dict[str, Any]) -> tuple[str, str | None]:
    """(kind, state) of one event, whatever its version's shape."""
    kind = event.get("kind") or next(iter(event))
    body = event if "kind" in event else event[kind]
    kind = {"statusUpdate": "status", "status-update": "status"}.get(kind, kind)
    kind = {"artifactUpdate": "artifact", "artifact-update": "artifact"}.get(kind, kind)
    state = (body.get("status") or {}).get("state")
    return kind, None if state is None else state_word(state)


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("opening", OPENINGS, ids=lambda o: f"first={o or 'unset'}")
def test_a_follow_up_stream_opens_as_the_reply_says(opener, flavour, opening):
    task = waiting_task(opener)
    events = stream(opener, flavour, opening or "unset", task)
    assert [seen(e) for e in events] == FOLLOW_UP[opening]
    if opening == "task-as-is":  # the task as the call found it: the question, then the answer
        snapshot = events[0].get("task", events[0])
        assert snapshot["id"] == task["id"] and snapshot["status"]["timestamp"]
        texts = [
            part.get("text")
            for message in snapshot["history"]
            for part in message.get("parts") or message.get("content")
        ]
        assert texts == ["ask", "Which branch?", "task-as-is"]


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("opening", OPENINGS, ids=lambda o: f"first={o or 'unset'}")
def test_a_new_task_stream_opens_as_the_reply_says(opener, flavour, opening):
    events = stream(opener, flavour, f"new {opening or 'unset'}", None)
    assert [seen(e) for e in events] == NEW[opening]
    if opening == "task-as-is":  # a task no step has touched yet still has a status timestamp
        snapshot = events[0].get("task", events[0])
        assert snapshot["status"]["timestamp"].startswith("2026-10-06T09:00:00")


def test_v0_3_marks_only_the_last_update_final(opener):
    events = stream(opener, "v0.3 JSONRPC", "update", waiting_task(opener))
    assert [e.get("final") for e in events] == [False, None, True]


def test_each_opening_replays_byte_identically(tmp_path):
    path = tmp_path / "opener.yaml"
    path.write_text(CASSETTE)

    def run() -> list[str]:
        client = create_app(path).test_client()
        bodies = []
        for flavour in FLAVOURS:
            for opening in OPENINGS:
                word = opening or "unset"
                bodies.append(streamed(client, flavour, word, waiting_task(client)))
                bodies.append(streamed(client, flavour, f"new {word}", None))
        return bodies

    first, second = run(), run()
    assert first == second and len(first) == 2 * len(FLAVOURS) * len(OPENINGS)
