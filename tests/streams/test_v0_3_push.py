"""v0.3 webhooks: a task created by a v0.3 call (JSON-RPC `message/send`, REST `/v1/message:send`)
has every event POSTed as the whole v0.3 Task JSON (`kind: "task"`, lowercase states), as
reference/a2a.md §6 says; a task created by a v1.0 call still gets StreamResponse bodies."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mockagent.server.app import create_app
from tests.helpers.paths import KIT

RUN = "Run the tests at 9f3c2e1"
DEADLINE_S = 5.0
# The reference run's events: SUBMITTED, WORKING, five log chunks, the summary, COMPLETED.
EVENTS = 9


class Receiver:
    """A webhook receiver on 127.0.0.1: records (path, headers, body) of every POST, answers 200."""

    def __init__(self) -> None:
        self.hits: list[tuple[str, dict[str, str], Any]] = []
        self.changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.changed:
                    receiver.hits.append(
                        (
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            json.loads(raw),
                        )
                    )
                    receiver.changed.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def wait_for(self, path: str, count: int) -> list[tuple[dict[str, str], Any]]:
        def mine() -> list[tuple[dict[str, str], Any]]:
            return [(headers, body) for p, headers, body in self.hits if p == path]

        with self.changed:
            self.changed.wait_for(lambda: len(mine()) >= count, DEADLINE_S)
            hits = mine()
        assert len(hits) >= count, f"{path}: {len(hits)} of {count} notifications"
        time.sleep(0.1)  # none more than expected
        with self.changed:
            return mine()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def kit():
    return create_app(KIT, pace="instant").test_client()  # what is pushed, not when


def post(client, path: str, body: Any, headers: dict[str, str]) -> Any:
    response = client.post(
        f"/test-runner{path}",
        data=json.dumps(body),
        headers={"Content-Type": "application/json", **headers},
    )
    assert response.status_code == 200, response.data
    return response.get_json()


def assert_v03_task_bodies(bodies: list[Any], task_id: str) -> None:
    for body in bodies:
        assert body["kind"] == "task" and body["id"] == task_id and "contextId" in body
        assert "TASK_STATE" not in json.dumps(body) and "ROLE_" not in json.dumps(body)
    assert [b["status"]["state"] for b in bodies][:2] == ["submitted", "working"]
    assert bodies[-1]["status"]["state"] == "completed"
    assert [a["artifactId"] for a in bodies[-1]["artifacts"]] == ["test-log", "summary"]
    assert bodies[-1]["artifacts"][1]["parts"] == [
        {"kind": "data", "data": {"passed": 11, "failed": 1}}
    ]


def test_v03_jsonrpc_message_send_pushes_v03_tasks(kit, receiver):
    push = {
        "url": f"{receiver.url}/v03-rpc",
        "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
    }
    params = {
        "message": {
            "kind": "message",
            "messageId": "m-1",
            "role": "user",
            "parts": [{"kind": "text", "text": RUN}],
        },
        "configuration": {"blocking": True, "pushNotificationConfig": push},
    }
    task = post(
        kit, "/", {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}, {}
    )["result"]
    hits = receiver.wait_for("/v03-rpc", EVENTS)
    assert len(hits) == EVENTS
    assert all(
        h["authorization"] == "Bearer secret" and h["x-a2a-notification-token"] == "tok"
        for h, _ in hits
    )
    assert_v03_task_bodies([body for _, body in hits], task["id"])


def test_v03_rest_message_send_pushes_v03_tasks(kit, receiver):
    body = {
        "request": {"message_id": "m-2", "role": "ROLE_USER", "content": [{"text": RUN}]},
        "configuration": {
            "blocking": True,
            "push_notification": {"url": f"{receiver.url}/v03-rest"},
        },
    }
    task = post(kit, "/v1/message:send", body, {"A2A-Version": "0.3"})["task"]
    hits = receiver.wait_for("/v03-rest", EVENTS)
    assert_v03_task_bodies([body for _, body in hits], task["id"])


def test_v10_send_still_pushes_stream_responses(kit, receiver):
    params = {
        "message": {"messageId": "m-3", "role": "ROLE_USER", "parts": [{"text": RUN}]},
        "configuration": {"taskPushNotificationConfig": {"url": f"{receiver.url}/v10"}},
    }
    task = post(
        kit,
        "/",
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params},
        {"A2A-Version": "1.0"},
    )["result"]["task"]
    bodies = [body for _, body in receiver.wait_for("/v10", EVENTS)]
    assert [next(iter(b)) for b in bodies] == ["statusUpdate"] * 2 + ["artifactUpdate"] * 6 + [
        "statusUpdate"
    ]
    assert all(next(iter(b.values()))["taskId"] == task["id"] for b in bodies)
    assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "kind" not in json.dumps(bodies)
