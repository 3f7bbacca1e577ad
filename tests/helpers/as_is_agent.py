"""A raw Flask A2A v1.0 agent that opens a follow-up stream with the task as it is.

Only SendStreamingMessage, over JSON-RPC (`POST /`) and HTTP+JSON (`POST /message:stream`):

- a new message -> a Task SUBMITTED, a statusUpdate WORKING, then INPUT_REQUIRED "Which branch?";
- a message on that task -> first the Task as the message found it, still INPUT_REQUIRED (with
  the message in its history), then statusUpdate WORKING, the artifact `answer` "Using <text>",
  statusUpdate COMPLETED.

`keep_question`: whether that first Task still shows "Which branch?" as its status message, or
has moved it to history as a2a-sdk's task manager does. Both are what the specification allows.
`busy`: the new task's first snapshot already shows several changes (WORKING and the artifact
`plan`), then INPUT_REQUIRED follows.
"""

from __future__ import annotations

import copy
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, request

from mockagent.server.thread import ServerThread


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _card(url: str) -> dict[str, Any]:
    return {
        "name": "as-is",
        "description": "Opens follow-up streams with the task as it is.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}
            for binding in ("JSONRPC", "HTTP+JSON")
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "ask", "name": "Ask", "description": "Asks a branch.", "tags": []}],
    }


class AsIsAgent:
    """The agent's tasks (by id) and its answers, as lists of StreamResponse objects."""

    def __init__(self, keep_question: bool, busy: bool = False) -> None:
        self.keep_question = keep_question
        self.busy = busy
        self.tasks: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        text = " ".join(p.get("text", "") for p in message.get("parts") or [])
        with self.lock:
            task = self.tasks.get(message.get("taskId", ""))
            if task is None:
                return self._ask(message)
            return self._follow_up(task, message, text)

    def _status(self, task: dict[str, Any], state: str, text: str | None = None) -> dict[str, Any]:
        """Move `task` to `state` (with a status message if `text`); its statusUpdate."""
        status: dict[str, Any] = {"state": state, "timestamp": _now()}
        if text is not None:
            status["message"] = {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_AGENT",
                "parts": [{"text": text}],
                "taskId": task["id"],
                "contextId": task["contextId"],
            }
        task["status"] = status
        ids = {"taskId": task["id"], "contextId": task["contextId"]}
        return {"statusUpdate": {**ids, "status": copy.deepcopy(status)}}

    def _ask(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        task_id, context_id = str(uuid.uuid4()), message.get("contextId") or str(uuid.uuid4())
        task: dict[str, Any] = {"id": task_id, "contextId": context_id}
        task["history"] = [{**message, "taskId": task_id, "contextId": context_id}]
        self.tasks[task_id] = task
        if self.busy:
            self._status(task, "TASK_STATE_WORKING")
            task["artifacts"] = [{"artifactId": "plan", "parts": [{"text": "a plan"}]}]
            return [
                {"task": copy.deepcopy(task)},
                self._status(task, "TASK_STATE_INPUT_REQUIRED", "Which branch?"),
            ]
        self._status(task, "TASK_STATE_SUBMITTED")
        return [
            {"task": copy.deepcopy(task)},
            self._status(task, "TASK_STATE_WORKING"),
            self._status(task, "TASK_STATE_INPUT_REQUIRED", "Which branch?"),
        ]

    def _follow_up(
        self, task: dict[str, Any], message: dict[str, Any], text: str
    ) -> list[dict[str, Any]]:
        if not self.keep_question and "message" in task["status"]:
            task["history"].append(task["status"].pop("message"))
        task["history"].append(message)
        as_is = {"task": copy.deepcopy(task)}  # before any work on the message
        artifact = {"artifactId": "answer", "name": "answer", "parts": [{"text": f"Using {text}"}]}
        ids = {"taskId": task["id"], "contextId": task["contextId"]}
        return [
            as_is,
            self._status(task, "TASK_STATE_WORKING"),
            {"artifactUpdate": {**ids, "artifact": artifact, "lastChunk": True}},
            self._status(task, "TASK_STATE_COMPLETED"),
        ]


def create_app(keep_question: bool, busy: bool = False) -> Flask:
    """The agent as a Flask app; its card's interfaces are at the root it was reached at."""
    agent = AsIsAgent(keep_question, busy)
    app = Flask("as_is_agent")

    def sse(events: list[dict[str, Any]]) -> Response:
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
        return Response(body, content_type="text/event-stream")

    @app.get("/.well-known/agent-card.json")
    def card() -> Any:
        return _card(request.url_root.rstrip("/"))

    @app.post("/")
    def jsonrpc() -> Any:
        call = request.get_json()
        if call.get("method") != "SendStreamingMessage":
            error = {"code": -32601, "message": "only SendStreamingMessage"}
            return {"jsonrpc": "2.0", "id": call.get("id"), "error": error}
        events = agent.answer(call["params"]["message"])
        return sse([{"jsonrpc": "2.0", "id": call.get("id"), "result": e} for e in events])

    @app.post("/message:stream")
    def rest_stream() -> Any:
        return sse(agent.answer(request.get_json()["message"]))

    return app


@contextmanager
def serve_as_is_agent(keep_question: bool, busy: bool = False) -> Iterator[str]:
    """The agent on 127.0.0.1 (a free port) for the block; yields its URL."""
    server = ServerThread(create_app(keep_question, busy)).start()
    try:
        yield server.url
    finally:
        server.stop()
