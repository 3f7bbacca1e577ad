"""An A2A v0.3 agent refusing over the `/v1` REST binding answers `{message, type}` (a2a-sdk 0.3's
error class names), not google.rpc.Status. The recording keeps the refusal's kind and words, so
the replay answers the same body and status (issue 17: "errors, status codes" field for field).

The upstream is mockagent itself, whose v0.3 REST errors are `{message, type}`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from flask import Flask, request

from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.recording import HTTP, recording

REFUSER = {
    "version": 1,
    "agent": {
        "name": "refuser",
        "description": "Refuses what is not a diff, and any cancel.",
        "capabilities": {"streaming": True},
        "skills": [{"id": "s", "name": "S", "description": "S."}],
    },
    "interactions": [
        {
            "name": "refuse",
            "match": {"text": {"contains": "please"}},
            "reply": {
                "error": {
                    "name": "UnsupportedOperation",
                    "message": "I only review diffs",
                    "status": 409,
                }
            },
        },
        {
            "name": "ask",
            "match": {"text": {"contains": "ask"}},
            "reply": {
                "task": {
                    "steps": [{"state": "TASK_STATE_INPUT_REQUIRED", "message": "Which branch?"}]
                }
            },
        },
        {
            "name": "keep",
            "match": {"operation": "CancelTask"},
            "reply": {"error": {"name": "TaskNotCancelable", "message": "Too late to stop"}},
        },
    ],
}

Answer = tuple[int, Any]


def v0_3_message(text: str) -> dict[str, Any]:
    """A v0.3 REST SendMessageRequest (the proto's JSON: `content`, `ROLE_USER`)."""
    return {
        "message": {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": text}]},
        "configuration": {"blocking": True},
    }


def refused_twice(url: str) -> list[Answer]:
    """A message refused, then a cancel refused on a task waiting for input: (status, body)."""
    base = url.rstrip("/") + "/v1"
    refused = HTTP.post(f"{base}/message:send", json=v0_3_message("please look"))
    sent = HTTP.post(f"{base}/message:send", json=v0_3_message("ask me"))
    assert sent.status_code == 200, sent.text
    task_id = sent.json()["task"]["id"]
    kept = HTTP.post(f"{base}/tasks/{task_id}:cancel", json={})
    return [(r.status_code, r.json()) for r in (refused, kept)]


def test_a_v0_3_rest_refusal_replays_with_its_type_message_and_status(tmp_path: Path) -> None:
    upstream = tmp_path / "refuser.yaml"
    upstream.write_text(yaml.safe_dump(REFUSER, sort_keys=False))
    path = tmp_path / "recorded.yaml"
    with serve_in_thread(upstream, pace="instant") as agent, recording(agent.url, path) as rec:
        live = refused_twice(rec.url)
        assert rec.finish() == path
    assert live == [
        (409, {"message": "I only review diffs", "type": "UnsupportedOperationError"}),
        (400, {"message": "Too late to stop", "type": "TaskNotCancelableError"}),
    ]  # the agent's answers, as a2a-sdk 0.3 writes them, reached the client
    with serve_in_thread(path, pace="instant") as replay:
        again = refused_twice(replay.url)
    assert again == live  # before: {"message": "Internal error", "type": "InternalError"}, 500
    cassette = yaml.safe_load(path.read_text())
    errors = [i["reply"].get("error") for i in cassette["interactions"]]
    assert {"name": "UnsupportedOperation", "message": "I only review diffs", "status": 409} in (
        errors
    )
    assert "v03" not in cassette["agent"]  # `{message, type}` is the default v0.3 REST shape


def quota_agent() -> Any:
    """A raw v0.3 REST agent whose refusal has a `type` no a2a-sdk error class has."""
    app = Flask("quota")

    @app.get("/.well-known/agent-card.json")
    def card() -> Any:
        return {
            "name": "quota",
            "description": "Refuses every message: over quota.",
            "version": "1.0.0",
            "protocolVersion": "0.3.0",
            "url": request.host_url + "v1",
            "preferredTransport": "HTTP+JSON",
            "capabilities": {},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "S.", "tags": []}],
        }

    @app.post("/v1/message:send")
    def send() -> Any:
        return {"message": "Slow down", "type": "QuotaExceededError"}, 429

    return app


def test_an_unknown_v0_3_rest_error_type_replays_as_the_agent_sent_it(tmp_path: Path) -> None:
    path = tmp_path / "recorded.yaml"
    agent = ServerThread(quota_agent()).start()
    try:
        with recording(agent.url, path) as rec:
            live = HTTP.post(f"{rec.url.rstrip('/')}/v1/message:send", json=v0_3_message("hi"))
            assert rec.finish() == path
    finally:
        agent.stop()
    assert (live.status_code, live.json()) == (
        429,
        {"message": "Slow down", "type": "QuotaExceededError"},
    )
    with serve_in_thread(path, pace="instant") as replay:
        again = HTTP.post(f"{replay.url.rstrip('/')}/v1/message:send", json=v0_3_message("hi"))
    assert (again.status_code, again.json()) == (live.status_code, live.json())  # not InternalError
    error = yaml.safe_load(path.read_text())["interactions"][0]["reply"]["error"]
    assert error["details"] == [{"type": "QuotaExceededError"}]


INTERNAL_INFO = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    "reason": "INTERNAL_ERROR",
    "domain": "a2a-protocol.org",
    "metadata": {"type": "QuotaExceededError"},
}


def test_an_unknown_v0_3_rest_error_type_replays_over_v1_0_as_a_v1_0_error(
    tmp_path: Path,
) -> None:
    # No live counterpart: the agent speaks v0.3 only. A v1.0 client gets the kind the v0.3
    # client read (Internal), the agent's words and HTTP status, and the agent's `type` in the
    # ErrorInfo's metadata: never a detail without `@type`, never a status that is not 429's.
    path = tmp_path / "recorded.yaml"
    agent = ServerThread(quota_agent()).start()
    try:
        with recording(agent.url, path) as rec:
            HTTP.post(f"{rec.url.rstrip('/')}/v1/message:send", json=v0_3_message("hi"))
            assert rec.finish() == path
    finally:
        agent.stop()
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    with serve_in_thread(path, pace="instant") as replay:  # the interaction answers once
        rest = HTTP.post(f"{replay.url.rstrip('/')}/message:send", json={"message": message})
    with serve_in_thread(path, pace="instant") as replay:
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": message},
        }
        rpc = HTTP.post(replay.url, json=request, headers={"A2A-Version": "1.0"})
    assert (rest.status_code, rest.json()) == (
        429,
        {
            "error": {
                "code": 429,
                "status": "RESOURCE_EXHAUSTED",
                "message": "Slow down",
                "details": [INTERNAL_INFO],
            }
        },
    )
    assert rpc.json() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Slow down", "data": [INTERNAL_INFO]},
    }
