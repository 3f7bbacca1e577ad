"""Agentex JSON out: Task, TaskMessage, Event, Agent and the TaskMessageUpdates of a stream.

Everything here is a pure function of engine snapshots (TaskView, said messages), so the same calls
render the same bytes. The engine's messages are neutral: agent messages of `say` steps carry the
TaskMessageContent as `content`; user turns carry the content the client sent (the RPC layer puts
it there) and, for event/send, a metadata marker naming the method and the agent.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockagent.cassette.models import AgentexAgent, TaskState
from mockagent.engine.call import TaskView

STATUS = {
    TaskState.SUBMITTED: "RUNNING",
    TaskState.WORKING: "RUNNING",
    TaskState.COMPLETED: "COMPLETED",
    TaskState.FAILED: "FAILED",
    TaskState.REJECTED: "FAILED",
    TaskState.CANCELED: "CANCELED",
    TaskState.INTERRUPTED: "INTERRUPTED",
    TaskState.INPUT_REQUIRED: "INTERRUPTED",
    TaskState.AUTH_REQUIRED: "INTERRUPTED",
    TaskState.TERMINATED: "TERMINATED",
    TaskState.TIMED_OUT: "TIMED_OUT",
    TaskState.DELETED: "DELETED",
}
METHOD_KEY = "agentexMethod"  # metadata of a user turn: "message/send" or "event/send"
AGENT_KEY = "agentexAgentId"  # metadata of a user turn: the agent it was sent to
_IDS = uuid.uuid5(uuid.NAMESPACE_URL, "mockagent:agentex")

EMPTY: dict[str, dict[str, Any]] = {  # what a streamed message holds at `start`, before its deltas
    "text": {"content": ""},
    "data": {"data": {}},
    "tool_request": {"arguments": {}},
    "tool_response": {"content": ""},
    "reasoning": {"summary": [], "content": []},
}
STRING_DELTA = {  # a delta written as a plain string, per content type
    "text": lambda c, s: {"type": "text", "text_delta": s},
    "data": lambda c, s: {"type": "data", "data_delta": s},
    "tool_request": lambda c, s: {
        "type": "tool_request",
        "name": c.get("name", ""),
        "tool_call_id": c.get("tool_call_id", ""),
        "arguments_delta": s,
    },
    "tool_response": lambda c, s: {
        "type": "tool_response",
        "name": c.get("name", ""),
        "tool_call_id": c.get("tool_call_id", ""),
        "content_delta": s,
    },
    "reasoning": lambda c, s: {"type": "reasoning_summary", "summary_index": 0, "summary_delta": s},
}


def derived_id(*parts: object) -> str:
    """A stable id for things the engine does not number (user turns, events)."""
    return str(uuid.uuid5(_IDS, "/".join(map(str, parts))))


def content_of(message: dict[str, Any]) -> dict[str, Any] | None:
    """A message's TaskMessageContent: its own `content`, else made from its parts (text, data)."""
    if isinstance(message.get("content"), dict):
        return message["content"]
    author = "user" if message.get("role") == "user" else "agent"
    parts = [p for p in message.get("parts") or [] if isinstance(p, dict)]
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    if texts:
        return {"type": "text", "author": author, "content": "\n".join(texts), "format": "plain"}
    data = next((p["data"] for p in parts if "data" in p), None)
    if data is not None:
        return {
            "type": "data",
            "author": author,
            "data": data if isinstance(data, dict) else {"value": data},
        }
    return None


def task_message(
    content: Any, task_id: str, message_id: str, when: str | None, status: str = "DONE"
) -> dict[str, Any]:
    return {
        "id": message_id,
        "task_id": task_id,
        "content": content,
        "streaming_status": status,
        "created_at": when,
        "updated_at": when,
    }


def said_message(said: dict[str, Any], status: str = "DONE", content: Any = None) -> dict[str, Any]:
    """An agent message the engine produced (a `say` step or a direct reply) as a TaskMessage."""
    return task_message(
        content if content is not None else content_of(said),
        said.get("taskId") or "",
        said["messageId"],
        said.get("timestamp"),
        status,
    )


