"""A subscription read by a client, live or replayed: its events and how it ended (for tests in
tests/recording/ that record subscriptions from tests/helpers/subscribed_upstream.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from mockagent.server.thread import serve_in_thread
from tests.helpers.recording import (
    HEADERS,
    TIMEOUT,
    message,
    rpc,
    view_events,
    view_result,
    wait_for,
)

Seen = tuple[Any, list[Any], str]  # the follow-up's answer, the subscription's events, its end


class Subscription:
    """A SubscribeToTask stream (or, given `body`, another JSON-RPC stream) read on a thread:
    its events, each as it comes, and how it ended."""

    def __init__(self, url: str, task_id: str = "", body: dict[str, Any] | None = None) -> None:
        self.events: list[tuple[str, Any]] = []
        self.ended = ""
        body = body or {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "SubscribeToTask",
            "params": {"id": task_id},
        }
        self._thread = threading.Thread(target=self._read, args=(url, body), daemon=True)
        self._thread.start()

    def _read(self, url: str, body: dict[str, Any]) -> None:
        try:
            with (
                httpx.Client(timeout=TIMEOUT, trust_env=False) as http,
                http.stream("POST", url.rstrip("/") + "/", json=body, headers=HEADERS) as answer,
            ):
                for line in answer.iter_lines():
                    if line.startswith("data:"):
                        self.events.append(("message", json.loads(line[5:])["result"]))
            self.ended = "end"
        except (httpx.RemoteProtocolError, httpx.ReadError):
            self.ended = "dropped"

    def join(self) -> None:
        self._thread.join(TIMEOUT)
        assert self.ended, "the subscription did not end"


@contextmanager
def subscribed(url: str) -> Iterator[tuple[Subscription, Callable[[], Any]]]:
    """Ask, subscribe to the task, and (once the Task came) offer the follow-up to send."""
    asked = rpc(url, "SendMessage", {"message": message("ask me")})["result"]["task"]
    subscription = Subscription(url, asked["id"])
    wait_for(lambda: subscription.events, what="the subscription's Task")

    def follow_up() -> Any:
        answer = message("main", task_id=asked["id"], message_id="m2")
        return view_result(True, rpc(url, "SendMessage", {"message": answer})["result"])

    yield subscription, follow_up
    subscription.join()


def seen(url: str, after_answer: Callable[[], Any] = lambda: None) -> Seen:
    with subscribed(url) as (subscription, follow_up):
        answer = follow_up()
        after_answer()
    return answer, view_events(subscription.events), subscription.ended


def replayed(path: Path) -> Seen:
    with serve_in_thread(path, pace="instant") as server:
        return seen(server.url)


def interactions(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text())["interactions"])
