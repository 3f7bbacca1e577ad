"""Recording an A2A v0.3 agent: its calls are recorded as the v1.0 interactions they are, so one
cassette replays to v0.3 and v1.0 clients alike (the replay's v0.3 dialects render them back).

A v0.3 request's params become v1.0 params with the replay dialects' own `params_in` and
`rest_params_in`; a v0.3 result becomes the v1.0 result the recorder reads: over JSON-RPC from
`kind` objects, lowercase states and `role: agent`, over REST (under `/v1`) from the v0.3 proto
JSON (`content` for parts, `TASK_STATE_CANCELLED`, `final`). The client still gets the upstream's
bytes unchanged.
"""

from __future__ import annotations

from typing import Any

from mockagent.dialects.a2a.v0_3 import OPERATION_OF_METHOD, message_in, params_in, part_in
from mockagent.dialects.a2a.v0_3_rest import (
    REST_STATES_IN,
    rest_message_in,
    rest_params_in,
    rest_part_in,
)
from mockagent.dialects.a2a.wire import normalise

EVENT_KEYS = {"task": "task", "message": "message"}
UPDATE_KEYS = {"status-update": "statusUpdate", "artifact-update": "artifactUpdate"}


def request_in(method: Any, params: Any) -> tuple[str, dict[str, Any]] | None:
    """(v1.0 operation, v1.0 params) of a v0.3 JSON-RPC request; None for another method."""
    if not isinstance(method, str) or method not in OPERATION_OF_METHOD:
        return None
    return OPERATION_OF_METHOD[method], params_in(
        method, params if isinstance(params, dict) else {}
    )


def state_in(state: Any) -> Any:
    """`input-required` → `TASK_STATE_INPUT_REQUIRED`; `unknown` → `TASK_STATE_UNSPECIFIED`."""
    if not isinstance(state, str) or state.startswith("TASK_STATE_"):
        return state
    name = "UNSPECIFIED" if state == "unknown" else state.upper().replace("-", "_")
    return f"TASK_STATE_{name}"


def status_in(status: Any) -> Any:
    if not isinstance(status, dict):
        return status
    out = {**status, "state": state_in(status.get("state"))}
    if isinstance(out.get("message"), dict):
        out["message"] = message_in(out["message"])
    return out


def artifact_in(artifact: Any) -> Any:
    if not isinstance(artifact, dict) or not isinstance(artifact.get("parts"), list):
        return artifact
    return {**artifact, "parts": [part_in(p) for p in artifact["parts"]]}


def task_in(task: Any) -> Any:
    """A v0.3 Task as v1.0 JSON."""
    if not isinstance(task, dict):
        return task
    out = {k: v for k, v in task.items() if k != "kind"}
    if "status" in out:
        out["status"] = status_in(out["status"])
    if isinstance(out.get("history"), list):
        out["history"] = [message_in(m) for m in out["history"]]
    if isinstance(out.get("artifacts"), list):
        out["artifacts"] = [artifact_in(a) for a in out["artifacts"]]
    return out


def event_in(event: Any) -> Any:
    """A v0.3 result object (`kind` task, message, status-update, artifact-update) as the v1.0
    StreamResponse (`{"task": …}`, `{"statusUpdate": …}`, …); `final` has no v1.0 field."""
    if not isinstance(event, dict):
        return event
    kind = event.get("kind")
    if kind == "task":
        return {"task": task_in(event)}
    if kind == "message":
        return {"message": message_in(event)}
    if kind in UPDATE_KEYS:
        update = {k: v for k, v in event.items() if k not in ("kind", "final")}
        if "status" in update:
            update["status"] = status_in(update["status"])
        if "artifact" in update:
            update["artifact"] = artifact_in(update["artifact"])
        return {UPDATE_KEYS[kind]: update}
    return event


def rest_request_in(operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """The v1.0 params of a v0.3 REST request (body, query and path params, proto names)."""
    return rest_params_in(operation, normalise(params))


def rest_task_in(task: Any) -> Any:
    """A v0.3 proto Task as v1.0 JSON."""
    if not isinstance(task, dict):
        return task
    out = dict(task)
    if isinstance(out.get("status"), dict):
        out["status"] = rest_status_in(out["status"])
    if isinstance(out.get("history"), list):
        out["history"] = [rest_message_in(m) for m in out["history"]]
    if isinstance(out.get("artifacts"), list):
        out["artifacts"] = [rest_artifact_in(a) for a in out["artifacts"]]
    return out


def rest_status_in(status: dict[str, Any]) -> dict[str, Any]:
    state = status.get("state")
    out = {**status, "state": REST_STATES_IN.get(state, state) if isinstance(state, str) else state}
    if isinstance(out.get("message"), dict):
        out["message"] = rest_message_in(out["message"])
    return out


def rest_artifact_in(artifact: Any) -> Any:
    if not isinstance(artifact, dict) or not isinstance(artifact.get("parts"), list):
        return artifact
    return {**artifact, "parts": [rest_part_in(p) for p in artifact["parts"]]}


def rest_event_in(event: Any) -> Any:
    """A v0.3 proto StreamResponse (or SendMessageResponse, whose message is `msg`) as v1.0."""
    if not isinstance(event, dict):
        return event
    if "task" in event:
        return {"task": rest_task_in(event["task"])}
    if "message" in event or "msg" in event:
        return {"message": rest_message_in(event.get("message", event.get("msg")))}
    for key, convert in (("statusUpdate", rest_status_in), ("artifactUpdate", rest_artifact_in)):
        if isinstance(event.get(key), dict):
            update = {k: v for k, v in event[key].items() if k != "final"}
            field = "status" if key == "statusUpdate" else "artifact"
            if isinstance(update.get(field), dict):
                update[field] = convert(update[field])
            return {key: update}
    return event


def result_in(operation: str, result: Any, binding: str = "JSONRPC") -> Any:
    """The v1.0 result of a v0.3 call's result (a stream's events included) over `binding`."""
    rest = binding == "HTTP+JSON"
    if operation in ("SendMessage", "SendStreamingMessage", "SubscribeToTask"):
        return rest_event_in(result) if rest else event_in(result)
    if operation in ("GetTask", "CancelTask"):
        return rest_task_in(result) if rest else task_in(result)
    return result
