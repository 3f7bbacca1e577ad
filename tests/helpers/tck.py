"""A raw client for the TCK cassette over both JSON bindings, and a tiny SSE reader.

No SDK here: requests are hand-written JSON and streams are parsed line by line, so the
conformance tests see exactly the bytes the conformance kit would see. Every response is also
checked for what the TCK checks everywhere: RFC 3339 `Z` timestamps and camelCase keys.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import httpx

from tests.helpers.paths import ROOT

CASSETTE = ROOT / "cassettes" / "conformance" / "tck.yaml"
# The same agent with streaming, push notifications and the extended card off, and one that
# requires the TCK's extension: the cassettes its capability tests need.
NO_CAPABILITIES = CASSETTE.with_name("tck-no-capabilities.yaml")
REQUIRED_EXTENSION = CASSETTE.with_name("tck-required-extension.yaml")
EXTENSION = "urn:a2a:tck:required-extension"
# 4000 ms of `test-resubscribe-message-id` become 200 ms: short enough for a fast suite, long
# enough for a subscriber (or two) to connect while the task still works.
PACE = "scale=0.05"
HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
TIMEOUT = httpx.Timeout(5.0)  # a stream that does not close fails the test instead of hanging it
BINDINGS = ["JSONRPC", "HTTP+JSON"]
OPAQUE = frozenset({"data", "metadata"})  # user JSON: its keys are not the protocol's


class Expected(NamedTuple):
    """How the conformance cassettes answer an error: by spec 1.0.0's table (`errorTable`), the
    one the TCK's 1.0-dev branch checks."""

    code: int  # JSON-RPC
    http: int  # REST status
    reason: str  # ErrorInfo reason
    status: str  # google.rpc.Code: the REST body's `status` and the gRPC status code


# TaskNotCancelable is 409 and UnsupportedOperation, PushNotificationNotSupported and
# VersionNotSupported are UNIMPLEMENTED in spec 1.0.0; spec 1.0.1 (and a2a-sdk) say 400 and
# FAILED_PRECONDITION.
ERRORS = {
    "TaskNotFound": Expected(-32001, 404, "TASK_NOT_FOUND", "NOT_FOUND"),
    "TaskNotCancelable": Expected(-32002, 409, "TASK_NOT_CANCELABLE", "FAILED_PRECONDITION"),
    "UnsupportedOperation": Expected(-32004, 400, "UNSUPPORTED_OPERATION", "UNIMPLEMENTED"),
    "PushNotificationNotSupported": Expected(
        -32003, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED", "UNIMPLEMENTED"
    ),
    "VersionNotSupported": Expected(-32009, 400, "VERSION_NOT_SUPPORTED", "UNIMPLEMENTED"),
    "ContentTypeNotSupported": Expected(
        -32005, 415, "CONTENT_TYPE_NOT_SUPPORTED", "INVALID_ARGUMENT"
    ),
    "ExtensionSupportRequired": Expected(
        -32008, 400, "EXTENSION_SUPPORT_REQUIRED", "FAILED_PRECONDITION"
    ),
}


