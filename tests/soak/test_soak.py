"""Soak: 32 concurrent clients for 30 seconds mixing send, poll, stream, subscribe and cancel on one
server — zero errors, zero cross-talk between tasks, no growth in threads or memory.

Marked `soak`: CI runs it (`scripts/test` runs everything); `scripts/test -m "not soak"` is the
quick run while working."""

from __future__ import annotations

import gc
import json
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockagent.server.thread import serve_in_thread

KIT = Path(__file__).resolve().parents[2] / "cassettes" / "kit"
CLIENTS = 32
SECONDS = 30.0
V1 = {"A2A-Version": "1.0"}

pytestmark = pytest.mark.soak


def message(text: str, tag: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": tag, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def sse_payloads(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")]


class Client(threading.Thread):
    """One client looping over the mix; every answer is checked against its own task."""

    def __init__(self, base: str, number: int, deadline: float) -> None:
        super().__init__(daemon=True)
        self.base, self.number, self.deadline = base, number, deadline
        self.errors: list[str] = []
        self.rounds = 0

    def check(self, condition: bool, what: str) -> None:
        if not condition:
            self.errors.append(f"client {self.number}: {what}")

    def run(self) -> None:
        with httpx.Client(timeout=30) as http:
            while time.monotonic() < self.deadline and not self.errors:
                try:
                    self.round(http, f"c{self.number}-r{self.rounds}")
                except Exception as exc:  # any transport failure is an error of the soak
                    self.errors.append(f"client {self.number}: {type(exc).__name__}: {exc}")
                self.rounds += 1

    def round(self, http: httpx.Client, tag: str) -> None:
        runner = f"{self.base}/test-runner"
        # send (polled) and two polls: SUBMITTED, WORKING, COMPLETED, on this client's own task
        sent = http.post(
            f"{runner}/message:send",
            headers=V1,
            json={
                "message": message("Run the tests at 9f3c2e1", tag),
                "configuration": {"returnImmediately": True},
            },
        ).json()
        task = sent["task"]
        self.check(
            task["status"]["state"] == "TASK_STATE_SUBMITTED", f"send: {task['status']['state']}"
        )
        states = [http.get(f"{runner}/tasks/{task['id']}", headers=V1).json() for _ in range(2)]
        self.check([s["id"] for s in states] == [task["id"]] * 2, "poll answered another task")
        self.check(states[-1]["status"]["state"] == "TASK_STATE_COMPLETED", "poll did not complete")
        self.check(
            states[-1]["history"][0]["messageId"] == tag, "cross-talk: another client's message"
        )
        # stream: the kit's nine frames, all of this stream's task
        with http.stream(
            "POST",
            f"{runner}/message:stream",
            headers=V1,
            json={"message": message("Run the tests at 9f3c2e1", tag + "-s")},
        ) as response:
            frames = sse_payloads(response)
        self.check(len(frames) == 9, f"stream: {len(frames)} frames")
        ids = {frames[0]["task"]["id"]} | {next(iter(f.values())).get("taskId") for f in frames[1:]}
        self.check(len(ids) == 1, "cross-talk in a stream")
        # subscribe to a waiting task, then cancel it from this client: the subscription ends
        # CANCELED
        reviewer = f"{self.base}/code-reviewer"
        asked = http.post(
            f"{reviewer}/message:send",
            headers=V1,
            json={
                "message": message(
                    "review",
                    tag + "-r",
                    parts=[{"text": "--- a\n+++ b\n", "mediaType": "text/x-diff"}],
                )
            },
        ).json()["task"]
        self.check(asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", "review did not ask")
        with http.stream(
            "GET", f"{reviewer}/tasks/{asked['id']}:subscribe", headers=V1
        ) as response:
            lines = response.iter_lines()
            first = next(line for line in lines if line.startswith("data:"))
            self.check(
                json.loads(first[5:])["task"]["id"] == asked["id"], "subscribe: another task"
            )
            canceled = http.post(f"{reviewer}/tasks/{asked['id']}:cancel", headers=V1).json()
            self.check(canceled["status"]["state"] == "TASK_STATE_CANCELED", "cancel failed")
            rest = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
        self.check(
            rest and rest[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED",
            "subscription did not end CANCELED",
        )


def request_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def test_soak(tmp_path: Path) -> None:
    with serve_in_thread(KIT, pace="instant", keepalive_s=1.0) as server:
        warm = Client(server.url, -1, time.monotonic() + 1.0)
        warm.run()
        assert not warm.errors, warm.errors
        gc.collect()
        threads_before = threading.active_count()
        tracemalloc.start()
        try:
            memory_before = tracemalloc.get_traced_memory()[0]
            deadline = time.monotonic() + SECONDS
            clients = [Client(server.url, n, deadline) for n in range(CLIENTS)]
            for client in clients:
                client.start()
            for client in clients:
                client.join(SECONDS + 60)
            # the tasks and the journal are kept by design: forget them, then measure
            server.reset()
            end = time.monotonic() + 10
            while request_threads() and time.monotonic() < end:
                time.sleep(0.05)
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - memory_before
        finally:
            tracemalloc.stop()
    errors = [e for client in clients for e in client.errors]
    assert errors == [], errors[:10]
    assert all(not client.is_alive() for client in clients)
    assert all(client.rounds >= 1 for client in clients), [client.rounds for client in clients]
    assert request_threads() == 0 and threading.active_count() <= threads_before + 2
    assert grown < 5_000_000, f"{grown} bytes kept after the soak and a reset"
