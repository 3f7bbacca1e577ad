"""A2A v0.3 over HTTP+JSON, under `/v1`: the v0.3 *proto* JSON, not v0.3 JSON-RPC's shapes.

Unlike v0.3 JSON-RPC, the REST binding spoke the v0.3 proto's JSON (a2a.v1 package): messages
carry `content` (not `parts`), enums stay `TASK_STATE_*`/`ROLE_*` with `TASK_STATE_CANCELLED`,
parts are `{text}`/`{file{fileWithUri|fileWithBytes,mimeType,name}}`/`{data{data}}`, and a
status update has `final`. a2a-sdk 1.x's CompatRestTransport sends proto field names
(`request`, `content`, `push_notification`); params arrive here already camelCased. `RestEdge`
is the one place the REST binding meets v0.3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent import errors
from mockagent.cassette.header import V03Wire
from mockagent.dialects.a2a.error_table import rest_error
from mockagent.dialects.a2a.v0_3 import (
    INTERRUPTED,
    TERMINAL,
    file_in,
    file_out,
    push_config_in,
    push_config_out,
    state_out,
    task_fields,
)
from mockagent.dialects.a2a.wire import V1_ROLE, normalise

REST_RAW, REST_URL = "fileWithBytes", "fileWithUri"  # the proto's names for a file's content

REST_STATES_OUT = {"TASK_STATE_CANCELED": "TASK_STATE_CANCELLED"}
REST_STATES_IN = {"TASK_STATE_CANCELLED": "TASK_STATE_CANCELED"}

# The sdk error class a v0.3 REST client maps a body's `type` to (a2a-sdk CompatRestTransport).
REST_ERROR_TYPES = {
    "Parse": "JSONParseError",
    "InvalidRequest": "InvalidRequestError",
    "MethodNotFound": "MethodNotFoundError",
    "InvalidParams": "InvalidParamsError",
    "Internal": "InternalError",
    "TaskNotFound": "TaskNotFoundError",
    "TaskNotCancelable": "TaskNotCancelableError",
    "PushNotificationNotSupported": "PushNotificationNotSupportedError",
    "UnsupportedOperation": "UnsupportedOperationError",
    "ContentTypeNotSupported": "ContentTypeNotSupportedError",
    "InvalidAgentResponse": "InvalidAgentResponseError",
    "ExtendedAgentCardNotConfigured": "ExtendedAgentCardNotConfiguredError",
    "NoMatch": "UnsupportedOperationError",
}


@dataclass(frozen=True)
class RestEdge:
    """A v0.3 REST call under `/v1` at the edge of the v1.0 binding (`respond.Edge`): v0.3 proto
    JSON in and out; errors as `{message, type}`, or as `google.rpc.Status` where the cassette's
    agent answered so (`agent.v03.restErrors: status`)."""

    operation: str
    wire: V03Wire
    legacy: bool = True
    refuses_in_sse: bool = False

    def request(self, params: Any) -> dict[str, Any]:
        return rest_params_in(self.operation, normalise(params))  # proto names → camelCase

    def answer(self, result: Any) -> Any:
        return rest_result_out(self.operation, result)  # a card has its v0.3 fields already

    def event(self, event: Any) -> Any:
        close = self.operation == "SendStreamingMessage" and self.wire.interruptedFinal
        return rest_event_out(event, close_on_interrupt=close)

    def stream_error(self, exc: errors.ProtocolError) -> dict[str, Any]:
        return rest_error(exc)[0] if self.wire.restErrors == "status" else rest_error_out(exc)

    def refusal(self, exc: errors.ProtocolError) -> tuple[Any, int]:
        return rest_refusal(exc, status_errors=self.wire.restErrors == "status")


def rest_refusal(exc: errors.ProtocolError, status_errors: bool = False) -> tuple[Any, int]:
    """A v0.3 REST error body and its HTTP status: `{message, type}`, or `google.rpc.Status`
    (`status_errors`)."""
    body, status = rest_error(exc)
    return body if status_errors else rest_error_out(exc), status


def rest_part_in(part: Any) -> Any:
    """A v0.3 proto part → a flat v1.0 part."""
    if not isinstance(part, dict):
        return part
    out: dict[str, Any] = {}
    if "text" in part:
        out["text"] = part["text"]
    elif isinstance(part.get("file"), dict):
        out = file_in(part["file"], REST_RAW, REST_URL)
    elif "data" in part:
        data = part["data"]
        out["data"] = data.get("data", {}) if isinstance(data, dict) else data
    else:
        return part
    if part.get("metadata") is not None:
        out["metadata"] = part["metadata"]
    return out


def rest_message_in(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    out = {k: v for k, v in message.items() if k != "content"}
    content = message.get("content", message.get("parts"))
    if isinstance(content, list):
        out["parts"] = [rest_part_in(p) for p in content]
    elif content is not None:
        out["parts"] = content
    if isinstance(out.get("role"), str) and out["role"] in V1_ROLE:  # `user` too; no list
        out["role"] = V1_ROLE[out["role"]]
    return out


def rest_push_config_in(config: Any) -> Any:
    """A v0.3 proto TaskPushNotificationConfig (`{name, pushNotificationConfig}`) or a bare
    PushNotificationConfig → the v1.0 flat config (without taskId)."""
    if isinstance(config, dict) and isinstance(config.get("pushNotificationConfig"), dict):
        config = config["pushNotificationConfig"]
    return push_config_in(config)


def rest_params_in(operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """The v1.0 params of a v0.3 REST request (body, query and path params merged)."""
    if operation in ("SendMessage", "SendStreamingMessage"):
        out = {k: v for k, v in params.items() if k not in ("request", "message")}
        message = params.get("message", params.get("request"))
        if message is not None:
            out["message"] = rest_message_in(message)
        config = out.get("configuration")
        if isinstance(config, dict):
            config = dict(config)
            # proto3 JSON omits a false bool: a configuration without `blocking` is non-blocking
            config["returnImmediately"] = not config.pop("blocking", False)
            push = config.pop("pushNotification", None)
            if push is not None:
                config["taskPushNotificationConfig"] = rest_push_config_in(push)
            out["configuration"] = config
        return out
    if operation == "CreateTaskPushNotificationConfig":
        body = params.get("config", params)
        config = rest_push_config_in(body)
        out = dict(config) if isinstance(config, dict) else {}
        for key in ("pushNotificationConfig", "name", "parent", "config", "configId"):
            out.pop(key, None)
        if not out.get("id") and params.get("configId"):
            out["id"] = params["configId"]
        out["taskId"] = params.get("taskId")
        return out
    return params


def rest_state_out(state: Any) -> Any:
    return REST_STATES_OUT.get(state, state)


def rest_part_out(part: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any]
    if "text" in part:
        out = {"text": part["text"]}
    elif "data" in part:
        data = part["data"]
        out = {"data": {"data": data if isinstance(data, dict) else {"value": data}}}
    else:
        out = {"file": file_out(part, REST_RAW, REST_URL, oneof=True)}
    if part.get("metadata"):
        out["metadata"] = part["metadata"]
    return out


def _rest_parts(parts: Any) -> list[Any]:
    return [rest_part_out(p) for p in (parts or []) if isinstance(p, dict)]


def rest_message_out(message: dict[str, Any]) -> dict[str, Any]:
    out = {k: message[k] for k in ("messageId", "contextId", "taskId", "role") if message.get(k)}
    out["content"] = _rest_parts(message.get("parts"))
    for key in ("metadata", "extensions"):
        if message.get(key):
            out[key] = message[key]
    return out


def rest_artifact_out(artifact: dict[str, Any]) -> dict[str, Any]:
    out = {k: artifact[k] for k in ("artifactId", "name", "description") if artifact.get(k)}
    out["parts"] = _rest_parts(artifact.get("parts"))
    for key in ("metadata", "extensions"):
        if artifact.get(key):
            out[key] = artifact[key]
    return out


def rest_status_out(status: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"state": rest_state_out(status.get("state"))}
    if isinstance(status.get("message"), dict):
        out["message"] = rest_message_out(status["message"])
    if status.get("timestamp"):
        out["timestamp"] = status["timestamp"]
    return out


def rest_task_out(task: dict[str, Any]) -> dict[str, Any]:
    return task_fields(task, rest_status_out, rest_artifact_out, rest_message_out)


def rest_push_config_out(config: dict[str, Any]) -> dict[str, Any]:
    """A flat v1.0 config → v0.3 proto
    `{name: tasks/{t}/pushNotificationConfigs/{c}, pushNotificationConfig}`."""
    inner = push_config_out(config)["pushNotificationConfig"]
    return {
        "name": f"tasks/{config.get('taskId', '')}/pushNotificationConfigs/{config.get('id', '')}",
        "pushNotificationConfig": inner,
    }


def rest_event_out(event: dict[str, Any], *, close_on_interrupt: bool) -> dict[str, Any]:
    """A v1.0 StreamResponse (or SendMessageResponse) → the v0.3 proto StreamResponse JSON."""
    if "task" in event:
        return {"task": rest_task_out(event["task"])}
    if "message" in event:
        return {"message": rest_message_out(event["message"])}
    if "statusUpdate" in event:
        update = event["statusUpdate"]
        status = rest_status_out(update["status"])
        lowered = state_out(update["status"].get("state", ""))
        final = lowered in TERMINAL or (close_on_interrupt and lowered in INTERRUPTED)
        out: dict[str, Any] = {
            "taskId": update.get("taskId"),
            "contextId": update.get("contextId"),
            "status": status,
        }
        if final:
            out["final"] = True
        if update.get("metadata"):
            out["metadata"] = update["metadata"]
        return {"statusUpdate": out}
    if "artifactUpdate" in event:
        update = event["artifactUpdate"]
        out = {
            "taskId": update.get("taskId"),
            "contextId": update.get("contextId"),
            "artifact": rest_artifact_out(update["artifact"]),
        }
        for key in ("append", "lastChunk", "metadata"):
            if update.get(key):
                out[key] = update[key]
        return {"artifactUpdate": out}
    return event


def rest_result_out(operation: str, result: Any) -> Any:
    """The v0.3 proto JSON body of a v0.3 REST call, from the v1.0 result the service rendered."""
    if operation == "SendMessage":
        return rest_event_out(result, close_on_interrupt=True)
    if operation in ("GetTask", "CancelTask"):
        return rest_task_out(result)
    if operation in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return rest_push_config_out(result)
    if operation == "ListTaskPushNotificationConfigs":
        page = result or {}
        out: dict[str, Any] = {
            "configs": [rest_push_config_out(c) for c in page.get("configs", [])]
        }
        if page.get("nextPageToken"):
            out["nextPageToken"] = page["nextPageToken"]
        return out
    return {} if result is None else result  # delete: {}; the card as built


def rest_error_out(exc: errors.ProtocolError) -> dict[str, Any]:
    """A v0.3 REST error: `{message, type}` (the sdk error class a2a-sdk's compat client raises).
    A recorded agent's own `type`, one no kind has, is the error's one detail `{type: …}`."""
    return {
        "message": exc.message,
        "type": exc.agent_type or REST_ERROR_TYPES.get(exc.kind, "InternalError"),
    }
