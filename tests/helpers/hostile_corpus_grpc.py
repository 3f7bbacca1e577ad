"""The corpus against the gRPC binding (see hostile_corpus.py): request bytes sent as they are
(a channel with identity serializers) to `lf.a2a.v1.A2AService` on the folder's tenant `a2a`:
bytes that are no protobuf, Struct values nested past any parser's limit, NaN and infinities in
Struct numbers, unknown enum values. A sound answer is OK or a status other than UNKNOWN and
INTERNAL, with no Python exception name in its message."""

from __future__ import annotations

import math
from dataclasses import dataclass

from a2a.types import a2a_pb2
from google.protobuf import struct_pb2

TENANT = "a2a"


@dataclass(frozen=True)
class GrpcProbe:
    id: str
    method: str
    data: bytes


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2) by hand: no protobuf library builds 1,000 levels."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def deep_struct(depth: int) -> bytes:
    """A google.protobuf.Struct `{"k": {"k": … {}}}` nested `depth` levels (Struct.fields is
    field 1, a map entry's key 1 and value 2, Value.struct_value field 5)."""
    struct = b""
    for _ in range(depth):
        struct = field(1, field(1, b"k") + field(2, field(5, struct)))
    return struct


def deep_list(depth: int) -> bytes:
    """A Struct `{"k": [[[…]]]}` of `depth` nested lists (Value.list_value 6, ListValue 1)."""
    value = b""
    for _ in range(depth):
        value = field(6, field(1, value))
    return field(1, field(1, b"k") + field(2, value))


def send(text: str = "hello", metadata: bytes = b"", role: int = a2a_pb2.ROLE_USER) -> bytes:
    """A SendMessageRequest to the tenant with `metadata` (Struct bytes) on its message."""
    message = a2a_pb2.Message(message_id="m-1", parts=[a2a_pb2.Part(text=text)])
    message.role = role  # type: ignore[assignment]  # any number: an open enum on the wire
    raw = message.SerializeToString()
    if metadata:
        raw += field(6, metadata)  # Message.metadata
    return a2a_pb2.SendMessageRequest(tenant=TENANT).SerializeToString() + field(2, raw)


def number(value: float) -> bytes:
    """A Struct `{"x": value}` (a double, whatever it is)."""
    struct = struct_pb2.Struct()
    struct.fields["x"].number_value = value
    return struct.SerializeToString()


def grpc_probes() -> list[GrpcProbe]:
    """Every gRPC probe. Those meant to reach the agent name its tenant first: a request with
    no tenant is answered NOT_FOUND before anything else is read."""
    tenant = field(1, TENANT.encode())
    probes = [
        GrpcProbe("grpc-not-protobuf", "SendMessage", b"\xff\xff\xff\xff"),
        GrpcProbe("grpc-truncated-length", "SendMessage", tenant + b"\x12\x7fab"),
        GrpcProbe("grpc-huge-length", "SendMessage", tenant + b"\x12\xff\xff\xff\xff\x0f"),
        GrpcProbe("grpc-wrong-wire-type", "SendMessage", tenant + b"\x10\x01"),  # a varint
        GrpcProbe("grpc-bad-utf8-tenant", "SendMessage", field(1, b"\xff\xfe")),
        GrpcProbe("grpc-get-task-truncated", "GetTask", tenant + b"\x12\x05a"),
        GrpcProbe("grpc-list-tasks-garbage", "ListTasks", tenant + b"\x08" * 16),
        GrpcProbe("grpc-no-message", "SendMessage", tenant),
        GrpcProbe("grpc-empty", "SendMessage", b""),
        GrpcProbe("grpc-unknown-role", "SendMessage", send(role=99)),
        GrpcProbe("grpc-empty-text", "SendMessage", send(text="")),
    ]
    # Each Struct level is three messages deep (Struct, map entry, Value): protobuf's limit of
    # 100 falls between 32 and 33 levels under the request and the message.
    for depth in (10, 32, 33, 1000):
        struct, values = send(metadata=deep_struct(depth)), send(metadata=deep_list(depth))
        probes.append(GrpcProbe(f"grpc-struct-nested-{depth}", "SendMessage", struct))
        probes.append(GrpcProbe(f"grpc-list-nested-{depth}", "SendMessage", values))
    for what, value in (("nan", math.nan), ("infinity", math.inf), ("minus-infinity", -math.inf)):
        data = send(metadata=number(value))
        probes.append(GrpcProbe(f"grpc-struct-{what}", "SendMessage", data))
    return probes
