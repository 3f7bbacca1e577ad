"""A raw A2A upstream (JSON-RPC) whose subscriptions the test paces, for recording them.

- SendMessage "ask me": a new task, INPUT_REQUIRED "Which branch?".
- SendMessage on that task: the task goes WORKING, gets the artifact `answer` "Using branch
  <text>" (one chunk, the last), and COMPLETED; the blocking answer (the Task, COMPLETED) goes at
  once, and each open subscription is handed the three updates.
- SubscribeToTask: the Task as it is, then the updates. Before its first update the
  subscription waits for `release` (set from the start unless `held()`), so a test decides that
  the follow-up's answer reaches the recording proxy first. With `drop_after = N` the connection
  is cut after N events; with `hold_at = N` the subscription stays open after N events until
  the upstream stops, then is cut; with `close_after = N` the stream ends cleanly after N events.
- SendStreamingMessage on that task: the same updates as a stream, once `streamed` is set
  (set from the start), so a test decides which stream reaches the recording proxy first. With
  `stepwise` set, each update goes to this stream and to the open subscriptions one at a time,
  each when the test calls `step.release()` (this stream first, or with `subscription_first`
  the subscriptions): the test has both streams see one update before the next. Each update
  changes the task as it is handed on (a subscription opened meanwhile sees the task so far).
- SendStreamingMessage of a new message, with `stepwise` set: a new task, SUBMITTED, streamed
  as its Task, then the updates of a follow-up, handed on in the same way.
- CancelTask: the task ends CANCELED.
With `stamped` set, the messages in a task carry its ids.
With `refuse` set (a JSON-RPC error object) every SubscribeToTask is answered with that error,
`{id}` in it written as the task's id.

Written with http.server, as tests/helpers/faulty_upstream.py, to break a stream off mid-body.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WAIT = 10.0  # seconds a paced subscription waits at most


@dataclass
class SubscribedUpstream:
    url: str
    release: threading.Event = field(default_factory=threading.Event)
    stopping: threading.Event = field(default_factory=threading.Event)
    drop_after: int | None = None
    hold_at: int | None = None
    close_after: int | None = None
    refuse: dict[str, Any] | None = None
    streamed: threading.Event = field(default_factory=threading.Event)
    stepwise: bool = False
    subscription_first: bool = False
    step: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    stamped: bool = False  # messages in a task carry its taskId and contextId
    minted: bool = False  # task ids that look minted (uuids), as a recording rewrites them
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    queues: dict[str, list[queue.Queue[dict[str, Any]]]] = field(default_factory=dict)

    def held(self) -> SubscribedUpstream:
        """Subscriptions wait for `release` before their first update."""
        self.release.clear()
        return self


def _card(url: str) -> dict[str, Any]:
    return {
        "name": "subscribed",
        "description": "An agent whose subscriptions lag",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "ask", "name": "ask", "description": "asks", "tags": ["ask"]}],
    }


def _follow_up(up: SubscribedUpstream, task: dict[str, Any], text: str) -> list[dict[str, Any]]:
    ids = {"taskId": task["id"], "contextId": task["contextId"]}
    artifact = {"artifactId": "answer", "name": "answer", "parts": [{"text": f"Using {text}"}]}
    updates = [
        {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_WORKING"}}},
        {"artifactUpdate": {**ids, "artifact": artifact, "lastChunk": True}},
        {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_COMPLETED"}}},
    ]
    if not up.stepwise:  # else the streamed answer hands each on as it goes
        for update in updates:
            _apply(task, update)
        for waiting in up.queues.get(task["id"], []):
            for update in updates:
                waiting.put(update)
    return updates


def _apply(task: dict[str, Any], update: dict[str, Any]) -> None:
    """The task as `update` leaves it."""
    if "statusUpdate" in update:
        task["status"] = update["statusUpdate"]["status"]
    else:
        task["artifacts"] = [update["artifactUpdate"]["artifact"]]


@contextmanager
def subscribed_upstream() -> Iterator[SubscribedUpstream]:
    """The upstream on a free port of 127.0.0.1; subscriptions end when the block does."""
    lock = threading.Lock()
    state: dict[str, SubscribedUpstream] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, payload: Any) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self._json(_card(state["u"].url))

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            up, params, rid = state["u"], body.get("params") or {}, body.get("id")
            if body.get("method") == "SubscribeToTask" and up.refuse is not None:
                text = json.dumps(up.refuse).replace("{id}", str(params.get("id")))
                self._json({"jsonrpc": "2.0", "id": rid, "error": json.loads(text)})
                return
            if body.get("method") == "SubscribeToTask":
                self._subscribe(up, str(params.get("id")), rid)
                return
            if body.get("method") == "CancelTask":  # ends the task CANCELED, no message
                with lock:
                    task = up.tasks[str(params.get("id"))]
                    task["status"] = {"state": "TASK_STATE_CANCELED"}
                    snapshot = json.loads(json.dumps(task))
                self._json({"jsonrpc": "2.0", "id": rid, "result": snapshot})
                return
            message = params.get("message") or {}
            text = " ".join(p.get("text", "") for p in message.get("parts") or [])
            updates: list[dict[str, Any]] = []
            with lock:
                if message.get("taskId") in up.tasks:
                    task = up.tasks[message["taskId"]]
                    task["history"].append(message)
                    updates = _follow_up(up, task, text)
                else:
                    n = len(up.tasks) + 1
                    task_id = str(uuid.uuid4()) if up.minted else f"task-{n}"
                    ids = {"taskId": task_id, "contextId": f"ctx-{n}"}
                    stamped = {**message, **ids} if up.stamped else message
                    task = {"id": task_id, "contextId": f"ctx-{n}", "history": [stamped]}
                    question = {"messageId": f"q-{n}", "role": "ROLE_AGENT"}
                    question.update(ids if up.stamped else {})
                    question["parts"] = [{"text": "Which branch?"}]
                    task["status"] = {"state": "TASK_STATE_INPUT_REQUIRED", "message": question}
                    up.tasks[task["id"]] = task
                    if body.get("method") == "SendStreamingMessage" and up.stepwise:
                        task["status"] = {"state": "TASK_STATE_SUBMITTED"}
                        updates = _follow_up(up, task, text)
                snapshot = json.loads(json.dumps(task))
            if body.get("method") == "SendStreamingMessage" and updates:
                first = None if message.get("taskId") else {"task": snapshot}
                self._stream(up, updates, rid, first)
                return
            self._json({"jsonrpc": "2.0", "id": rid, "result": {"task": snapshot}})

        def _stream(
            self,
            up: SubscribedUpstream,
            updates: list[dict[str, Any]],
            rid: Any,
            first: dict[str, Any] | None = None,
        ) -> None:
            up.streamed.wait(WAIT)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if first is not None:
                payload = {"jsonrpc": "2.0", "id": rid, "result": first}
                self._chunk(f"data: {json.dumps(payload)}\n\n".encode())
            for update in updates:
                payload = {"jsonrpc": "2.0", "id": rid, "result": update}
                event = f"data: {json.dumps(payload)}\n\n".encode()
                if not up.stepwise:
                    self._chunk(event)
                    continue
                task_id = next(iter(update.values()))["taskId"]
                for subscribers in (up.subscription_first, not up.subscription_first):
                    up.step.acquire(timeout=WAIT)
                    if subscribers == up.subscription_first:  # handed on first: it happens
                        with lock:
                            _apply(up.tasks[task_id], update)
                    if not subscribers:
                        self._chunk(event)
                        continue
                    with lock:
                        for waiting in up.queues.get(task_id, []):
                            waiting.put(update)
            self.close_connection = True
            self._chunk(b"")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _subscribe(self, up: SubscribedUpstream, task_id: str, rid: Any) -> None:
            waiting: queue.Queue[dict[str, Any]] = queue.Queue()
            with lock:
                up.queues.setdefault(task_id, []).append(waiting)
                snapshot = json.loads(json.dumps(up.tasks[task_id]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            event, sent = {"task": snapshot}, 0
            while True:
                payload = {"jsonrpc": "2.0", "id": rid, "result": event}
                self._chunk(f"data: {json.dumps(payload)}\n\n".encode())
                sent += 1
                if up.hold_at == sent:
                    up.stopping.wait(WAIT)
                if sent in (up.drop_after, up.hold_at):
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                state_of = (event.get("statusUpdate") or {}).get("status", {}).get("state")
                if state_of == "TASK_STATE_COMPLETED" or sent == up.close_after:
                    self.close_connection = True  # no thread left waiting on a kept-alive socket
                    self._chunk(b"")
                    return
                event = waiting.get(timeout=WAIT)
                up.release.wait(WAIT)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    upstream = SubscribedUpstream(f"http://127.0.0.1:{server.server_address[1]}")
    upstream.release.set()
    upstream.streamed.set()
    state["u"] = upstream
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield upstream
    finally:
        upstream.stopping.set()
        upstream.release.set()
        upstream.streamed.set()
        server.shutdown()
        server.server_close()
        thread.join()
