"""The gRPC binding below the client: status codes and `google.rpc.Status` details from the
spec's error table, service parameters in metadata, folder tenants, and the same tasks, ids,
timestamps and bytes as the JSON bindings give for the same calls."""

from __future__ import annotations

import grpc
import httpx
import pytest
from a2a.types import a2a_pb2
from google.protobuf import json_format

from mockagent.cassette import content
from mockagent.dialects.a2a.service import A2AService
from mockagent.engine.player import Pace
from mockagent.server.thread import serve_in_thread
from tests.helpers.grpc_calls import (
    VERSION,
    error_info,
    raw_answer,
    send_request,
    status_of,
    struct_detail,
    stub,
)
from tests.helpers.paths import KIT

DOMAIN = "a2a-protocol.org"


def test_an_unknown_task_is_not_found_with_its_error_info(kit_server) -> None:
    with stub(kit_server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
        a2a.GetTask(a2a_pb2.GetTaskRequest(tenant="test-runner", id="nope"), metadata=VERSION)

    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    status = status_of(caught.value)
    assert status.code == grpc.StatusCode.NOT_FOUND.value[0]
    assert status.message == caught.value.details()
    info = error_info(status)
    assert (info.reason, info.domain) == ("TASK_NOT_FOUND", DOMAIN)


def test_an_unmatched_call_carries_the_near_miss_report(kit_server) -> None:
    request = send_request("Please review nothing", tenant="code-reviewer")
    with stub(kit_server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
        a2a.SendMessage(request, metadata=VERSION)

    # As UnsupportedOperation on the other bindings: the client gets a typed error, no retry.
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "languages" in caught.value.details(), "the report names the closest interaction"
    status = status_of(caught.value)
    info = error_info(status)
    assert (info.reason, info.domain) == ("UNSUPPORTED_OPERATION", DOMAIN)
    assert info.metadata["mockagent"] == "NO_MATCHING_INTERACTION"
    report = struct_detail(status, "type.googleapis.com/mockagent.v1.NearMissReport")
    assert "languages" in [c["interaction"] for c in report["closest"]]


def test_an_unsupported_version_in_metadata_is_refused(kit_server) -> None:
    request = send_request("Which languages do you review?", tenant="code-reviewer")
    with stub(kit_server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
        a2a.SendMessage(request, metadata=(("a2a-version", "2.0"),))

    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(status_of(caught.value)).reason == "VERSION_NOT_SUPPORTED"


def test_a_folders_agents_are_tenants_and_an_unknown_one_is_not_found(kit_server) -> None:
    with stub(kit_server.grpc_target) as a2a:
        answer = a2a.SendMessage(
            send_request("Which languages do you review?", tenant="code-reviewer"),
            metadata=VERSION,
        )
        with pytest.raises(grpc.RpcError) as caught:
            a2a.SendMessage(send_request("Hello?", tenant="nobody"), metadata=VERSION)

    assert "Python" in answer.message.parts[0].text
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert "code-reviewer" in caught.value.details(), "the message lists the tenants"


def test_a_message_stream_ends_after_the_message(kit_server) -> None:
    request = send_request("Which languages do you review?", tenant="code-reviewer")
    with stub(kit_server.grpc_target) as a2a:
        events = list(a2a.SendStreamingMessage(request, metadata=VERSION, timeout=10))

    assert [e.WhichOneof("payload") for e in events] == ["message"]


RUN = "Run the tests at 9f3c2e1"


def _fresh_kit_agent():
    return serve_in_thread(KIT / "test-runner.yaml", grpc_port=0, pace=Pace.parse("instant"))


def test_grpc_gives_the_same_task_ids_and_timestamps_as_json_rpc() -> None:
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": RUN}]}
    with _fresh_kit_agent() as server:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        answer = httpx.post(server.agent_url(), json=body, headers={"A2A-Version": "1.0"})
        over_json = answer.json()["result"]
    with _fresh_kit_agent() as server, stub(server.grpc_target) as a2a:
        over_grpc = a2a.SendMessage(send_request(RUN, "m-1"), metadata=VERSION)
        journal = server.journal()

    task = json_format.MessageToDict(over_grpc)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task == over_json["task"], "same ids, timestamps, history and artifacts"
    assert [(e.operation, e.interaction, e.binding) for e in journal] == [
        ("SendMessage", "run-9f3c2e1", "GRPC")
    ]


def test_replays_send_the_same_bytes_run_to_run() -> None:
    runs = []
    for _ in range(2):
        with _fresh_kit_agent() as server:
            target = server.grpc_target
            sent = raw_answer(target, "SendMessage", send_request(RUN, "m-1"))
            task_id = a2a_pb2.SendMessageResponse.FromString(sent).task.id
            got = raw_answer(target, "GetTask", a2a_pb2.GetTaskRequest(id=task_id))
            runs.append((sent, got))

    assert runs[0] == runs[1]
    assert b"summary" in runs[0][0], "the answer has the artifacts (Struct data included)"


def test_a_long_error_message_is_cut_to_fit_the_clients_trailer_limit(tmp_path) -> None:
    # grpcio clients refuse trailers over 8 KiB: a 20 kB message would reach the client as
    # RESOURCE_EXHAUSTED, not as the scripted error.
    (tmp_path / "agent.yaml").write_text(
        "version: 1\n"
        "agent: {name: a, description: d, skills: [{id: s, name: S, description: S.}]}\n"
        "interactions:\n"
        "  - name: big\n"
        "    match: {text: big}\n"
        f"    reply: {{error: {{name: TaskNotFound, message: '{'gone ' * 4000}'}}}}\n"
    )
    with serve_in_thread(tmp_path / "agent.yaml", grpc_port=0) as server:
        with stub(server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
            a2a.SendMessage(send_request("big"), metadata=VERSION)

    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert caught.value.details().startswith("gone gone")
    assert caught.value.details().endswith("(cut short; the journal has the whole report)")
    assert error_info(status_of(caught.value)).reason == "TASK_NOT_FOUND"


def test_an_answer_protobuf_cannot_hold_is_an_invalid_agent_response(tmp_path, monkeypatch) -> None:
    # The loader refuses a raw part that is no base64; let it through, as a loader check
    # missed, to see the gRPC answer say what protobuf could not hold.
    monkeypatch.setattr(content, "_part", lambda part, loc: [])
    (tmp_path / "agent.yaml").write_text(
        "version: 1\n"
        "agent: {name: a, description: d, skills: [{id: s, name: S, description: S.}]}\n"
        "interactions:\n"
        "  - name: bad\n"
        "    match: {text: bad}\n"
        "    reply: {message: {parts: [{raw: '@@@ not base64 @@@'}]}}\n"
    )
    with serve_in_thread(tmp_path / "agent.yaml", grpc_port=0) as server:
        with stub(server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
            a2a.SendMessage(send_request("bad"), metadata=VERSION)

    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert "cannot be sent over gRPC as SendMessageResponse" in caught.value.details()
    assert error_info(status_of(caught.value)).reason == "INVALID_AGENT_RESPONSE"


def test_a_bug_of_ours_is_internal_in_protocol_terms(monkeypatch, caplog) -> None:
    def broken(*args, **kwargs):
        raise ValueError("a bug")

    with _fresh_kit_agent() as server:
        monkeypatch.setattr(A2AService, "call", broken)
        with stub(server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
            a2a.SendMessage(send_request(RUN), metadata=VERSION)

    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert caught.value.details() == "mockagent failed: ValueError"
    assert error_info(status_of(caught.value)).reason == "INTERNAL_ERROR"
    assert "mockagent failed on gRPC SendMessage" in caplog.text
