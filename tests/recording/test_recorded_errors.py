"""A message the agent refuses replays with the agent's own refusal: its message, its details and
(HTTP+JSON) its HTTP status, not mockagent's words for the same kind (issue 17: "errors, status
codes" field for field)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.server.thread import serve_in_thread
from tests.helpers.recording import BINDINGS, HEADERS, HTTP, message, recording

# The agent refusing: mockagent itself, with a refusal in words, details and a status of its own.
DETAIL = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    "reason": "UNSUPPORTED_OPERATION",
    "domain": "a2a-protocol.org",
    "metadata": {"why": "this agent reviews diffs only"},
}
REFUSER = {
    "version": 1,
    "agent": {
        "name": "refuser",
        "description": "Refuses what is not a diff.",
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
                    "details": [DETAIL],
                    "status": 409,
                }
            },
        }
    ],
}


def send(url: str, binding: str, method: str) -> tuple[int, Any]:
    """SendMessage or SendStreamingMessage refused before any event: (HTTP status, error)."""
    params = {"message": message("please look at this")}
    if binding == "JSONRPC":
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = HTTP.post(url.rstrip("/") + "/", json=body, headers=HEADERS)
    else:
        path = "/message:send" if method == "SendMessage" else "/message:stream"
        response = HTTP.post(url.rstrip("/") + path, json=params, headers=HEADERS)
    return response.status_code, response.json()["error"]


@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_refused_message_replays_with_the_agents_words_details_and_status(
    tmp_path: Path, binding: str, method: str
) -> None:
    upstream = tmp_path / "refuser.yaml"
    upstream.write_text(yaml.safe_dump(REFUSER, sort_keys=False))
    path = tmp_path / "recorded.yaml"
    with serve_in_thread(upstream, pace="instant") as agent, recording(agent.url, path) as rec:
        live = send(rec.url, binding, method)
        assert rec.finish() == path
    assert live[1]["message"] == "I only review diffs"  # the agent's refusal reached the client
    with serve_in_thread(path, pace="instant") as replay:
        again = send(replay.url, binding, method)
    assert again == live  # before: mockagent's own message, ErrorInfo and (REST) 400
    [written] = yaml.safe_load(path.read_text())["interactions"]
    assert written["reply"]["error"]["message"] == "I only review diffs"