def _turns(view: TaskView) -> list[tuple[int, dict[str, Any], str | None]]:
    """(index, message, time) for the history; a user turn has no stamp: the last one before it."""
    out, when = [], view.created or None
    for i, message in enumerate(view.history or []):
        when = message.get("timestamp") or when
        out.append((i, message, when))
    return out


def history(view: TaskView) -> list[dict[str, Any]]:
    """GET /messages: every message of the task with content, oldest first, user turns included."""
    out = []
    for i, message, when in _turns(view):
        content = content_of(message)
        if content is None:  # an event/send without content: an event, not a message
            continue
        agent = message.get("role") != "user" and message.get("messageId")
        out.append(task_message(content, view.id, agent or derived_id(view.id, "message", i), when))
    return out


def events(view: TaskView) -> list[dict[str, Any]]:
    """The task's events (its event/send turns), numbered 1, 2, … per task."""
    out: list[dict[str, Any]] = []
    for _, message, when in _turns(view):
        meta = message.get("metadata") or {}
        if message.get("role") != "user" or meta.get(METHOD_KEY) != "event/send":
            continue
        sequence = len(out) + 1
        out.append(
            {
                "id": derived_id(view.id, "event", sequence),
                "agent_id": meta.get(AGENT_KEY, ""),
                "task_id": view.id,
                "sequence_id": sequence,
                "content": message.get("content"),
                "created_at": when,
            }
        )
    return out


def status_reason(view: TaskView) -> str | None:
    """The state step's `statusReason`, else the text of the status message."""
    return reason_of(view.status_reason, view.status_message)


def reason_of(reason: str | None, status_message: dict[str, Any] | None) -> str | None:
    if reason is not None:
        return reason
    content = content_of(status_message) if status_message else None
    return content.get("content") if content and content.get("type") == "text" else None


def render_task(view: TaskView, lean: bool = False) -> dict[str, Any]:
    """A Task; `lean` (GET /tasks) omits params, as the platform's list does."""
    out: dict[str, Any] = {
        "id": view.id,
        "name": view.name,
        "params": view.params,
        "status": STATUS[view.state],
        "status_reason": status_reason(view),
        "task_metadata": view.metadata,
        "created_at": view.created or None,
        "updated_at": view.timestamp or view.created or None,
    }
    if lean:
        del out["params"]
    return out


def render_agent(agent: AgentexAgent, when: str) -> dict[str, Any]:
    return {
        "id": agent.id,
        "name": agent.name,
        "description": agent.description,
        "acp_type": agent.acp_type,
        "status": agent.status,
        "created_at": when,
        "updated_at": when,
    }


def delta(content: dict[str, Any], piece: Any) -> Any:
    """One cassette delta on the wire: a mapping as written, a string as the content type's
    delta."""
    if isinstance(piece, dict):
        return piece
    return STRING_DELTA.get(content.get("type", "text"), STRING_DELTA["text"])(content, str(piece))


def updates(
    index: int, said: dict[str, Any], deltas: list[Any] | None, start: bool = True
) -> list[dict[str, Any]]:
    """One agent message as TaskMessageUpdates: start (unless the step says `start: false`), a
    delta per piece (or one full), done."""
    content = content_of(said) or {}
    initial = {**content, **EMPTY.get(content.get("type", "text"), {})}
    opening = said_message(said, "IN_PROGRESS", initial)
    out: list[dict[str, Any]] = (
        [{"type": "start", "index": index, "content": initial, "parent_task_message": opening}]
        if start
        else []
    )
    if deltas:
        out += [
            {
                "type": "delta",
                "index": index,
                "delta": delta(content, piece),
                "parent_task_message": opening,
            }
            for piece in deltas
        ]
    else:
        out.append(
            {
                "type": "full",
                "index": index,
                "content": content,
                "parent_task_message": said_message(said, "IN_PROGRESS"),
            }
        )
    out.append({"type": "done", "index": index, "parent_task_message": said_message(said)})
    return out
