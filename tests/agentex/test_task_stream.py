"""`GET /tasks/{id}/stream` and `GET /tasks/name/{name}/stream`: a task's updates as SSE, over
real HTTP.

The bundled async agent (cassettes/agentex/async-agent.yaml, mounted at /async-agent/) and a small
cassette written here for deltas and failures. A reader thread collects the frames (`data:` JSON,
`:ping` as "ping") into a queue, so a test can wait for `connected` before it sends the event.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockagent.server.thread import serve_in_thread

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "agentex"
SUMMARY = "**Summary**: the three sources agree."
END = object()  # the reader's last item: the server closed the stream
WAIT_S = 5.0
_names = itertools.count(1)

SCRIPTED = """\
version: 1
protocol: agentex
agents:
  - {id: agent-w, name: worker, description: Works., acp_type: async}
clock: {start: 2026-10-06T09:00:00Z}
ids: {seed: task-stream-tests}
interactions:
  - name: typed
    match: {operation: SendEvent, text: {startswith: type}}
    reply:
      task:
        steps:
          - say: "Hello!"
            deltas: ["Hel", "lo!"]
          - state: COMPLETED
  - name: crash
    match: {operation: SendEvent, text: {startswith: crash}}
    reply: {task: {steps: [{say: Trying.}, {state: FAILED, message: Tool crashed.}]}}
