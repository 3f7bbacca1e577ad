"""A small raw A2A v1.0 agent (Flask, JSON-RPC and HTTP+JSON) with the quirks of issue 17's
problems 1 and 3, all within what the specification allows. It moves on by GetTask polls, not by
time, so a recording of it is deterministic.

- A new message that contains "ask": WORKING "Working on it" (with metadata), then INPUT_REQUIRED
  "Which branch?". Blocking, the client sees only the end: the WORKING message is in `history`
  (the agent moves a superseded status message there, as a2a-sdk's TaskManager does). With
  returnImmediately the answer is SUBMITTED and the first GetTask shows the end at once.
- A message on a task in INPUT_REQUIRED (the answer): the status message moves into history, then
  the user's message; then WORKING "Checking out <text>", the artifact `branch`, COMPLETED "Done".
  With returnImmediately the answer is the task as it is (still INPUT_REQUIRED), the first GetTask
  shows it unchanged, the second WORKING, the third COMPLETED.
- Anything else: COMPLETED "Done: <text>".

It honours `historyLength` (the last N messages of the history), as the specification asks.

`archives=False` makes an agent that never moves a status message into history: its history holds
only the user's messages, and a replaced status message is gone (`agent.history.statusMessage:
never` in a recording of it).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask, jsonify, request

from mockagent.server.thread import ServerThread

Event = dict[str, Any]  # {"status": …} or {"artifact": …}


class HistoryAgent:
    """The agent's tasks and what each still has to do, one batch of events per poll."""

    def __init__(self, archives: bool = True) -> None:
        self.archives = archives  # False: a replaced status message is dropped, not history
        self.tasks: dict[str, dict[str, Any]] = {}
        self.plans: dict[str, list[list[Event]]] = {}
        self._ids = itertools.count(1)

    def _id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    def _say(self, task: dict[str, Any], text: str, **metadata: Any) -> dict[str, Any]:
        message = {
            "messageId": self._id("agent-msg"),
            "role": "ROLE_AGENT",
            "parts": [{"text": text}],
            "contextId": task["contextId"],
            "taskId": task["id"],
        }
        if metadata:
            message["metadata"] = metadata
        return message

    def _status(self, task: dict[str, Any], state: str, text: str = "", **metadata: Any) -> Event:
        status: dict[str, Any] = {"state": f"TASK_STATE_{state}"}
        if text:
            status["message"] = self._say(task, text, **metadata)
        return {"status": status}

    def _apply(self, task: dict[str, Any], event: Event) -> None:
        if "status" in event:  # the superseded status message is history
            if "message" in task["status"] and self.archives:
                task["history"].append(task["status"]["message"])
            task["status"] = {**event["status"], "timestamp": "2026-01-01T00:00:00Z"}
        else:
            task.setdefault("artifacts", []).append(event["artifact"])

    def _run(self, task: dict[str, Any], batches: int | None = None) -> None:
        plan = self.plans.get(task["id"], [])
        for batch in plan[:batches] if batches is not None else plan:
            for event in batch:
                self._apply(task, event)
        del plan[: batches if batches is not None else len(plan)]

    def send(self, params: dict[str, Any]) -> dict[str, Any]:
        message = dict(params["message"])
        blocking = not (params.get("configuration") or {}).get("returnImmediately")
        text = " ".join(p.get("text", "") for p in message.get("parts") or [])
        task = self.tasks.get(message.get("taskId", ""))
        if task is None:
            task_id = self._id("task")
            message.update(taskId=task_id, contextId=message.get("contextId") or self._id("ctx"))
            task = {
                "id": task_id,
                "contextId": message["contextId"],
                "status": {"state": "TASK_STATE_SUBMITTED"},
                "history": [message],
            }
            self.tasks[task_id] = task
            if "ask" in text:
                self.plans[task_id] = [
                    [
                        self._status(task, "WORKING", "Working on it", phase="prepare"),
                        self._status(task, "INPUT_REQUIRED", "Which branch?"),
                    ]
                ]
            else:
                self.plans[task_id] = [[self._status(task, "COMPLETED", f"Done: {text}")]]
        else:
            message.update(contextId=task["contextId"])
            if "message" in task["status"]:
                asked = task["status"].pop("message")
                if self.archives:
                    task["history"].append(asked)
            task["history"].append(message)
            artifact = {"artifactId": "branch", "name": "branch", "parts": [{"text": text}]}
            self.plans[task["id"]] = [
                [],
                [self._status(task, "WORKING", f"Checking out {text}")],
                [{"artifact": artifact}, self._status(task, "COMPLETED", "Done")],
            ]
        if blocking:
            self._run(task)
        return {"task": shortened(task, (params.get("configuration") or {}).get("historyLength"))}

    def get(self, task_id: str, history_length: Any = None) -> dict[str, Any] | None:
        task = self.tasks.get(task_id)
        if task is not None:
            self._run(task, 1)
            return shortened(task, history_length)
        return None


def shortened(task: dict[str, Any], history_length: Any) -> dict[str, Any]:
    """The task as shown to a client that asked for `history_length` messages (None: all)."""
    if history_length is None:
        return task
    length = int(history_length)
    return {**task, "history": task["history"][-length:] if length > 0 else []}


def create_app(archives: bool = True) -> Flask:
    """The agent at the root of its server: the card, JSON-RPC at `/`, and the REST routes."""
    agent = HistoryAgent(archives)
    app = Flask(__name__)

    @app.get("/.well-known/agent-card.json")
    def card() -> Any:
        url = request.host_url.rstrip("/")
        return jsonify(
            name="history-agent",
            description="A raw agent whose history holds status messages.",
            version="1.0.0",
            supportedInterfaces=[
                {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}
                for binding in ("JSONRPC", "HTTP+JSON")
            ],
            capabilities={"streaming": False},
            defaultInputModes=["text/plain"],
            defaultOutputModes=["text/plain"],
            skills=[{"id": "ask", "name": "Ask", "description": "Asks which branch."}],
        )

    @app.post("/")
    def jsonrpc() -> Any:
        body = request.get_json()
        params = body.get("params") or {}
        if body.get("method") == "SendMessage":
            return jsonify(jsonrpc="2.0", id=body.get("id"), result=agent.send(params))
        task = (
            agent.get(str(params.get("id")), params.get("historyLength"))
            if body.get("method") == "GetTask"
            else None
        )
        if task is None:
            error = {"code": -32001, "message": "Task not found"}
            return jsonify(jsonrpc="2.0", id=body.get("id"), error=error)
        return jsonify(jsonrpc="2.0", id=body.get("id"), result=task)

    @app.post("/message:send")
    def message_send() -> Any:
        return jsonify(agent.send(request.get_json()))

    @app.get("/tasks/<task_id>")
    def get_task(task_id: str) -> Any:
        task = agent.get(task_id, request.args.get("historyLength"))
        if task is None:
            return jsonify(error={"code": 404, "status": "NOT_FOUND", "message": "no task"}), 404
        return jsonify(task)

    return app


@contextmanager
def serve_history_agent(archives: bool = True) -> Iterator[ServerThread]:
    """The agent on 127.0.0.1, a free port, for the block."""
    server = ServerThread(create_app(archives)).start()
    try:
        yield server
    finally:
        server.stop()
