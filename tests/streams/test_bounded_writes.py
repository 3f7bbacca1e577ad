"""A stream whose events are all there at once (an instant pace) is written in pieces of at most
WRITE_BYTES, each of whole events, not in one write of the whole stream: a client that does not
read then holds a few pieces in the server, not its whole stream (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

from mockagent.dialects.http import WRITE_BYTES
from mockagent.server.app import create_app

EVENT_TEXT = 10_000
EVENTS = 40  # some 400 KB in all

A2A = {
    "version": 1,
    "protocol": "a2a",
    "agent": {
        "name": "big",
        "description": "d",
        "version": "1",
        "capabilities": {"streaming": True},
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
    },
    "interactions": [
        {
            "name": "big",
            "match": {"text": "big"},
            "reply": {
                "task": {
                    "steps": [
                        {
                            "artifact": {"artifactId": "a", "parts": [{"text": "x" * EVENT_TEXT}]},
                            "append": i > 0,
                            "lastChunk": i == EVENTS - 1,
                        }
                        for i in range(EVENTS)
                    ]
                    + [{"state": "TASK_STATE_COMPLETED"}]
                }
            },
        }
    ],
}
AGENTEX = {
    "version": 1,
    "protocol": "agentex",
    "agents": [{"id": "agent-sync", "name": "bot", "description": "d", "acp_type": "sync"}],
    "interactions": [
        {
            "name": "big",
            "match": {"text": "big"},
            "reply": {"task": {"steps": [{"say": "y" * EVENT_TEXT} for _ in range(EVENTS)]}},
        }
    ],
}


def writes(tmp_path: Path, cassette: dict, url: str, body: dict, headers: dict) -> list[bytes]:
    path = tmp_path / "big.yaml"
    path.write_text(json.dumps(cassette))
    client = create_app(path, pace="instant").test_client()
    response = client.post(url, data=json.dumps(body), headers=headers, buffered=False)
    try:
        return [chunk for chunk in response.response if chunk]
    finally:
        response.close()


def assert_bounded(written: list[bytes]) -> None:
    assert len(written) > 1, "the whole stream in one write"
    assert max(len(chunk) for chunk in written) <= WRITE_BYTES


def test_an_instant_sse_stream_goes_out_in_bounded_writes(tmp_path: Path) -> None:
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "big"}]}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": message},
    }
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    written = writes(tmp_path, A2A, "/", body, headers)
    assert_bounded(written)
    assert b"".join(written).count(b"data: ") >= EVENTS  # the chunks, whole once joined


def test_an_instant_ndjson_stream_goes_out_in_bounded_writes(tmp_path: Path) -> None:
    content = {"type": "text", "author": "user", "content": "big"}
    body = {"method": "message/send", "params": {"content": content, "stream": True}}
    written = writes(
        tmp_path, AGENTEX, "/agents/agent-sync/rpc", body, {"Content-Type": "application/json"}
    )
    assert_bounded(written)
    assert b"".join(written).count(b"y" * EVENT_TEXT) >= EVENTS