"""


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with serve_in_thread(str(CASSETTES), pace="instant", keepalive_s=0.2) as running:
        yield running


@pytest.fixture(scope="module")
def base(server: Any) -> str:
    return f"{server.url}/async-agent"


@pytest.fixture
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=WAIT_S) as c:
        yield c


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "author": "user", "content": value}


def rpc(
    client: httpx.Client, method: str, params: dict[str, Any], agent: str = "research-bot"
) -> Any:
    answer = client.post(
        f"/agents/name/{agent}/rpc", json={"method": method, "params": params}
    ).json()
    assert answer["error"] is None, answer["error"]
    return answer["result"]


class Reader:
    """Reads one SSE response in a thread; `next()` waits for the next frame (or END)."""

    def __init__(self, url: str) -> None:
        self.items: queue.Queue[Any] = queue.Queue()
        self.headers: httpx.Headers | None = None
        self.status: int | None = None
        self._opened = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(url,), daemon=True)
        self._thread.start()
        assert self._opened.wait(WAIT_S), "no response headers"

    def _run(self, url: str) -> None:
        try:
            with httpx.stream("GET", url, timeout=WAIT_S) as response:
                self.status, self.headers = response.status_code, response.headers
                self._opened.set()
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith("data: "):
                        self.items.put(json.loads(line[len("data: ") :]))
                    elif line == ":ping":
                        self.items.put("ping")
                    else:
                        assert line == "", f"unexpected SSE line {line!r}"
        finally:
            self._opened.set()
            self.items.put(END)

    def next(self) -> Any:
        return self.items.get(timeout=WAIT_S)

    def frame(self) -> Any:
        """The next frame that is not a ping."""
        while (item := self.next()) == "ping":
            pass
        return item

    def rest(self) -> list[Any]:
        """Every frame until the server closes the stream, pings left out."""
        out = []
        while (item := self.frame()) is not END:
            out.append(item)
        return out

    def close(self) -> None:
        self._stop.set()
        self._thread.join(WAIT_S)


@pytest.fixture
def open_stream() -> Iterator[Any]:
    readers: list[Reader] = []

    def open_(url: str) -> Reader:
        readers.append(Reader(url))
        return readers[-1]

    yield open_
    for reader in readers:
        reader.close()


def poll_until_done(client: httpx.Client, task_id: str, reader: Reader) -> list[Any]:
    """Polls GET /messages while collecting frames until the end, as a client of the platform
    might. (A subscribed task already ignores `polls` gates in the engine; polling must not
    disturb the stream either.)"""
    frames: list[Any] = []
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert client.get("/messages", params={"task_id": task_id}).status_code == 200
        try:
            while (item := reader.items.get(timeout=0.05)) is not END:
                if item != "ping":
                    frames.append(item)
            return frames
        except queue.Empty:
            continue
    raise AssertionError(f"the stream did not close; frames so far: {frames}")


def test_stream_of_an_async_task_from_event_to_completed(client, base, open_stream):
    task = rpc(client, "task/create", {})
    reader = open_stream(f"{base}/tasks/{task['id']}/stream")
    assert reader.status == 200
    assert reader.headers["content-type"].startswith("text/event-stream")
    assert reader.headers["x-accel-buffering"] == "no"
    assert reader.frame() == {"type": "connected", "taskId": task["id"]}
    rpc(client, "event/send", {"task_id": task["id"], "content": text("research the topic")})
    frames = poll_until_done(client, task["id"], reader)
    updates = [f for f in frames if f["type"] != "task_updated"]
    assert [(u["type"], u["index"]) for u in updates] == [
        (kind, i) for i in range(3) for kind in ("start", "full", "done")
    ]
    done = [u["parent_task_message"] for u in updates if u["type"] == "done"]
    assert [(m["content"]["content"], m["streaming_status"], m["task_id"]) for m in done] == [
        ("On it: researching.", "DONE", task["id"]),
        ("Found 3 sources.", "DONE", task["id"]),
        (SUMMARY, "DONE", task["id"]),
    ]
    assert frames[-1]["type"] == "task_updated"
    assert (frames[-1]["task"]["id"], frames[-1]["task"]["status"]) == (task["id"], "COMPLETED")
    history = client.get("/messages", params={"task_id": task["id"]}).json()
    assert [m["id"] for m in history if m["content"]["author"] == "agent"] == [
        m["id"] for m in done
    ]


def test_a_quiet_task_gets_pings(client, base, open_stream):
    task = rpc(client, "task/create", {})
    reader = open_stream(f"{base}/tasks/{task['id']}/stream")
    assert reader.next() == {"type": "connected", "taskId": task["id"]}
    assert [reader.next(), reader.next()] == [
        "ping",
        "ping",
    ]  # keepalive_s=0.2: nothing else happens


def test_stream_by_name_sees_a_cancel(client, base, open_stream):
    name = f"streamed-{next(_names)}"
    task = rpc(client, "task/create", {"name": name})
    reader = open_stream(f"{base}/tasks/name/{name}/stream")
    assert reader.frame() == {"type": "connected", "taskId": task["id"]}
    canceled = client.post(f"/tasks/{task['id']}/cancel").json()
    assert canceled.get("status") == "CANCELED", canceled
    assert [
        (f["type"], f["task"]["id"], f["task"]["status"], f["task"]["name"]) for f in reader.rest()
    ] == [("task_updated", task["id"], "CANCELED", name)]


def test_a_terminal_task_gets_connected_and_its_state_then_the_end(client, base):
    task = rpc(client, "task/create", {})
    client.post(f"/tasks/{task['id']}/cancel")
    response = client.get(f"/tasks/{task['id']}/stream")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = [json.loads(line[len("data: ") :]) for line in response.text.split("\n\n") if line]
    assert frames[0] == {"type": "connected", "taskId": task["id"]}
    assert [(f["type"], f["task"]["id"], f["task"]["status"]) for f in frames[1:]] == [
        ("task_updated", task["id"], "CANCELED")
    ]


@pytest.mark.parametrize("path", ["/tasks/no-such-task/stream", "/tasks/name/no-such-name/stream"])
def test_unknown_task_is_a_404_platform_error(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert (body["code"], body["data"]) == (404, None) and "not found" in body["message"]


def test_post_is_not_allowed(client):
    assert client.post("/tasks/anything/stream").status_code == 405


# -- deltas and failures, from a cassette written here -----------------------------------------


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("task-stream") / "worker.yaml"
    path.write_text(SCRIPTED)
    with serve_in_thread(path, pace="instant", keepalive_s=0.2) as running:
        yield running.url


def _scripted_run(url: str, event: str, open_stream: Any) -> tuple[str, list[Any]]:
    with httpx.Client(base_url=url, timeout=WAIT_S) as c:
        task = rpc(c, "task/create", {}, agent="worker")
        reader = open_stream(f"{url}/tasks/{task['id']}/stream")
        assert reader.frame() == {"type": "connected", "taskId": task["id"]}
        rpc(c, "event/send", {"task_id": task["id"], "content": text(event)}, agent="worker")
        return task["id"], reader.rest()


def test_deltas_are_streamed_piece_by_piece(scripted, open_stream):
    task_id, frames = _scripted_run(scripted, "type it", open_stream)
    assert [f["type"] for f in frames] == ["start", "delta", "delta", "done", "task_updated"]
    assert [f["delta"] for f in frames if f["type"] == "delta"] == [
        {"type": "text", "text_delta": "Hel"},
        {"type": "text", "text_delta": "lo!"},
    ]
    assert frames[3]["parent_task_message"]["content"]["content"] == "Hello!"
    assert (frames[-1]["task"]["id"], frames[-1]["task"]["status"]) == (task_id, "COMPLETED")


def test_a_failed_task_ends_with_its_reason(scripted, open_stream):
    _, frames = _scripted_run(scripted, "crash now", open_stream)
    assert [f["type"] for f in frames] == ["start", "full", "done", "task_updated"]
    assert (frames[-1]["task"]["status"], frames[-1]["task"]["status_reason"]) == (
        "FAILED",
        "Tool crashed.",
    )
