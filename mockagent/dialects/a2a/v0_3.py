"""A2A v0.3 over JSON-RPC: slash method names, `kind` objects, lowercase states, `final`.

The engine and the v1.0 renderer stay as they are: v0.3 params are turned into v1.0 params
before the engine sees them (so matchers work the same), and the rendered v1.0 JSON is turned
into v0.3 JSON on the way out, all in `JsonRpcEdge`, the one place the JSON-RPC binding meets
v0.3. Never mixed: a v0.3 method gets v0.3 shapes only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockagent import errors
from mockagent.cassette.header import Agent, V03Wire
from mockagent.dialects.a2a.error_table import jsonrpc_error
from mockagent.dialects.a2a.wire import NEUTRAL_ROLE, V1_ROLE, normalise

VERSION = "0.3"

OPERATION_OF_METHOD = {
    "message/send": "SendMessage",
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}
"""v0.3 JSON-RPC method → the engine operation (the v1.0 name)."""

STREAMING_METHODS = frozenset({"message/stream", "tasks/resubscribe"})
TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})
INTERRUPTED = frozenset({"input-required", "auth-required"})
V03_CODES = frozenset({-32700, -32600, -32601, -32602, -32603, *range(-32007, -32000)})
"""v0.3 knew only these; newer A2A codes go to v0.3 callers as -32603."""


@dataclass(frozen=True)
class JsonRpcEdge:
    """A v0.3 JSON-RPC call at the edge of the v1.0 binding (`respond.Edge`): v0.3 params in,
    v0.3 shapes out, errors with v0.3's codes."""

    method: str
    request_id: Any
    wire: V03Wire
    legacy: bool = True

    @property
    def operation(self) -> str:
        return OPERATION_OF_METHOD[self.method]

    def request(self, params: Any) -> dict[str, Any]:
        return params_in(self.method, normalise(check_params(params)))

    def answer(self, result: Any) -> Any:
        return result_out(self.method, result)  # the extended card has its v0.3 fields already

    def event(self, event: Any) -> Any:
        close = self.method == "message/stream" and self.wire.interruptedFinal
        return stream_event_out(event, close_on_interrupt=close)

    def stream_error(self, exc: errors.ProtocolError) -> dict[str, Any]:
        return error_out(exc, self.request_id)

    @property
    def refuses_in_sse(self) -> bool:
        """A streaming method's refusal is SSE too: a2a-sdk 0.3 reads streams with httpx-sse."""
        return self.method in STREAMING_METHODS

    def refusal(self, exc: errors.ProtocolError) -> tuple[Any, int]:
        null_data = not self.refuses_in_sse and self.wire.errorData == "null"
        return error_out(exc, self.request_id, null_data=null_data), 200


# --- requests: v0.3 → v1.0 -------------------------------------------------------------------


def file_in(file: dict[str, Any], raw: str = "bytes", url: str = "uri") -> dict[str, Any]:
    """A v0.3 file object as the fields of a flat v1.0 part. The REST binding names the content
    `fileWithBytes`/`fileWithUri` where JSON-RPC says `bytes`/`uri`."""
    out: dict[str, Any] = {}
    if raw in file:
        out["raw"] = file[raw]
    elif url in file:
        out["url"] = file[url]
    if file.get("mimeType"):
        out["mediaType"] = file["mimeType"]
    if file.get("name"):
        out["filename"] = file["name"]
    return out


def file_out(
    part: dict[str, Any], raw: str = "bytes", url: str = "uri", oneof: bool = False
) -> dict[str, Any]:
    """A flat v1.0 file part's fields as a v0.3 file object (`file_in`'s names); `oneof`: at most
    one of bytes and url, as the REST binding's proto has it."""
    file: dict[str, Any] = {}
    if "raw" in part:
        file[raw] = part["raw"]
    if "url" in part and not (oneof and "raw" in part):
        file[url] = part["url"]
    if part.get("mediaType"):
        file["mimeType"] = part["mediaType"]
    if part.get("filename"):
        file["name"] = part["filename"]
    return file


