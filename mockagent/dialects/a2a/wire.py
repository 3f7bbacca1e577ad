"""A2A v1.0 ProtoJSON in and out: camelCase and snake_case in, camelCase out, unset fields
omitted."""

from __future__ import annotations

import re
from typing import Any

from mockagent import errors
from mockagent.cassette.models import TaskState
from mockagent.engine.call import (
    ConfigPage,
    ConfigResult,
    Empty,
    MessageResult,
    Outcome,
    TaskEvent,
    TaskPage,
    TaskResult,
    TaskView,
)

# Values under these keys are the user's own JSON: their keys are never renamed.
OPAQUE_KEYS = frozenset({"metadata", "data", "params"})
STATES = {
    i: s
    for i, s in enumerate(
        [
            "TASK_STATE_UNSPECIFIED",
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_REJECTED",
            "TASK_STATE_AUTH_REQUIRED",
        ]
    )
}
NEUTRAL_ROLE = {"ROLE_USER": "user", 1: "user", "ROLE_AGENT": "agent", 2: "agent"}
"""The engine's role (also v0.3's) for a v1.0 role enum, by name or number."""
V1_ROLE = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
"""The v1.0 role enum for the engine's role (or v0.3's)."""
PART_CONTENT = ("text", "raw", "url", "data")


def camel(key: str) -> str:
    """`history_length` → `historyLength`; camelCase keys pass unchanged."""
    if "_" not in key:  # nearly every key: no regex
        return key
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key)


def normalise(value: Any) -> Any:
    """Rename snake_case keys to camelCase, recursively, leaving opaque user JSON alone."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = camel(key) if isinstance(key, str) else key
            out[name] = item if name in OPAQUE_KEYS else normalise(item)
        return out
    if isinstance(value, list):
        return [normalise(item) for item in value]
    return value


def state_name(state: TaskState) -> str:
    return "TASK_STATE_" + state.name


def parse_state(value: Any) -> TaskState:
    """A TaskState from its ProtoJSON name or number; InvalidParams otherwise."""
    try:
        if isinstance(value, int) and not isinstance(value, bool) and value in STATES and value:
            value = STATES[value]
        if not isinstance(value, str) or not value.startswith("TASK_STATE_"):
            raise ValueError(value)
        return TaskState.parse(value)
    except ValueError:
        raise errors.InvalidParams(
            f"status: {value!r} is not a task state (TASK_STATE_…)"
        ) from None


def check_message(params: dict[str, Any]) -> dict[str, Any]:
    """Validate SendMessageRequest.message and return it with the role made neutral."""
    message = params.get("message")
    if not isinstance(message, dict):
        raise errors.InvalidParams("message: required (SendMessageRequest.message)")
    for key in ("messageId",):
        if not isinstance(message.get(key), str) or not message[key]:
            raise errors.InvalidParams(f"message.{key}: required string")
    role = message.get("role")
    # A list or an object cannot be looked up (unhashable): it is no role either.
    if not isinstance(role, (str, int)) or NEUTRAL_ROLE.get(role) != "user":
        raise errors.InvalidParams(
            f"message.role: a client message has role ROLE_USER, not {role!r}"
        )
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        raise errors.InvalidParams("message.parts: at least one part is required")
    for i, part in enumerate(parts):
        if not isinstance(part, dict) or sum(k in part for k in PART_CONTENT) != 1:
            raise errors.InvalidParams(
                f"message.parts[{i}]: a part has exactly one of text, raw, url, data"
            )
    for key in ("taskId", "contextId"):
        if key in message and not isinstance(message[key], str):
            raise errors.InvalidParams(f"message.{key}: must be a string")
    return {**message, "role": "user"}


def render_message(message: dict[str, Any]) -> dict[str, Any]:
    """An engine message (neutral role) as ProtoJSON."""
    return {**message, "role": V1_ROLE.get(message.get("role", ""), message.get("role"))}


def render_task(task: TaskView) -> dict[str, Any]:
    """A task snapshot as ProtoJSON; history and artifacts only when present."""
    status: dict[str, Any] = {"state": state_name(task.state)}
    if task.status_message is not None:
        status["message"] = render_message(task.status_message)
    if task.timestamp:  # none before a state step (a script that opens with an artifact)
        status["timestamp"] = task.timestamp
    out: dict[str, Any] = {"id": task.id, "contextId": task.context_id, "status": status}
    if task.artifacts:
        out["artifacts"] = task.artifacts
    if task.history:
        out["history"] = [render_message(m) for m in task.history]
    if task.metadata:
        out["metadata"] = task.metadata
    return out


def render_event(event: TaskEvent) -> dict[str, Any]:
    """A task event as a StreamResponse: `{"statusUpdate": …}` or `{"artifactUpdate": …}`."""
    if event.state is not None:
        status: dict[str, Any] = {"state": state_name(event.state)}
        if event.status_message is not None:
            status["message"] = render_message(event.status_message)
        if event.timestamp:
            status["timestamp"] = event.timestamp
        return {
            "statusUpdate": {
                "taskId": event.task_id,
                "contextId": event.context_id,
                "status": status,
            }
        }
    update: dict[str, Any] = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": event.artifact,
    }
    if event.append:
        update["append"] = True
    if event.last_chunk:
        update["lastChunk"] = True
    return {"artifactUpdate": update}


def render_result(operation: str, outcome: Outcome) -> Any:
    """The result object of an operation: SendMessage wraps, GetTask/CancelTask are bare."""
    if isinstance(outcome, ConfigResult):
        return outcome.config
    if isinstance(outcome, ConfigPage):
        return {"configs": outcome.configs, "nextPageToken": outcome.next_page_token}
    if isinstance(outcome, Empty):
        return None
    if isinstance(outcome, MessageResult):
        return {"message": render_message(outcome.message)}
    if isinstance(outcome, TaskResult):
        task = render_task(outcome.task)
        return {"task": task} if operation in ("SendMessage", "SendStreamingMessage") else task
    if isinstance(outcome, TaskPage):
        return {
            "tasks": [render_task(t) for t in outcome.tasks],
            "nextPageToken": outcome.next_page_token,
            "pageSize": outcome.page_size,
            "totalSize": outcome.total_size,
        }
    raise TypeError(f"no rendering for {type(outcome).__name__}")
