"""The calls `mockagent verify` makes on each side (the live agent, the cassette) and what came
back, as `compare.Exchange` records.

A side sends a message blocking, streamed or with `returnImmediately`, and polls a task with
GetTask, over JSON-RPC or HTTP+JSON. A stream is read to its end; one cut off is marked
`dropped`. JSON-RPC request ids and message ids count the side's calls, so both sides send the
same requests.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import httpx
from flask import Flask

from mockagent.dialects import sse_read
from mockagent.verify.compare import Event, Exchange, differences
from mockagent.verify.observe import exchange_from_http
from mockagent.verify.progress import on_its_way, result_of, task_view
from mockagent.verify.timing import Arrivals

HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}
POLL_GAP_S = 0.02
POLL_TIMEOUT_S = 5.0  # a live task that never shows what the cassette shows: how long to poll

# predicate -> a value that satisfies it (a text recorded as `{startswith: "x"}` is sent as "x")
EXAMPLE_PREDICATES = ("equals", "contains", "startswith", "endswith")
SUBSCRIPTION_WAIT_S = 10.0  # how long a stream's subscriptions may go on after it ended

Answer = tuple[int, str, bytes, bool]  # status, content type, body, cut off
Chunk = Callable[[bytes], None]  # told each piece of an answer as it comes


def example(predicate: Any) -> Any:
    """A value that satisfies `predicate`, or None when none can be read off it."""
    if isinstance(predicate, dict):
        for key in EXAMPLE_PREDICATES:
            if key in predicate:
                return predicate[key]
        return None
    return predicate


class Send(Protocol):
    """(method, path, body) -> the answer; `told`, when given, hears each piece as it comes."""

    def __call__(
        self, method: str, route: str, body: bytes | None, told: Chunk | None = None, /
    ) -> Answer: ...


def http_sender(client: httpx.Client, upstream: str) -> Send:
    """Calls to a live agent: JSON-RPC at `upstream`, HTTP+JSON routes below it."""
    root = upstream.rstrip("/")

    def send(method: str, route: str, body: bytes | None, told: Chunk | None = None) -> Answer:
        url = upstream if route == "/" else root + route
        chunks, dropped = [], False
        with client.stream(method, url, content=body, headers=HEADERS) as response:
            try:
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    if told is not None:
                        told(chunk)
            except httpx.HTTPError:  # the agent cut the answer off: that is part of the answer
                dropped = True
        content_type = response.headers.get("content-type", "")
        return response.status_code, content_type, b"".join(chunks), dropped

    return send


def wsgi_sender(app: Flask) -> Send:
    """Calls to an app in this process (the cassette served, or a recording proxy)."""
    client = app.test_client()

    def send(method: str, route: str, body: bytes | None, told: Chunk | None = None) -> Answer:
        response = client.open(route, method=method, data=body, headers=HEADERS, buffered=False)
        chunks, dropped = [], False
        try:
            for chunk in response.iter_encoded():
                chunks.append(chunk)
                if told is not None:
                    told(chunk)
        except ConnectionError:  # a scripted drop, as the WSGI servers see it
            dropped = True
        finally:
            response.close()
        return response.status_code, response.content_type or "", b"".join(chunks), dropped

    return send


def task_of(exchange: Exchange) -> dict[str, str] | None:
    """The task an answer is about, as a follow-up names it: {taskId, contextId}."""
    payloads = [exchange.body] if exchange.events is None else [e.data for e in exchange.events]
    for payload in payloads:
        result = result_of(exchange, payload)
        if not isinstance(result, dict):
            continue
        task = result.get("task", result if "status" in result else None)
        if isinstance(task, dict) and isinstance(task.get("id"), str):
            ids = {"taskId": task["id"], "contextId": task.get("contextId")}
            return {k: v for k, v in ids.items() if isinstance(v, str)}
        update = result.get("statusUpdate") or result.get("artifactUpdate")
        if isinstance(update, dict) and isinstance(update.get("taskId"), str):
            ids = {"taskId": update["taskId"], "contextId": update.get("contextId")}
            return {k: v for k, v in ids.items() if isinstance(v, str)}
    return None


class Side:
    """One side of the comparison and what it answered, call by call."""

    def __init__(self, send: Send, binding: str) -> None:
        self.send, self.binding = send, binding
        self.exchanges: list[Exchange] = []
        # interaction name -> the task this side answered it with: its id and context id
        self.tasks: dict[str, dict[str, str]] = {}
        self.arrivals: dict[int, list[float]] = {}  # a stream's exchange -> its events' times

    def _call(
        self,
        method: str,
        route: str,
        operation: str,
        params: dict[str, Any],
        told: Chunk | None = None,
    ) -> Exchange:
        number = len(self.exchanges) + 1
        if self.binding == "JSONRPC":
            method, route = "POST", "/"
            envelope = {"jsonrpc": "2.0", "id": number, "method": operation, "params": params}
            raw: bytes | None = json.dumps(envelope).encode()
        else:
            raw = json.dumps(params).encode() if method == "POST" else None
        # a sender that never streams to a watcher may take three arguments only
        sent = (method, route, raw) if told is None else (method, route, raw, told)
        status, content_type, answer, dropped = self.send(*sent)
        return exchange_from_http(
            method, route, raw or b"", status, content_type, answer, dropped=dropped
        )

    def message(self, name: str, message: dict[str, Any], mode: str, subscribers: int = 0) -> None:
        """Send `message` blocking (`block`), streamed (`stream`) or with returnImmediately
        (`polls`); remember the task it answered `name` with.

        `subscribers`: the subscriptions the script's `after: {subscribers}` gates wait for (a
        recording opened them on the task while it was streamed). They are opened as soon as
        the answer names the task (the stream's first event), as the recorded client did, and
        read to their end beside it; only the message's answer is compared."""
        params: dict[str, Any] = {
            "message": {"messageId": f"verify-{len(self.exchanges) + 1}", **message}
        }
        if mode == "polls":
            params["configuration"] = {"returnImmediately": True}
        streamed = mode == "stream"
        operation = "SendStreamingMessage" if streamed else "SendMessage"
        route = "/message:stream" if streamed else "/message:send"
        opened: list[threading.Thread] = []
        watch = _TaskWatch(self, subscribers, opened) if subscribers else None
        arrivals = Arrivals()

        def told(chunk: bytes) -> None:
            arrivals(chunk)
            if watch is not None:
                watch(chunk)

        exchange = self._call("POST", route, operation, params, told if streamed else watch)
        if streamed:
            self.arrivals[len(self.exchanges)] = arrivals.offsets
        self.exchanges.append(exchange)
        task = task_of(exchange)
        if task is not None:
            self.tasks[name] = task
            if watch is not None:
                watch.found(task["taskId"])
        deadline = time.monotonic() + SUBSCRIPTION_WAIT_S
        for thread in opened:
            thread.join(max(0.0, deadline - time.monotonic()))

    def subscribe(self, task_id: str) -> None:
        """Open a subscription to the task and read it to its end (what it says is not kept)."""
        self._call("POST", f"/tasks/{task_id}:subscribe", "SubscribeToTask", {"id": task_id})

    def get_task(self, task_id: str) -> Exchange:
        """One GetTask; the caller decides whether it is kept."""
        return self._call("GET", f"/tasks/{task_id}", "GetTask", {"id": task_id})

    def poll(self, task_id: str, expected: Exchange | None = None) -> int:
        """Poll a task once; with `expected`, poll again while the answer is not the expected one
        but the task is on its way there (a live agent works at its own pace), until
        POLL_TIMEOUT_S passes. Polling past a drift would move an agent that advances on polls
        beyond it, and the diff would show a later state than the one that drifted. Returns how
        many polls were made."""
        deadline = time.monotonic() + POLL_TIMEOUT_S
        seen = task_view(self.exchanges[-1]) if self.exchanges else None
        answer = self.get_task(task_id)
        made = 1
        while (
            expected is not None
            and differences([answer], [expected])
            and on_its_way(answer, expected, seen)
            and time.monotonic() < deadline
        ):
            seen = task_view(answer)
            time.sleep(POLL_GAP_S)
            answer = self.get_task(task_id)
            made += 1
        self.exchanges.append(answer)
        return made


class _TaskWatch:
    """Reads a message's answer as it comes; once it names its task, opens `count`
    subscriptions to that task, each read in a thread of its own (added to `opened`)."""

    def __init__(self, side: Side, count: int, opened: list[threading.Thread]) -> None:
        self.side, self.count, self.opened = side, count, opened
        self.reader = sse_read.Reader()
        self.done = False

    def __call__(self, chunk: bytes) -> None:
        if self.done:
            return
        for event in self.reader.feed(chunk):
            try:
                payload = json.loads(event.data)
            except ValueError:
                continue
            events_so_far = (Event("message", payload),)
            task = task_of(
                Exchange("SendStreamingMessage", self.side.binding, 200, events=events_so_far)
            )
            if task is not None:
                self.found(task["taskId"])
                return

    def found(self, task_id: str) -> None:
        """The answer named its task: open the subscriptions (once)."""
        if self.done:
            return
        self.done = True
        for _ in range(self.count):
            thread = threading.Thread(target=self.side.subscribe, args=(task_id,), daemon=True)
            thread.start()
            self.opened.append(thread)
