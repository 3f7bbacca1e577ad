"""JSON nested past the depth limit is a protocol error where it is parsed, on every binding
(JSON-RPC, HTTP+JSON, Agentex, the admin API; gRPC Struct values), never a 500 RecursionError
from code that walks the value later. Real HTTP and gRPC on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import httpx
import pytest

from mockagent.dialects.http import MAX_DEPTH
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.grpc_calls import SERVICE, VERSION, send_request
from tests.helpers.paths import KIT, ROOT

JSON = {"content-type": "application/json"}
A2A = {**JSON, "a2a-version": "1.0"}
DEPTHS = [MAX_DEPTH + 1, 500, 990]  # 500-990: past the parser, short of its RecursionError
TOO_DEEP = "nested too deeply"


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def message(metadata: str) -> str:
    return (
        '{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "deploy build 7 to '
        'staging"}], "metadata": {"n": ' + metadata + "}}"
    )


@pytest.fixture(scope="module")
def kit() -> Iterator[ServerThread]:
    with serve_in_thread(KIT, grpc_port=0, pace="instant") as server:
        yield server


@pytest.fixture(scope="module")
def agentex() -> Iterator[ServerThread]:
    with serve_in_thread(ROOT / "cassettes" / "agentex" / "sync-agent.yaml") as server:
        yield server


@pytest.mark.parametrize("depth", DEPTHS)
def test_jsonrpc_refuses_deep_json_as_a_parse_error(kit, depth):
    body = '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
    body += message(nested(depth)) + "}}"
    answer = httpx.post(kit.agent_url("deployer"), content=body, headers=A2A)
    assert answer.status_code == 200, answer.text
    assert answer.json()["error"]["code"] == -32700
    assert TOO_DEEP in answer.json()["error"]["message"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_http_json_refuses_deep_json_as_invalid_argument(kit, depth):
    url = kit.agent_url("deployer") + "/message:send"
    answer = httpx.post(url, content='{"message": ' + message(nested(depth)) + "}", headers=A2A)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert TOO_DEEP in answer.json()["error"]["message"]


def test_json_as_deep_as_the_limit_is_answered(kit):
    url = kit.agent_url("deployer") + "/message:send"
    inner = nested(MAX_DEPTH - 4)  # body, message, metadata, n: four levels above it
    answer = httpx.post(url, content='{"message": ' + message(inner) + "}", headers=A2A)
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("depth", DEPTHS)
def test_agentex_rpc_refuses_deep_json(agentex, depth):
    url = agentex.url + "/agents/name/echo-bot/rpc"
    content = '{"type": "text", "author": "user", "content": "hi?", "n": ' + nested(depth) + "}"
    body = '{"method": "message/send", "params": {"content": ' + content + "}}"
    answer = httpx.post(url, content=body, headers=JSON)
    broken = httpx.post(url, content=b'{"method": ', headers=JSON)  # what a bad body gets
    assert answer.status_code == broken.status_code, answer.text
    error = answer.json()["error"]
    assert error["code"] == broken.json()["error"]["code"] and TOO_DEEP in error["message"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_admin_api_refuses_deep_json(kit, depth):
    admin = kit.url + "/_mockagent/"
    interaction = {"name": "deep", "match": {"where": {"n": "$N"}}, "reply": {"message": "x"}}
    for path, body in [
        ("interactions?agent=deployer", json.dumps(interaction)),
        ("reset", '{"agent": "deployer", "n": "$N"}'),
        ("clock/advance", '{"ms": 1, "n": "$N"}'),
    ]:
        deep = body.replace('"$N"', nested(depth))
        answer = httpx.post(admin + path, content=deep, headers=JSON)
        assert answer.status_code == 400, (path, answer.text)
        assert TOO_DEEP in answer.json()["error"]["message"], (path, answer.text)


def _varint(number: int) -> bytes:
    out = b""
    while number > 0x7F:
        out += bytes([number & 0x7F | 0x80])
        number >>= 7
    return out + bytes([number])


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _deep_metadata(depth: int) -> bytes:
    """SendMessageRequest bytes that merge `message.metadata = {"n": [[…]]}` (lists nested
    `depth` deep) into a valid request: written by hand, as protobuf's own writer refuses to
    build what its reader would refuse."""
    value = _field(6, b"")  # Value.list_value: an empty ListValue
    for _ in range(depth - 1):
        value = _field(6, _field(1, value))  # Value{list_value: ListValue{values: [value]}}
    entry = _field(1, b"\x0an") + _field(2, value)  # Struct.fields["n"] (map entry: key, value)
    metadata = _field(1, entry)
    request = send_request("deploy build 7 to staging", tenant="deployer")
    return request.SerializeToString() + _field(2, _field(6, metadata))  # message.metadata


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 90, 500])
def test_grpc_refuses_a_deep_struct_as_invalid_argument(kit, depth):
    with grpc.insecure_channel(kit.grpc_target) as channel:
        call = channel.unary_unary(
            SERVICE + "SendMessage", request_serializer=lambda b: b, response_deserializer=bytes
        )
        with pytest.raises(grpc.RpcError) as refused:
            call(_deep_metadata(depth), metadata=VERSION, timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()


def test_grpc_answers_a_struct_nested_a_few_levels(kit):
    with grpc.insecure_channel(kit.grpc_target) as channel:
        call = channel.unary_unary(
            SERVICE + "SendMessage", request_serializer=lambda b: b, response_deserializer=bytes
        )
        assert call(_deep_metadata(10), metadata=VERSION, timeout=10)
