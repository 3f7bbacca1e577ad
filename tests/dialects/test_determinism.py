"""Two fresh servers given the same calls answer byte for byte the same."""

from __future__ import annotations

import json

from freezegun import freeze_time

from mockagent.server.app import create_app
from tests.helpers.dialects import SMALL
from tests.helpers.paths import KIT

CALLS = [
    (
        "/test-runner",
        {
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "a",
                    "role": "ROLE_USER",
                    "parts": [{"text": "Run the tests at 9f3c2e1"}],
                },
                "configuration": {"returnImmediately": True},
            },
        },
    ),
    ("/test-runner/tasks", None),
    (
        "/code-reviewer",
        {
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "b",
                    "role": "ROLE_USER",
                    "parts": [{"text": "Which languages do you review?"}],
                }
            },
        },
    ),
    (
        "/deployer",
        {
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "c",
                    "role": "ROLE_USER",
                    "parts": [{"text": "Deploy build 42 to staging"}],
                }
            },
        },
    ),
]


def replay(client) -> list[bytes]:
    out = []
    for path, body in CALLS:
        if body is None:
            out.append(client.get(path, headers={"A2A-Version": "1.0"}).data)
        else:
            out.append(client.post(path, json={"jsonrpc": "2.0", "id": 1, **body}).data)
    task_id = json.loads(out[0])["result"]["task"]["id"]
    for _ in range(2):
        out.append(client.get(f"/test-runner/tasks/{task_id}", headers={"A2A-Version": "1.0"}).data)
    return out


def test_fresh_servers_are_byte_identical():
    first = replay(create_app(KIT).test_client())
    second = replay(create_app(KIT).test_client())
    assert first == second
    completed = json.loads(first[-1])
    assert completed["status"]["state"] == "TASK_STATE_COMPLETED"
    assert completed["status"]["timestamp"].startswith("2026-10-06T09:00:")


def test_cassette_without_clock_start_follows_freezegun(tmp_path):
    path = tmp_path / "agent.yaml"
    path.write_text(SMALL.replace("clock: {start: 2026-10-06T09:00:00Z}\n", ""))
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "work"}]}
    bodies = []
    for _ in range(2):
        with freeze_time("2031-02-03T04:05:06Z"):
            client = create_app(path).test_client()
            bodies.append(client.post("/message:send", json={"message": message}).data)
    assert bodies[0] == bodies[1]
    assert json.loads(bodies[0])["task"]["status"]["timestamp"].startswith("2031-02-03T04:05:0")
