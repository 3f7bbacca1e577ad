"""A small Agentex platform written from the reference (not mockagent's dialect): the live agent
the Agentex fidelity tests record.

Two agents, as the platform serves them at its root:

* `echo-bot` (acp_type sync) answers `message/send` inside the call: "You said: X", and for a
  question also a data message. Streamed, the text comes as start, two deltas, done; the data as
  full, done (no start), each line an NDJSON envelope.
* `worker` (acp_type async) answers `event/send` later: each poll (GET /messages or
  GET /tasks/{id}) moves its script one step, so a polling client sees "Got: X", "Half way.",
  "Done: X" and then COMPLETED, whatever the timing. A "long job" never ends by itself; it is
  cancelled. A "background X" says "Got: X" and goes on where no poll sees it: a test ends it
  with `Platform.settle`, as the agent (or the platform's timeout) would.

Like the platform, GET /messages lists the user's turns too, every answer carries uuids and
`created_at`/`updated_at`, and a refused RPC call is HTTP 200 with an `error` envelope.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, request

ALLOWED = {
    "sync": {"message/send", "task/create", "task/interrupt"},
    "async": {"task/create", "task/cancel", "task/interrupt", "event/send"},
}
ENDED = {"COMPLETED", "CANCELED", "FAILED", "TERMINATED", "TIMED_OUT"}
CANCELED = "Canceled by the user"  # a canceled task's `status_reason`


def now() -> str:
    return datetime.now(UTC).isoformat()


def agent_text(text: str) -> dict[str, Any]:
    return {
        "type": "text",
        "author": "agent",
        "content": text,
        "format": "markdown" if "**" in text else "plain",
        "style": "static",
        "attachments": None,
    }


@dataclass
class Task:
    agent: dict[str, Any]
    body: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0
    script: list[dict[str, Any] | str] = field(default_factory=list)  # a content, or a status


class Platform:
    """The platform's state: agents, tasks and their messages."""

    def __init__(
        self, forwarded: Collection[str] = ("sync", "async"), canceled: str | None = CANCELED
    ) -> None:
        self.forwarded = forwarded  # the acp_types whose new tasks say they were forwarded
        self.canceled = canceled  # the `status_reason` of a task canceled
        stamp = now()
        self.agents = [
            {
                # fixed, as a platform's agent ids are: a cassette keeps them
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"agentex-platform:{name}")),
                "name": name,
                "description": description,
                "acp_type": acp,
                "status": "Ready",
                "created_at": stamp,
                "updated_at": stamp,
            }
            for name, description, acp in (
                ("echo-bot", "Echoes what it is told.", "sync"),
                ("worker", "Works in the background.", "async"),
            )
        ]
        self.tasks: dict[str, Task] = {}

    def agent(self, key: str) -> dict[str, Any] | None:
        return next((a for a in self.agents if key in (a["id"], a["name"])), None)

    def create(self, agent: dict[str, Any], name: str | None, params: Any = None) -> Task:
        """A new task, or (get-or-create) the one of that name."""
        for task in self.tasks.values():
            if name and task.body["name"] == name:
                return task
        stamp = now()
        body = {
            "id": str(uuid.uuid4()),
            "name": name,
            "params": params,
            "status": "RUNNING",
            "status_reason": (
                "Task created, forwarding to ACP server"
                if agent["acp_type"] in self.forwarded
                else None
            ),
            "task_metadata": None,
            "created_at": stamp,
            "updated_at": stamp,
        }
        task = self.tasks[body["id"]] = Task(agent, body)
        return task

    def write(self, task: Task, content: dict[str, Any]) -> dict[str, Any]:
        stamp = now()
        message = {
            "id": str(uuid.uuid4()),
            "task_id": task.body["id"],
            "content": content,
            "streaming_status": "DONE",
            "created_at": stamp,
            "updated_at": stamp,
        }
        task.messages.append(message)
        return message

    def step(self, task: Task) -> None:
        """A poll: the async agent does the next thing on its script."""
        if not task.script:
            return
        item = task.script.pop(0)
        if isinstance(item, str):
            task.body.update(status=item, status_reason=f"Task {item.lower()}", updated_at=now())
        else:
            self.write(task, item)

    def settle(self, task: Task, status: str) -> None:
        """The task ends (or changes) by itself, unseen: no call of the client's moves it."""
        task.script.clear()
        reason = f"Task {status.lower().replace('_', ' ')}"
        task.body.update(status=status, status_reason=reason, updated_at=now())

    def replies(self, text: str) -> list[dict[str, Any]]:
        out = [agent_text(f"You said: {text}")]
        if text.endswith("?"):
            out.append({"type": "data", "author": "agent", "data": {"question": True}})
        return out


class RpcError(Exception):
    def __init__(self, message: str, code: int = -32603) -> None:
        super().__init__(message)
        self.code = code