def new_id(prefix: str) -> str:
    """A fresh messageId with the given TCK prefix, as the kit makes them."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def user_message(message_id: str, text: str = "Hello from the TCK", **extra: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def check_wire(value: Any, path: str = "$") -> None:
    """Every timestamp matches the TCK's regex; every protocol key is camelCase."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert "_" not in key, f"snake_case key {path}.{key}"
            if key == "timestamp":
                assert isinstance(item, str) and TIMESTAMP.match(item), (
                    f"{path}.timestamp = {item!r}"
                )
            if key not in OPAQUE:
                check_wire(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_wire(item, f"{path}[{i}]")


# -- SSE -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: its `event:` name (None for a plain message) and its `data:` lines."""

    name: str | None
    data: list[str]

    def json(self) -> Any:
        assert len(self.data) == 1, f"one data: line per event, got {self.data!r}"
        return json.loads(self.data[0])


def iter_sse(response: httpx.Response) -> Iterator[SseEvent]:
    """Events as they arrive: `data:` lines up to a blank line; `:` comments are skipped."""
    assert response.status_code == 200, response.read()
    assert response.headers["content-type"].startswith("text/event-stream")
    name: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if data:
                yield SseEvent(name, data)
            name, data = None, []
            continue
        if line.startswith(":"):
            continue  # a keep-alive comment
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    assert not data, f"the stream closed inside an event: {data!r}"


# -- the client ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Error:
    """A protocol error as either binding sends it."""

    code: int  # JSON-RPC code, or the REST HTTP status
    reason: str | None  # the google.rpc.ErrorInfo reason
    message: str
    status: str | None = None  # REST: the body's google.rpc.Code name


@dataclass(frozen=True)
class Reply:
    result: Any = None
    error: Error | None = None

    def ok(self) -> Any:
        assert self.error is None, self.error
        return self.result


def assert_error(reply: Reply, kind_name: str, binding: str) -> Error:
    """The error the conformance cassettes answer with: spec 1.0.0's codes, as the TCK checks."""
    expected = ERRORS[kind_name]
    assert reply.error is not None, f"expected {kind_name}, got {reply.result!r}"
    assert reply.error.reason == expected.reason
    if binding == "JSONRPC":
        assert reply.error.code == expected.code
    else:
        assert (reply.error.code, reply.error.status) == (expected.http, expected.status)
    return reply.error


def _error_info(details: Any) -> str | None:
    for detail in details or []:
        if isinstance(detail, dict) and detail.get("@type", "").endswith("google.rpc.ErrorInfo"):
            assert detail.get("domain") == "a2a-protocol.org"
            return detail.get("reason")
    return None


def rest_error_of(response: httpx.Response) -> Error:
    """The protocol error of a raw REST response: its `google.rpc.Status` body."""
    error = response.json()["error"]
    assert error["code"] == response.status_code
    return Error(
        response.status_code, _error_info(error.get("details")), error["message"], error["status"]
    )


def _rest_request(operation: str, params: dict[str, Any]) -> tuple[str, str, Any, dict[str, Any]]:
    """(verb, path, JSON body or None, query) of an operation on the HTTP+JSON binding."""
    p = dict(params)
    if operation == "SendMessage":
        return "POST", "/message:send", p, {}
    if operation == "SendStreamingMessage":
        return "POST", "/message:stream", p, {}
    if operation == "GetTask":
        task_id = p.pop("id")
        return "GET", f"/tasks/{task_id}", None, p
    if operation == "CancelTask":
        return "POST", f"/tasks/{p['id']}:cancel", None, {}  # the TCK cancels with no body
    if operation == "SubscribeToTask":
        return "POST", f"/tasks/{p['id']}:subscribe", None, {}
    if operation == "GetExtendedAgentCard":
        return "GET", "/extendedAgentCard", None, {}
    configs = f"/tasks/{p.pop('taskId')}/pushNotificationConfigs"
    if operation == "CreateTaskPushNotificationConfig":
        return "POST", configs, p, {}
    if operation == "ListTaskPushNotificationConfigs":
        return "GET", configs, None, p
    if operation == "GetTaskPushNotificationConfig":
        return "GET", f"{configs}/{p['id']}", None, {}
    if operation == "DeleteTaskPushNotificationConfig":
        return "DELETE", f"{configs}/{p['id']}", None, {}
    raise AssertionError(f"no REST route for {operation}")


class Agent:
    """The TCK agent over one binding, in raw JSON: `call` for unary operations, `stream` for
    SSE."""

    def __init__(self, http: httpx.Client, binding: str) -> None:
        self.http = http
        self.binding = binding
        self._ids = itertools.count(1)

    # unary ---------------------------------------------------------------------------------

    def call(self, operation: str, params: dict[str, Any]) -> Reply:
        if self.binding == "JSONRPC":
            return self._rpc(operation, params)
        verb, path, body, query = _rest_request(operation, params)
        response = self.http.request(
            verb, path, params=query, content=None if body is None else json.dumps(body)
        )
        assert response.headers["content-type"] == "application/json"
        payload = response.json()
        check_wire(payload)
        if response.status_code != 200:
            return Reply(error=rest_error_of(response))
        return Reply(payload)

    def _rpc(self, operation: str, params: dict[str, Any]) -> Reply:
        request_id = next(self._ids)
        response = self.http.post(
            "/", json={"jsonrpc": "2.0", "id": request_id, "method": operation, "params": params}
        )
        assert response.status_code == 200, "JSON-RPC answers errors in HTTP 200 too"
        assert response.headers["content-type"] == "application/json"
        payload = response.json()
        check_wire(payload)
        assert payload["jsonrpc"] == "2.0" and payload["id"] == request_id
        if "error" in payload:
            assert set(payload) == {"jsonrpc", "id", "error"}
            error = payload["error"]
            assert set(error) <= {"code", "message", "data"}
            return Reply(
                error=Error(error["code"], _error_info(error.get("data")), error["message"])
            )
        assert set(payload) == {"jsonrpc", "id", "result"}
        return Reply(payload["result"])

    def send(
        self, message_id: str, configuration: dict[str, Any] | None = None, **message: Any
    ) -> Any:
        """SendMessage; the result (`{"task": …}` or `{"message": …}`)."""
        params: dict[str, Any] = {"message": user_message(message_id, **message)}
        if configuration is not None:
            params["configuration"] = configuration
        return self.call("SendMessage", params).ok()

    def task(self, message_id: str, **kwargs: Any) -> dict[str, Any]:
        result = self.send(message_id, **kwargs)
        assert set(result) == {"task"}, result
        return result["task"]

    # streams -------------------------------------------------------------------------------

    @contextmanager
    def stream(
        self, operation: str, params: dict[str, Any], *, verb: str | None = None
    ) -> Iterator[Iterator[Any]]:
        """An open stream: yields an iterator of StreamResponse objects, checked and unwrapped."""
        if self.binding == "JSONRPC":
            request_id = next(self._ids)
            body = {"jsonrpc": "2.0", "id": request_id, "method": operation, "params": params}
            request = self.http.stream(
                "POST", "/", json=body, headers={"Accept": "text/event-stream"}
            )
        else:
            request_id = None
            default_verb, path, payload, _ = _rest_request(operation, params)
            request = self.http.stream(
                verb or default_verb,
                path,
                headers={"Accept": "text/event-stream"},
                content=None if payload is None else json.dumps(payload),
            )
        with request as response:
            yield (self._unwrap(event, request_id) for event in iter_sse(response))

    def _unwrap(self, event: SseEvent, request_id: int | None) -> Any:
        assert event.name is None, f"unexpected {event.name!r} event: {event.data}"
        payload = event.json()
        check_wire(payload)
        if self.binding == "JSONRPC":
            assert payload.get("jsonrpc") == "2.0" and payload.get("id") == request_id, payload
            assert set(payload) == {"jsonrpc", "id", "result"}, payload
            payload = payload["result"]
        assert len(payload) == 1 and next(iter(payload)) in {
            "task",
            "message",
            "statusUpdate",
            "artifactUpdate",
        }
        return payload

    def stream_all(self, operation: str, params: dict[str, Any], **kwargs: Any) -> list[Any]:
        """Every event of a stream, read until the server closes it."""
        with self.stream(operation, params, **kwargs) as events:
            return list(events)

    def stream_message(self, message_id: str, **kwargs: Any) -> list[Any]:
        return self.stream_all(
            "SendStreamingMessage", {"message": user_message(message_id)}, **kwargs
        )


def kind(event: dict[str, Any]) -> tuple[str, str | None]:
    """(`task`|`message`|`statusUpdate`|`artifactUpdate`, the state it shows, if any)."""
    [(name, body)] = event.items()
    state = (body.get("status") or {}).get("state") if name in ("task", "statusUpdate") else None
    return name, state


def status_text(task: dict[str, Any]) -> str | None:
    message = task["status"].get("message")
    return None if message is None else "".join(p.get("text", "") for p in message["parts"])
