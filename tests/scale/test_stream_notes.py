"""Open streams on a shared store read their task only when the store's channel tells of a write
(or once a second, for a note lost), not every 20 ms: idle streams cost Redis next to nothing, and a
stream on one server shows what another server wrote as soon as it is written."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis

from mockagent.engine.store.factory import store_from_url
from mockagent.engine.store.redis import RedisStore
from mockagent.server.app import create_app
from mockagent.server.thread import ServerThread
from tests.helpers.kit_conversation import HEADERS, message

CASSETTE = """\
version: 1
protocol: a2a
agent:
  name: hour
  description: a task that works for an hour
  version: '1'
  capabilities: {streaming: true}
  skills: [{id: s, name: s, description: d, tags: [t]}]
interactions:
  - name: hour
    match: {text: work}
    reply:
      task:
        steps:
          - {state: TASK_STATE_WORKING}
          - {state: TASK_STATE_COMPLETED, after: {ms: 3600000}}
"""


def body(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@contextmanager
def servers(redis_url: str, tmp_path: Path, count: int) -> Iterator[list[ServerThread]]:
    cassette = tmp_path / "hour.yaml"
    cassette.write_text(CASSETTE)
    apps = [create_app(cassette, store=store_from_url(redis_url, join=i > 0)) for i in range(count)]
    started = [ServerThread(app).start() for app in apps]
    try:
        yield started
    finally:
        for server in started:
            server.stop()


class Opened:
    """A stream read on a thread of its own: the SSE lines it got so far."""

    def __init__(self, port: int, method: str, params: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.began = threading.Event()
        self._client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
        self._thread = threading.Thread(target=self._read, args=(method, params), daemon=True)
        self._thread.start()
        assert self.began.wait(30), "the stream never began"

    def _read(self, method: str, params: dict[str, Any]) -> None:
        try:
            with self._client.stream("POST", "/", json=body(method, params), headers=HEADERS) as r:
                for line in r.iter_lines():
                    self.lines.append(line)
                    self.began.set()
        except httpx.HTTPError:
            pass  # closed by the test

    def close(self) -> None:
        self._client.close()


def hgets(url: str) -> int:
    with redis.Redis.from_url(url) as r:
        return int(r.info("commandstats").get("cmdstat_hget", {}).get("calls", 0))


def test_idle_streams_read_their_task_about_once_a_second(redis_url, tmp_path):
    with servers(redis_url, tmp_path, 1) as (server,):
        streams = [
            Opened(server.port, "SendStreamingMessage", {"message": message("work")})
            for _ in range(20)
        ]
        try:
            before, started = hgets(redis_url), time.monotonic()
            time.sleep(1.0)  # a rate is measured over time: 20 streams for 1 s
            read = hgets(redis_url) - before
            took = time.monotonic() - started
            # At most one read per stream and second and one more each (reading every 20 ms
            # made some 50 per stream and second: 1,000 here).
            assert read <= 20 * (took + 1), read
        finally:
            for stream in streams:
                stream.close()


def test_a_stream_shows_at_once_what_another_server_wrote(redis_url, tmp_path, monkeypatch):
    # No read but on a note: the event can reach the stream only by the store's channel.
    monkeypatch.setattr(RedisStore, "poll_s", 3600.0)
    with servers(redis_url, tmp_path, 2) as (a, b):
        immediate = {"message": message("work"), "configuration": {"returnImmediately": True}}
        with httpx.Client(base_url=f"http://127.0.0.1:{a.port}", timeout=30) as on_a:
            task = on_a.post("/", json=body("SendMessage", immediate), headers=HEADERS).json()
            task_id = task["result"]["task"]["id"]  # a plays it: its last step is an hour away
            stream = Opened(b.port, "SubscribeToTask", {"id": task_id})
            try:
                advanced = on_a.post("/_mockagent/clock/advance", json={"ms": 3_600_000})
                assert advanced.status_code == 200  # a's player shows the step now, on a
                deadline = time.monotonic() + 30
                while not any("TASK_STATE_COMPLETED" in line for line in stream.lines):
                    assert time.monotonic() < deadline, stream.lines  # poll: it comes soon
                    time.sleep(0.01)
            finally:
                stream.close()
