"""An Agentex NDJSON stream: updates already there leave in one write; later ones when they come."""

from __future__ import annotations

import json
from pathlib import Path

from mockagent.server.app import create_app

CASSETTE = """\
version: 1
protocol: agentex
agents:
  - {id: agent-sync, name: echo-bot, description: Answers., acp_type: sync}
clock: {start: 2026-10-06T09:00:00Z}
ids: {seed: coalescing}
interactions:
  - name: three
    match: {text: three?}
    reply:
      task:
        steps:
          - say: "One."
            deltas: ["O", "ne."]
          - say: "Two."
            after: {ms: 100}
          - say: "Three."
            after: {ms: 100}
"""


def chunks(tmp_path: Path, pace: str) -> list[bytes]:
    path = tmp_path / "agentex.yaml"
    path.write_text(CASSETTE)
    client = create_app(path, pace=pace).test_client()
    body = {
        "method": "message/send",
        "params": {
            "content": {"type": "text", "author": "user", "content": "three?"},
            "stream": True,
        },
    }
    response = client.post(
        "/agents/agent-sync/rpc",
        data=json.dumps(body),
        headers={"Content-Type": "application/json"},
        buffered=False,
    )
    try:
        return [chunk for chunk in response.response if chunk]
    finally:
        response.close()


def kinds(written: list[bytes]) -> list[str]:
    lines = b"".join(written).decode().splitlines()
    return [json.loads(line)["result"]["type"] for line in lines]


def test_an_instant_stream_is_one_write_of_every_line(tmp_path):
    written = chunks(tmp_path, "instant")
    assert len(written) == 1 and written[0].endswith(b"\n")
    assert kinds(written) == ["start", "delta", "delta", "done"] + ["start", "full", "done"] * 2


def test_a_paced_stream_writes_each_message_when_it_comes(tmp_path):
    written = chunks(tmp_path, "recorded")
    assert len(written) >= 2, (
        written
    )  # (a reader slower than a gap may find two messages due at once)
    assert all(kinds([chunk])[-1] == "done" for chunk in written)  # a message's updates go together
    assert kinds(written) == ["start", "delta", "delta", "done"] + ["start", "full", "done"] * 2
