"""Raw gRPC calls to mockagent's A2A service, below the a2a-sdk client: status codes, the
`google.rpc.Status` detail, the serialized bytes of an answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc
from a2a.types import a2a_pb2, a2a_pb2_grpc
from google.protobuf import json_format, struct_pb2
from google.rpc import error_details_pb2, status_pb2

VERSION = (("a2a-version", "1.0"),)
SERVICE = "/lf.a2a.v1.A2AService/"


@contextmanager
def stub(target: str) -> Iterator[a2a_pb2_grpc.A2AServiceStub]:
    """A blocking stub on a fresh channel to `target` (`host:port`)."""
    with grpc.insecure_channel(target) as channel:
        yield a2a_pb2_grpc.A2AServiceStub(channel)


def send_request(
    text: str, message_id: str = "m-1", tenant: str = ""
) -> a2a_pb2.SendMessageRequest:
    """A SendMessageRequest with one user text part."""
    message = a2a_pb2.Message(
        message_id=message_id, role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=text)]
    )
    return a2a_pb2.SendMessageRequest(tenant=tenant, message=message)


def raw_answer(target: str, method: str, request: Any) -> bytes:
    """The serialized answer of a unary rpc, as the server sent it."""
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(
            SERVICE + method,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=lambda raw: raw,
        )
        return bytes(call(request, metadata=VERSION))


def status_of(error: grpc.RpcError) -> status_pb2.Status:
    """The `google.rpc.Status` in an error's `grpc-status-details-bin` trailer."""
    for key, value in error.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin":
            return status_pb2.Status.FromString(value)
    raise AssertionError(f"no grpc-status-details-bin in {error!r}")


def error_info(status: status_pb2.Status) -> error_details_pb2.ErrorInfo:
    """The status's one ErrorInfo detail."""
    [info] = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    unpacked = error_details_pb2.ErrorInfo()
    info.Unpack(unpacked)
    return unpacked


def struct_detail(status: status_pb2.Status, type_url: str) -> dict[str, Any]:
    """A detail carried as a Struct of its JSON (mockagent's near-miss report)."""
    [detail] = [d for d in status.details if d.type_url == type_url]
    return json_format.MessageToDict(struct_pb2.Struct.FromString(detail.value))


DIFF_PART = a2a_pb2.Part(raw=b"--- a\n+++ b\n", media_type="text/x-diff")
"""A diff part, which code-reviewer reviews."""