def part_in(part: Any) -> Any:
    """A v0.3 part (`kind` text|file|data) as a flat v1.0 part; anything else passes unchanged."""
    if not isinstance(part, dict) or "kind" not in part and "file" not in part:
        return part
    kind = part.get("kind")
    out: dict[str, Any] = {}
    if kind == "text" or (kind is None and "text" in part):
        out["text"] = part.get("text")
    elif kind == "data" or (kind is None and "data" in part):
        out["data"] = part.get("data")
    elif kind == "file" or "file" in part:
        file = part.get("file")
        out = file_in(file if isinstance(file, dict) else {})
    else:
        return {k: v for k, v in part.items() if k != "kind"}
    if part.get("metadata") is not None:
        out["metadata"] = part["metadata"]
    return out


def message_in(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    out = {k: v for k, v in message.items() if k != "kind"}
    if isinstance(out.get("role"), str) and out["role"] in V1_ROLE:  # a list is unhashable
        out["role"] = V1_ROLE[out["role"]]
    if isinstance(out.get("parts"), list):
        out["parts"] = [part_in(p) for p in out["parts"]]
    return out


def push_config_in(config: Any) -> Any:
    """v0.3 PushNotificationConfig (`authentication.schemes[]`) → v1.0 (`authentication.scheme`)."""
    if not isinstance(config, dict):
        return config
    out = dict(config)
    auth = out.get("authentication")
    if isinstance(auth, dict) and "schemes" in auth:
        schemes = auth.get("schemes") or []
        new_auth = {"scheme": schemes[0] if schemes else ""}
        if auth.get("credentials") is not None:
            new_auth["credentials"] = auth["credentials"]
        out["authentication"] = new_auth
    return out


def params_in(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The v1.0 params of a v0.3 request (params already camelCased)."""
    operation = OPERATION_OF_METHOD[method]
    if operation in ("SendMessage", "SendStreamingMessage"):
        out = dict(params)
        if "message" in out:
            out["message"] = message_in(out["message"])
        config = out.get("configuration")
        if isinstance(config, dict):
            config = dict(config)
            blocking = config.pop("blocking", None)
            if blocking is not None:
                config["returnImmediately"] = not blocking
            push = config.pop("pushNotificationConfig", None)
            if push is not None:
                config["taskPushNotificationConfig"] = push_config_in(push)
            out["configuration"] = config
        return out
    if operation == "CreateTaskPushNotificationConfig":
        config = push_config_in(params.get("pushNotificationConfig"))
        out = {k: v for k, v in params.items() if k != "pushNotificationConfig"}
        if isinstance(config, dict):
            out.update(config)
        out["taskId"] = params.get("taskId")
        return out
    if operation in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        out = {k: v for k, v in params.items() if k not in ("id", "pushNotificationConfigId")}
        out["taskId"] = params.get("id")
        if params.get("pushNotificationConfigId") is not None:
            out["id"] = params["pushNotificationConfigId"]
        return out
    if operation == "ListTaskPushNotificationConfigs":
        out = {k: v for k, v in params.items() if k != "id"}
        out["taskId"] = params.get("id")
        return out
    return params


# --- results: v1.0 JSON → v0.3 JSON ------------------------------------------------------------


def state_out(state: str) -> str:
    """`TASK_STATE_INPUT_REQUIRED` → `input-required`."""
    if not isinstance(state, str) or not state.startswith("TASK_STATE_"):
        return "unknown"
    name = state[len("TASK_STATE_") :].lower().replace("_", "-")
    return "unknown" if name == "unspecified" else name


def part_out(part: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any]
    if "text" in part:
        out = {"kind": "text", "text": part["text"]}
    elif "data" in part:
        data = part["data"]
        out = {"kind": "data", "data": data if isinstance(data, dict) else {"value": data}}
    else:
        out = {"kind": "file", "file": file_out(part)}
    if part.get("metadata") is not None:
        out["metadata"] = part["metadata"]
    return out


def _parts(parts: Any) -> list[Any]:
    return [part_out(p) if isinstance(p, dict) else p for p in (parts or [])]


def message_out(message: dict[str, Any]) -> dict[str, Any]:
    out = {
        **message,
        "kind": "message",
        "role": NEUTRAL_ROLE.get(message.get("role"), message.get("role")),
    }
    out["parts"] = _parts(message.get("parts"))
    return out


def artifact_out(artifact: dict[str, Any]) -> dict[str, Any]:
    return {**artifact, "parts": _parts(artifact.get("parts"))}


def status_out(status: dict[str, Any]) -> dict[str, Any]:
    out = {**status, "state": state_out(status.get("state", ""))}
    if isinstance(status.get("message"), dict):
        out["message"] = message_out(status["message"])
    return out


Render = Callable[[dict[str, Any]], dict[str, Any]]


def task_fields(
    task: dict[str, Any], status: Render, artifact: Render, message: Render
) -> dict[str, Any]:
    """A v1.0 task's fields rendered by a binding's own status, artifact and message shapes."""
    out: dict[str, Any] = {
        "id": task["id"],
        "contextId": task.get("contextId", ""),
        "status": status(task["status"]),
    }
    if task.get("artifacts"):
        out["artifacts"] = [artifact(a) for a in task["artifacts"]]
    if task.get("history"):
        out["history"] = [message(m) for m in task["history"]]
    if task.get("metadata"):
        out["metadata"] = task["metadata"]
    return out


def task_out(task: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "task", **task_fields(task, status_out, artifact_out, message_out)}


def push_config_out(config: dict[str, Any]) -> dict[str, Any]:
    """A flat v1.0 TaskPushNotificationConfig → v0.3 `{taskId, pushNotificationConfig{…}}`."""
    inner = {k: v for k, v in config.items() if k not in ("taskId", "tenant")}
    auth = inner.get("authentication")
    if isinstance(auth, dict):
        new_auth: dict[str, Any] = {"schemes": [auth["scheme"]] if auth.get("scheme") else []}
        if auth.get("credentials") is not None:
            new_auth["credentials"] = auth["credentials"]
        inner["authentication"] = new_auth
    return {"taskId": config.get("taskId", ""), "pushNotificationConfig": inner}


def stream_event_out(event: dict[str, Any], *, close_on_interrupt: bool) -> dict[str, Any]:
    """A v1.0 StreamResponse as a v0.3 event object with `kind` (and `final` on status updates)."""
    if "task" in event:
        return task_out(event["task"])
    if "message" in event:
        return message_out(event["message"])
    if "statusUpdate" in event:
        update = event["statusUpdate"]
        status = status_out(update["status"])
        final = status["state"] in TERMINAL or (
            close_on_interrupt and status["state"] in INTERRUPTED
        )
        out = {
            "kind": "status-update",
            "taskId": update.get("taskId"),
            "contextId": update.get("contextId"),
            "status": status,
            "final": final,
        }
        if update.get("metadata"):
            out["metadata"] = update["metadata"]
        return out
    if "artifactUpdate" in event:
        update = event["artifactUpdate"]
        out = {
            "kind": "artifact-update",
            "taskId": update.get("taskId"),
            "contextId": update.get("contextId"),
            "artifact": artifact_out(update["artifact"]),
            "append": bool(update.get("append")),
            "lastChunk": bool(update.get("lastChunk")),
        }
        if update.get("metadata"):
            out["metadata"] = update["metadata"]
        return out
    return event


def result_out(method: str, result: Any) -> Any:
    """The v0.3 result of a v0.3 method, from the v1.0 result the service rendered."""
    operation = OPERATION_OF_METHOD[method]
    if operation == "SendMessage":
        return stream_event_out(result, close_on_interrupt=True)  # the bare Task or Message
    if operation in ("GetTask", "CancelTask"):
        return task_out(result)
    if operation in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return push_config_out(result)
    if operation == "ListTaskPushNotificationConfigs":
        return [push_config_out(c) for c in (result or {}).get("configs", [])]
    return result  # delete: null; the extended card: as built


def error_out(
    exc: errors.ProtocolError, request_id: Any, null_data: bool = False
) -> dict[str, Any]:
    """A JSON-RPC error for a v0.3 caller: A2A codes newer than v0.3 become -32603. `null_data`:
    an error without details says `data: null` (the agent's way, `agent.v03.errorData`)."""
    reply = jsonrpc_error(exc, request_id)
    if reply["error"]["code"] not in V03_CODES:
        reply["error"]["code"] = -32603
    if null_data:
        reply["error"].setdefault("data", None)
    return reply


def wire_of(agent: Agent | None) -> V03Wire:
    """How the cassette's agent speaks v0.3 (mockagent's own way where it says nothing)."""
    return (agent.v03 if agent is not None else None) or V03Wire()


def check_params(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise errors.InvalidParams("params must be an object")
    return params