def rpc(platform: Platform, agent: dict[str, Any], method: str, params: dict[str, Any]) -> Any:
    """The result of one RPC call (a stream is handled by the caller); raises RpcError."""
    if method not in ALLOWED[agent["acp_type"]]:
        raise RpcError(f"Unsupported method: {method} for ACP type: {agent['acp_type']}")
    if method == "task/create":
        return platform.create(agent, params.get("name"), params.get("params")).body
    task = find(platform, params)
    if method == "task/cancel":
        if task.body["status"] in ENDED:
            raise RpcError(
                f"Task {task.body['id']} is {task.body['status']} and cannot be canceled"
            )
        task.script.clear()
        task.body.update(status="CANCELED", status_reason=platform.canceled, updated_at=now())
        return task.body
    if method == "event/send":
        content = params.get("content")
        task.events += 1
        platform.write(task, content)
        text = content.get("content", "") if isinstance(content, dict) else ""
        if text.startswith("long job"):
            task.script = [agent_text("Starting.")] + [agent_text("Still going.")] * 20
        elif text.startswith("background"):
            task.script = [agent_text(f"Got: {text}")]
        else:
            task.script = [
                agent_text(f"Got: {text}"),
                agent_text("Half way."),
                agent_text(f"**Done**: {text}"),
                "COMPLETED",
            ]
        return {
            "id": str(uuid.uuid4()),
            "agent_id": agent["id"],
            "task_id": task.body["id"],
            "sequence_id": task.events,
            "content": content,
            "created_at": now(),
        }
    raise RpcError(f"Unsupported method: {method}")


def find(platform: Platform, params: dict[str, Any]) -> Task:
    task_id, name = params.get("task_id"), params.get("task_name")
    if not (task_id or name):
        raise RpcError("Either task_id or task_name must be provided")
    for task in platform.tasks.values():
        if task.body["id"] == task_id or (name and task.body["name"] == name):
            return task
    raise RpcError(f"Task {task_id or name} not found")


def send(platform: Platform, agent: dict[str, Any], params: dict[str, Any]) -> tuple[Task, list]:
    """message/send: the task (found or new), the user's turn written, and the replies."""
    task = (
        find(platform, params)
        if params.get("task_id") or params.get("task_name")
        else platform.create(agent, None, params.get("task_params"))
    )
    content = params["content"]
    platform.write(task, content)
    return task, platform.replies(str(content.get("content", "")))


def envelope(request_id: Any, result: Any = None, error: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result, "error": error}


def stream_lines(platform: Platform, task: Task, replies: list, request_id: Any) -> Iterator[str]:
    """A streamed message/send: text as start, deltas, done; other content as full, done."""
    for index, content in enumerate(replies):
        message = platform.write(task, content)
        opening = {**message, "streaming_status": "IN_PROGRESS"}
        updates: list[dict[str, Any]]
        if content["type"] == "text":
            text = content["content"]
            half = len(text) // 2
            opening = {**opening, "content": {**content, "content": ""}}
            updates = [{"type": "start", "content": opening["content"]}] + [
                {"type": "delta", "delta": {"type": "text", "text_delta": piece}}
                for piece in (text[:half], text[half:])
            ]
        else:
            updates = [{"type": "full", "content": content}]
        updates.append({"type": "done"})
        for update in updates:
            parent = message if update["type"] == "done" else opening
            result = {**update, "index": index, "parent_task_message": parent}
            yield json.dumps(envelope(request_id, result)) + "\n"


def cut_off(lines: Iterator[str], after: int) -> Iterator[str]:
    """The first `after` lines, then the connection breaks, as when the platform goes away."""
    for sent, line in enumerate(lines):
        if sent == after:
            raise ConnectionAbortedError(f"the platform dropped the stream after {after} lines")
        yield line


def create_platform_app(
    drop_after: int | None = None,
    forwarded: Collection[str] = ("sync", "async"),
    canceled: str | None = CANCELED,
) -> Flask:
    """The platform as a Flask app (one Platform per app); with `drop_after`, every streamed
    message/send breaks off after that many NDJSON lines; a new task of an agent whose acp_type
    is not `forwarded` has no `status_reason`; a task canceled has `canceled` as its
    `status_reason`."""
    platform = Platform(forwarded, canceled)
    app = Flask(__name__)

    @app.post("/agents/<key>/rpc")
    @app.post("/agents/name/<key>/rpc")
    def call(key: str) -> Any:
        payload = request.get_json(force=True)
        request_id = payload.get("id")
        agent = platform.agent(key)
        if agent is None:
            return {"message": f"Agent {key} not found", "code": 404, "data": None}, 404
        method, params = payload.get("method"), payload.get("params") or {}
        try:
            if method == "message/send" and method in ALLOWED[agent["acp_type"]]:
                task, replies = send(platform, agent, params)
                if params.get("stream"):
                    lines = stream_lines(platform, task, replies, request_id)
                    if drop_after is not None:
                        lines = cut_off(lines, drop_after)
                    return Response(lines, mimetype="application/x-ndjson")
                messages = [platform.write(task, content) for content in replies]
                return envelope(request_id, messages)
            return envelope(request_id, rpc(platform, agent, method, params))
        except RpcError as exc:
            return envelope(request_id, error={"code": exc.code, "message": str(exc), "data": None})

    @app.get("/agents")
    def agents() -> Any:
        return platform.agents

    @app.get("/tasks/<task_id>")
    def get_task(task_id: str) -> Any:
        task = platform.tasks.get(task_id)
        if task is None:
            return {"message": f"Item with id '{task_id}' does not exist.", "code": 404}, 404
        platform.step(task)
        return task.body

    @app.get("/messages")
    def messages() -> Any:
        task = platform.tasks.get(request.args.get("task_id", ""))
        if task is None:
            return []
        platform.step(task)
        return task.messages

    app.extensions["platform"] = platform  # a test may move a task on as its agent would
    return app
