"""The conformance cassettes over gRPC, reached as the TCK reaches them: from the card.

The TCK (1.0-dev) takes each binding's address from the card's `supportedInterfaces` and runs its
gRPC tests only when the card lists a `GRPC` interface; its gRPC client sends no tenant, so each
cassette is served on its own (docs/conformance.md). Raw protobuf calls, no SDK client.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import grpc
import httpx
import pytest
from a2a.types import a2a_pb2

from mockagent.engine.player import Pace
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.grpc_calls import VERSION, error_info, send_request, status_of, stub
from tests.helpers.tck import (
    CASSETTE,
    ERRORS,
    EXTENSION,
    NO_CAPABILITIES,
    PACE,
    REQUIRED_EXTENSION,
    TIMEOUT,
    new_id,
)

CASSETTES: dict[str, Path] = {
    "tck": CASSETTE,
    "tck-no-capabilities": NO_CAPABILITIES,
    "tck-required-extension": REQUIRED_EXTENSION,
}
COMPLETED = a2a_pb2.TASK_STATE_COMPLETED


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, ServerThread]]:
    """Each conformance cassette on its own HTTP and gRPC ports, as `serve --grpc-port` runs it."""
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(serve_in_thread(path, grpc_port=0, pace=Pace.parse(PACE)))
            for name, path in CASSETTES.items()
        }


def grpc_url(server: ServerThread) -> str:
    """Where the TCK's gRPC client connects: the card's GRPC interface."""
    card = httpx.get(server.card_url(), timeout=TIMEOUT).json()
    grpc_interfaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert grpc_interfaces, f"no GRPC interface on the card of {card['name']}: the TCK skips gRPC"
    return str(grpc_interfaces[0]["url"])


def refusal(error: grpc.RpcError) -> tuple[grpc.StatusCode, str]:
    return error.code(), error_info(status_of(error)).reason


@pytest.mark.parametrize("name", CASSETTES)
def test_every_conformance_card_lists_grpc_after_the_json_bindings(
    servers: dict[str, ServerThread], name: str
) -> None:
    server = servers[name]
    card = httpx.get(server.card_url(), timeout=TIMEOUT).json()
    assert card["supportedInterfaces"] == [
        {"url": server.url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": server.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        # One cassette: no tenant, so the TCK's client (which sends none) reaches the agent.
        {"url": server.grpc_target, "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ]


def test_a_blocking_send_and_get_task_over_grpc(servers: dict[str, ServerThread]) -> None:
    with stub(grpc_url(servers["tck"])) as a2a:
        answer = a2a.SendMessage(send_request("hi", new_id("tck-artifact-text")), metadata=VERSION)
        task = answer.task
        assert task.status.state == COMPLETED
        assert [[p.text for p in a.parts] for a in task.artifacts] == [["Generated text content"]]
        fetched = a2a.GetTask(a2a_pb2.GetTaskRequest(id=task.id), metadata=VERSION)
    assert fetched == task


def test_a_stream_over_grpc_plays_the_prefixs_script(servers: dict[str, ServerThread]) -> None:
    request = send_request("hi", new_id("tck-stream-artifact-chunked"))
    with stub(grpc_url(servers["tck"])) as a2a:
        events = list(a2a.SendStreamingMessage(request, metadata=VERSION, timeout=5))
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds == ["task", "artifact_update", "artifact_update", "status_update"]
    assert events[0].task.status.state == a2a_pb2.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == COMPLETED


def expected(kind: str) -> tuple[grpc.StatusCode, str]:
    """(code, ErrorInfo reason) of an error by spec 1.0.0's table, the cassettes' `errorTable`."""
    return grpc.StatusCode[ERRORS[kind].status], ERRORS[kind].reason


def test_the_bare_agent_refuses_its_capabilities_over_grpc(
    servers: dict[str, ServerThread],
) -> None:
    """UNIMPLEMENTED, as spec 1.0.0 has it and the TCK's 1.0-dev branch checks (spec 1.0.1 and
    a2a-sdk say FAILED_PRECONDITION; a2aproject/a2a-tck#231)."""
    push = a2a_pb2.TaskPushNotificationConfig(task_id="t", url="https://example.com/webhook")
    with stub(grpc_url(servers["tck-no-capabilities"])) as a2a:
        with pytest.raises(grpc.RpcError) as streaming:
            list(a2a.SendStreamingMessage(send_request("hi", new_id("tck-stream-001")), timeout=5))
        with pytest.raises(grpc.RpcError) as pushing:
            a2a.CreateTaskPushNotificationConfig(push, metadata=VERSION)
        with pytest.raises(grpc.RpcError) as extended:
            a2a.GetExtendedAgentCard(a2a_pb2.GetExtendedAgentCardRequest(), metadata=VERSION)
        task = a2a.SendMessage(send_request("hi", new_id("tck-complete-task"))).task
    assert refusal(streaming.value) == expected("UnsupportedOperation")
    assert refusal(pushing.value) == expected("PushNotificationNotSupported")
    assert refusal(extended.value) == expected("UnsupportedOperation")
    assert task.status.state == COMPLETED, "the rest of the kit still runs"


def test_the_full_agent_answers_spec_1_0_0s_codes_over_grpc(
    servers: dict[str, ServerThread],
) -> None:
    """GRPC-ERR-002's version test (`a2a-version: 99.0`) and CORE-SEND-002 (a message to a
    completed task) expect UNIMPLEMENTED; a cancel of a completed task stays FAILED_PRECONDITION."""
    with stub(grpc_url(servers["tck"])) as a2a:
        with pytest.raises(grpc.RpcError) as version:
            a2a.SendMessage(
                send_request("hi", new_id("tck-complete-task")), metadata=(("a2a-version", "99.0"),)
            )
        task = a2a.SendMessage(send_request("hi", new_id("tck-complete-task")), metadata=VERSION)
        follow_up = send_request("again", new_id("tck-complete-task"))
        follow_up.message.task_id = task.task.id
        with pytest.raises(grpc.RpcError) as ended:
            a2a.SendMessage(follow_up, metadata=VERSION)
        with pytest.raises(grpc.RpcError) as cancel:
            a2a.CancelTask(a2a_pb2.CancelTaskRequest(id=task.task.id), metadata=VERSION)
    assert refusal(version.value) == expected("VersionNotSupported")
    assert refusal(ended.value) == expected("UnsupportedOperation")
    assert refusal(cancel.value) == expected("TaskNotCancelable")


def test_the_required_extension_over_grpc_metadata(servers: dict[str, ServerThread]) -> None:
    with stub(grpc_url(servers["tck-required-extension"])) as a2a:
        with pytest.raises(grpc.RpcError) as refused:
            a2a.SendMessage(send_request("hi", new_id("tck-cap-ext-004")), metadata=VERSION)
        activated = (*VERSION, ("a2a-extensions", EXTENSION))
        answer = a2a.SendMessage(send_request("hi", new_id("tck-cap-ext-004")), metadata=activated)
    assert refusal(refused.value) == expected("ExtensionSupportRequired")
    assert answer.task.status.state == COMPLETED
