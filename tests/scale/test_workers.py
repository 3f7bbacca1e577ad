"""`mockagent serve --workers 2 --store redis://…`, and streams that follow a task another server moves."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mockagent.engine.taskstore import store_from_url
from mockagent.server.app import create_app
from mockagent.server.thread import ServerThread

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "cassettes" / "kit"
DIFF = {"raw": "LS0tIGEKKysrIGIK", "mediaType": "text/x-diff"}


def post(port: int, path: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One call on a connection of its own, so a load balancer or gunicorn may pick any worker."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    connection.request("POST", path, body, {"Content-Type": "application/json", "A2A-Version": "1.0"})
    response = connection.getresponse()
    data = json.loads(response.read())
    connection.close()
    return data


def subscribe(port: int, task_id: str, into: list[dict[str, Any]]) -> threading.Thread:
    """Read a SubscribeToTask stream in a thread, appending each event's result."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask", "params": {"id": task_id}})
    connection.request("POST", "/code-reviewer/", body, {"Content-Type": "application/json", "A2A-Version": "1.0"})
    response = connection.getresponse()
    assert response.status == 200
    first = response.readline()  # the snapshot: the subscription is open once it arrives
    into.append(json.loads(first.decode().removeprefix("data:"))["result"])

    def read() -> None:
        for line in response:
            if line.startswith(b"data:"):
                into.append(json.loads(line[5:])["result"])
        connection.close()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_a_subscription_follows_a_task_another_server_moves_on(redis_url):
    a = ServerThread(create_app(KIT, store=store_from_url(redis_url), pace="instant")).start()
    b = ServerThread(create_app(KIT, store=store_from_url(redis_url, join=True), pace="instant")).start()
    try:
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Please review"}, DIFF]}
        task = post(a.port, "/code-reviewer/", "SendMessage", {"message": message})["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        events: list[dict[str, Any]] = []
        reader = subscribe(a.port, task["id"], events)
        follow_up = {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "main"}],
                     "taskId": task["id"], "contextId": task["contextId"]}
        done = post(b.port, "/code-reviewer/", "SendMessage", {"message": follow_up})["result"]["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        reader.join(timeout=10)
        assert not reader.is_alive(), "the subscription did not end at COMPLETED"
        kinds = [next(iter(e)) for e in events]
        assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        a.stop()
        b.stop()


def serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_serve_with_two_workers_shares_tasks_between_them(redis_url):
    server = serve("--workers", "2", "--store", redis_url)
    try:
        lines = []
        while not (line := server.stdout.readline()).startswith("mockagent ready"):  # type: ignore[union-attr]
            assert line, server.stderr.read()  # type: ignore[union-attr]
            lines.append(line)
        assert "with 2 workers" in line
        port = int(line.split()[3].rsplit(":", 1)[1])
        tasks = []
        for _ in range(6):  # each call on a new connection: both workers answer some of them
            result = post(port, "/test-runner/", "SendMessage", {"message": {
                "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Run the tests at 9f3c2e1"}]},
                "configuration": {"returnImmediately": True}})
            tasks.append(result["result"]["task"]["id"])
        assert len(set(tasks)) == 6
        for task_id in tasks:
            states = [post(port, "/test-runner/", "GetTask", {"id": task_id})["result"]["status"]["state"]
                      for _ in range(4)]
            assert states[-1] == "TASK_STATE_COMPLETED", states
        listed = post(port, "/test-runner/", "ListTasks", {"pageSize": 100})["result"]
        assert sorted(t["id"] for t in listed["tasks"]) == sorted(tasks)
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
        deadline = time.monotonic() + 10
        while children.exists() and len(children.read_text().split()) < 2:  # Linux: poll for both
            assert time.monotonic() < deadline, "gunicorn did not fork two workers"  # (forked apart)
            time.sleep(0.01)
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "mockagent stopped" in out
    assert "Traceback" not in err


def test_several_workers_need_a_shared_store():
    result = subprocess.run([sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--workers", "2"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "several workers need a shared store" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unreachable_store_is_a_clear_error(redis_server):
    dead = redis_server.rsplit(":", 1)[0] + ":1/0"  # nothing listens on port 1
    result = subprocess.run([sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--store", dead],
                            capture_output=True, text=True, timeout=60, env={**os.environ})
    assert result.returncode == 1
    assert "cannot use the store at" in result.stderr and "Traceback" not in result.stderr


def test_concurrent_calls_on_two_servers_lose_nothing(redis_url):
    """Leases under load: every call answered once, ids never twice, every task and entry kept."""
    servers = [ServerThread(create_app(KIT, store=store_from_url(redis_url, join=i > 0), pace="instant")).start()
               for i in range(2)]
    ids: list[str] = []
    errors: list[BaseException] = []

    def client(port: int) -> None:
        try:
            for _ in range(15):
                result = post(port, "/test-runner/", "SendMessage", {"message": {
                    "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Run the suite"}]}})
                ids.append(result["result"]["task"]["id"])
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(servers[i % 2].port,)) for i in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == [] and len(ids) == 120 and len(set(ids)) == 120
        listed = post(servers[1].port, "/test-runner/", "ListTasks", {"pageSize": 100})["result"]
        assert listed["totalSize"] == 120
        engine = servers[0].agents["test-runner"]
        with engine.locked():
            assert len(engine.journal.entries) == 121  # and the ListTasks call
    finally:
        for server in servers:
            server.stop()
