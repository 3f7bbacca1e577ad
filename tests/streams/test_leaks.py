"""Abandoned streams leave no threads or memory behind, and break nothing for other clients."""

from __future__ import annotations

import gc
import threading
import time
import tracemalloc

import httpx

from mockagent.server.admin.control import advance_clock
from tests.helpers.streams import V1, read_sse, send


def open_and_abandon(client: httpx.Client, url: str) -> None:
    with client.stream("GET", url, headers=V1, timeout=5) as response:
        assert (
            read_sse(response, stop_after=1).payloads[0]["task"]["status"]["state"]
            == "TASK_STATE_WORKING"
        )
    # leaving the block closes the connection mid-stream


def request_threads(port: int) -> int:
    """The server's per-connection threads (named mockagent:PORT:CLIENT-PORT)."""
    return sum(thread.name.startswith(f"mockagent:{port}:") for thread in threading.enumerate())


def settle(port: int, deadline_s: float = 10.0) -> tuple[int, int]:
    """Poll until no request thread is left (or the deadline passes); (request threads, all)."""
    end = time.monotonic() + deadline_s
    while request_threads(port) and time.monotonic() < end:
        time.sleep(0.05)
    return request_threads(port), threading.active_count()


def test_two_hundred_abandoned_subscriptions_leave_no_threads_or_memory(server):
    task = send(server, "forever", returnImmediately=True)["task"]
    url = f"{server.url}/tasks/{task['id']}:subscribe"
    client = httpx.Client()  # one client: a new one per stream costs more than the stream
    for _ in range(10):  # warm up: imports, caches, the player thread
        open_and_abandon(client, url)
    assert settle(server.port)[0] == 0
    baseline = threading.active_count()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            open_and_abandon(client, url)
        left, after_threads = settle(
            server.port
        )  # each ends at its next keep-alive write, 0.2 s here
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        client.close()
    assert left == 0 and after_threads <= baseline, f"{left} request threads left behind"
    assert grown < 1_000_000, (
        f"{grown} bytes kept after 200 abandoned streams"
    )  # the journal keeps ~1 KB a call


def test_a_client_leaving_mid_stream_does_not_break_the_task_for_others(server):
    task = send(server, "paced", returnImmediately=True)["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    url = f"{server.url}/tasks/{task['id']}:subscribe"
    with httpx.stream("GET", url, headers=V1, timeout=5) as leaving:
        assert read_sse(
            leaving, stop_after=1
        ).payloads  # subscribed (the task now plays), then gone
    with httpx.stream("GET", url, headers=V1, timeout=5) as staying:
        advance_clock(server.mounts, 600_000)  # subscribed again while it plays: now it ends
        events = read_sse(staying).payloads
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert httpx.get(f"{server.url}/tasks/{task['id']}", headers=V1).json()["artifacts"][0][
        "parts"
    ] == [{"text": "half"}]
