"""Values JSON has not (NaN, Infinity, -Infinity, a number past a double) are parse errors on
every binding, never echoed into tasks, ListTasks or the journal; malformed protobuf over gRPC is
INVALID_ARGUMENT saying what, naming no Python class. Real HTTP and a raw gRPC channel."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import httpx
import pytest
from a2a.types import a2a_pb2

from mockagent.dialects.a2a.grpc_aio import aio_handler
from mockagent.dialects.a2a.grpc_binding import Target
from mockagent.dialects.a2a.grpc_wire import METHODS
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.grpc_calls import SERVICE, VERSION, send_request
from tests.helpers.paths import KIT, ROOT

JSON = {"content-type": "application/json"}
A2A = {**JSON, "a2a-version": "1.0"}
NOT_JSON = ["NaN", "Infinity", "-Infinity", "1e999"]
MESSAGE = (
    '{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "deploy build 7 to staging"}],'
    ' "metadata": {"n": $N}}'
)
SEND = '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": $M}}'


def holding(template: str, value: str) -> str:
    """`template` with the message at $M and `value` at $N."""
    return template.replace("$M", MESSAGE).replace("$N", value)


def strict(text: str) -> object:
    """JSON as a strict reader reads it: NaN and Infinity refused."""

    def refuse(name: str) -> object:
        raise ValueError(f"{name} in an answer")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def kit() -> Iterator[ServerThread]:
    with serve_in_thread(KIT, grpc_port=0, pace="instant") as server:
        yield server


@pytest.fixture(scope="module")
def agentex() -> Iterator[ServerThread]:
    with serve_in_thread(ROOT / "cassettes" / "agentex" / "sync-agent.yaml") as server:
        yield server


@pytest.mark.parametrize("value", NOT_JSON)
def test_jsonrpc_takes_no_nan_or_infinity(kit, value):
    url = kit.agent_url("deployer")
    response = httpx.post(url, content=holding(SEND, value), headers=A2A)
    error = strict(response.text)["error"]
    assert (response.status_code, error["code"]) == (200, -32700), response.text
    assert value.lstrip("-") in error["message"]


@pytest.mark.parametrize("value", NOT_JSON)
def test_rest_takes_no_nan_or_infinity(kit, value):
    url = kit.agent_url("deployer") + "/message:send"
    response = httpx.post(url, content=holding('{"message": $M}', value), headers=A2A)
    assert response.status_code == 400, response.text
    assert strict(response.text)["error"]["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize("value", NOT_JSON)
def test_agentex_rpc_takes_no_nan_or_infinity(agentex, value):
    url = agentex.url + "/agents/name/echo-bot/rpc"
    content = '{"type": "text", "author": "user", "content": "hi?", "n": $N}'
    body = holding('{"method": "message/send", "params": {"content": ' + content + "}}", value)
    response = httpx.post(url, content=body, headers=JSON)
    broken = httpx.post(url, content=b'{"method": ', headers=JSON)
    assert response.status_code == broken.status_code
    assert strict(response.text)["error"]["code"] == broken.json()["error"]["code"]
    assert "Invalid JSON body" in strict(response.text)["error"]["message"]


@pytest.mark.parametrize("value", NOT_JSON)
def test_the_admin_api_takes_no_nan_or_infinity(kit, value):
    admin = kit.url + "/_mockagent/"
    interaction = '{"name": "n-$N", "match": {"where": {"n": $N}}, "reply": {"message": "x"}}'
    for path, body in [
        ("interactions?agent=deployer", interaction),
        ("reset", '{"agent": "deployer", "n": $N}'),
        ("clock/advance", '{"ms": $N}'),
    ]:
        for number, status in ((value, 400), ("1", 201 if path.startswith("inter") else 200)):
            response = httpx.post(admin + path, content=holding(body, number), headers=JSON)
            assert response.status_code == status, (path, number, response.text)


def test_nothing_refused_reaches_the_journal_or_the_tasks(kit):
    kit.reset()
    url = kit.agent_url("deployer")
    for value in NOT_JSON:
        httpx.post(url, content=holding(SEND, value), headers=A2A)
        httpx.post(url + "/message:send", content=holding('{"message": $M}', value))
    calls = httpx.get(kit.url + "/_mockagent/calls").text
    tasks = httpx.get(url + "/tasks", headers={"a2a-version": "1.0"}).text
    assert strict(calls)["calls"] == []
    assert strict(tasks)["tasks"] == []


def _raw(channel: grpc.Channel, name: str) -> object:
    """A call of rpc `name` that sends bytes as they are."""
    kind = channel.unary_stream if METHODS[name].streaming else channel.unary_unary
    return kind(SERVICE + name, request_serializer=lambda b: b, response_deserializer=bytes)


@pytest.fixture(scope="module")
def waiting() -> Iterator[str]:
    """grpc.aio's server with the binding's handlers as a shared store has them (every call on
    a thread); a malformed request never reaches an agent, so none is resolved."""

    def no_agent(tenant: str) -> Target:
        raise AssertionError(f"a malformed request reached an agent ({tenant!r})")

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    run = lambda work: asyncio.run_coroutine_threadsafe(work, loop).result()  # noqa: E731

    async def bind(threads: ThreadPoolExecutor) -> tuple[grpc.aio.Server, int]:
        server = grpc.aio.server(handlers=[aio_handler(no_agent, threads, waits=True)])
        return server, server.add_insecure_port("127.0.0.1:0")

    with ThreadPoolExecutor(max_workers=4) as threads:
        server, port = run(bind(threads))
        run(server.start())
        try:
            yield f"127.0.0.1:{port}"
        finally:
            run(server.stop(None))
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


@pytest.mark.parametrize("server", ["in memory", "waiting"])
@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize(
    "garbage", [b"\xff\xff\xff", b"\x0a\x05ab", b"\x08" + b"\xff" * 11, b"\x00"]
)
def test_malformed_protobuf_is_invalid_argument(kit, waiting, server, name, garbage):
    target = kit.grpc_target if server == "in memory" else waiting
    with grpc.insecure_channel(target) as channel:
        with pytest.raises(grpc.RpcError) as refused:
            answer = _raw(channel, name)(garbage, metadata=VERSION, timeout=10)
            if METHODS[name].streaming:
                list(answer)
    error = refused.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert "protobuf encoding is corrupt" in error.details()
    assert "<class" not in error.details() and "Error" not in error.details()


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_grpc_takes_no_nan_or_infinity_in_a_struct(kit, number):
    request = send_request("deploy build 7 to staging", tenant="deployer")
    request.message.metadata.update({"n": number})
    with grpc.insecure_channel(kit.grpc_target) as channel:
        call = channel.unary_unary(
            SERVICE + "SendMessage",
            request_serializer=a2a_pb2.SendMessageRequest.SerializeToString,
            response_deserializer=bytes,
        )
        with pytest.raises(grpc.RpcError) as refused:
            call(request, metadata=VERSION, timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()
    assert "SerializeToJsonError" not in refused.value.details()
