"""The A2A gRPC binding's messages: protobuf requests in as the ProtoJSON the HTTP+JSON binding
takes, answers out as protobuf; errors as `google.rpc.Status` with its detail messages.

Requests read as `json_format.MessageToDict` reads them, which gives the same camelCase JSON
(unset fields omitted, enums by name) a client's HTTP+JSON body carries: the service, the
matchers and the engine see the same call whichever binding it came by. Both ways go through
grpc_convert, and through json_format where it leaves a shape to it. Needs `mockagent-server[grpc]`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from a2a.types import a2a_pb2
from google.protobuf import any_pb2, empty_pb2, json_format, struct_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from mockagent import errors
from mockagent.dialects.a2a.grpc_convert import json_of, kwargs_of

SERVICE = "lf.a2a.v1.A2AService"
"""The v1.0 service name in `a2a.proto` (`package lf.a2a.v1`)."""


class Method(NamedTuple):
    """One rpc: its request and response messages, and whether it streams its answer."""

    request: type[Message]
    response: type[Message]
    streaming: bool = False


METHODS: dict[str, Method] = {
    "SendMessage": Method(a2a_pb2.SendMessageRequest, a2a_pb2.SendMessageResponse),
    "SendStreamingMessage": Method(a2a_pb2.SendMessageRequest, a2a_pb2.StreamResponse, True),
    "GetTask": Method(a2a_pb2.GetTaskRequest, a2a_pb2.Task),
    "ListTasks": Method(a2a_pb2.ListTasksRequest, a2a_pb2.ListTasksResponse),
    "CancelTask": Method(a2a_pb2.CancelTaskRequest, a2a_pb2.Task),
    "SubscribeToTask": Method(a2a_pb2.SubscribeToTaskRequest, a2a_pb2.StreamResponse, True),
    "CreateTaskPushNotificationConfig": Method(
        a2a_pb2.TaskPushNotificationConfig, a2a_pb2.TaskPushNotificationConfig
    ),
    "GetTaskPushNotificationConfig": Method(
        a2a_pb2.GetTaskPushNotificationConfigRequest, a2a_pb2.TaskPushNotificationConfig
    ),
    "ListTaskPushNotificationConfigs": Method(
        a2a_pb2.ListTaskPushNotificationConfigsRequest,
        a2a_pb2.ListTaskPushNotificationConfigsResponse,
    ),
    "DeleteTaskPushNotificationConfig": Method(
        a2a_pb2.DeleteTaskPushNotificationConfigRequest, empty_pb2.Empty
    ),
    "GetExtendedAgentCard": Method(a2a_pb2.GetExtendedAgentCardRequest, a2a_pb2.AgentCard),
}

# Typed error details a client can unpack; any other `@type` (mockagent's near-miss report)
# travels as a Struct of its JSON under its own type URL.
_DETAILS: dict[str, type[Message]] = {
    "type.googleapis.com/google.rpc.ErrorInfo": error_details_pb2.ErrorInfo,
    "type.googleapis.com/google.rpc.BadRequest": error_details_pb2.BadRequest,
    "type.googleapis.com/google.rpc.DebugInfo": error_details_pb2.DebugInfo,
    "type.googleapis.com/google.rpc.Help": error_details_pb2.Help,
    "type.googleapis.com/google.rpc.LocalizedMessage": error_details_pb2.LocalizedMessage,
}


class Malformed(NamedTuple):
    """Request bytes that are no message of the rpc's request type (`full_name`)."""

    full_name: str


def reader(request: type[Message]) -> Callable[[bytes], Message | Malformed]:
    """The request deserializer of an rpc: grpcio answers a deserializer's exception with
    UNKNOWN naming its Python class, so bad bytes become a `Malformed` the handler refuses."""

    def read(data: bytes) -> Message | Malformed:
        try:
            return request.FromString(data)
        except Exception:  # DecodeError, or nesting past protobuf's depth limit
            return Malformed(request.DESCRIPTOR.full_name)

    return read


def params_of(request: Message | Malformed) -> dict[str, Any]:
    """A request message as ProtoJSON params (camelCase, unset fields left out), as
    `json_format.MessageToDict` gives them. ParseError for bytes that were no message, and
    InvalidParams for a value JSON cannot hold (a NaN or infinite number in a Struct)."""
    if isinstance(request, Malformed):
        raise errors.ParseError(
            f"The request is not a valid {request.full_name}: its protobuf encoding is corrupt"
        )
    try:
        return json_of(request)
    except Exception:  # Unfit, or a value JSON cannot hold: json_format decides, and says why
        try:
            return json_format.MessageToDict(request)
        except json_format.SerializeToJsonError as exc:
            raise errors.InvalidParams(f"The request cannot be read as JSON: {exc}") from None


def message_of(result: Any, response: type[Message]) -> Message:
    """The engine's result JSON as `response`. A field the proto has no place for (a recorded
    agent's extra key) is left out: gRPC cannot carry it. json_format.ParseError when protobuf
    cannot hold the answer."""
    if result is None or response is empty_pb2.Empty:
        return response()
    try:
        return response(**kwargs_of(result, response.DESCRIPTOR))
    except Exception:  # Unfit, or a value protobuf refused: json_format decides, and says why
        return parsed(result, response)


def parsed(result: Any, response: type[Message]) -> Message:
    """`message_of` by json_format alone: the way every answer took before grpc_convert, and
    the one its answers must equal."""
    message = response()
    json_format.ParseDict(result, message, ignore_unknown_fields=True)
    return message


def serialize(message: Message) -> bytes:
    """Wire bytes with map entries (Struct fields: metadata, data) in key order, so equal answers
    are equal bytes run to run."""
    return message.SerializeToString(deterministic=True)


def _any(detail: dict[str, Any]) -> any_pb2.Any | None:
    type_url = detail.get("@type")
    if not isinstance(type_url, str):
        return None
    fields = {k: v for k, v in detail.items() if k != "@type"}
    packed = any_pb2.Any()
    kind = _DETAILS.get(type_url)
    try:
        if kind is not None:
            packed.Pack(json_format.ParseDict(fields, kind(), ignore_unknown_fields=True))
        else:
            struct = struct_pb2.Struct()
            struct.update(fields)
            packed.type_url, packed.value = type_url, serialize(struct)
    except (json_format.ParseError, ValueError, TypeError):
        return None  # a scripted detail proto cannot hold: the code and message still say it
    return packed


def status_of(code: int, message: str, details: list[dict[str, Any]]) -> status_pb2.Status:
    """A `google.rpc.Status` (for `grpc-status-details-bin`) from REST-shaped JSON details."""
    status = status_pb2.Status(code=code, message=message)
    for detail in details:
        packed = _any(detail)
        if packed is not None:
            status.details.append(packed)
    return status
