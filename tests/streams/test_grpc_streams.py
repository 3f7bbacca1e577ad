"""Streams over gRPC play the same Stream objects as SSE: the same events, the same recorded
gaps, and the same faults (a drop ends the call UNAVAILABLE, a scripted error with its status)."""

from __future__ import annotations

import time

import grpc
import pytest

from tests.helpers.grpc_calls import VERSION, error_info, send_request, status_of, stub


def payloads(events) -> list[str]:
    return [e.WhichOneof("payload") for e in events]


def test_a_script_streams_one_message_per_step(grpc_server) -> None:
    with stub(grpc_server.grpc_target) as a2a:
        events = list(a2a.SendStreamingMessage(send_request("work"), metadata=VERSION, timeout=10))

    assert payloads(events) == ["task"] + ["status_update"] + ["artifact_update"] * 2 + [
        "status_update"
    ]
    first, second = events[2].artifact_update, events[3].artifact_update
    assert not first.append and second.append and second.last_chunk
    assert {e.status_update.task_id for e in events[1:2]} == {events[0].task.id}


def test_drop_after_ends_the_call_unavailable(grpc_server) -> None:
    received = []
    with stub(grpc_server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
        for event in a2a.SendStreamingMessage(send_request("drop"), metadata=VERSION, timeout=10):
            received.append(event)

    assert len(received) == 2, "dropAfter: 2 events, then the connection goes"
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


def test_error_after_ends_the_call_with_the_errors_status(grpc_server) -> None:
    received = []
    with stub(grpc_server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
        for event in a2a.SendStreamingMessage(send_request("error"), metadata=VERSION, timeout=10):
            received.append(event)

    assert len(received) == 1
    assert caught.value.code() == grpc.StatusCode.INTERNAL  # InvalidAgentResponse
    assert caught.value.details() == "the agent broke"
    assert error_info(status_of(caught.value)).reason == "INVALID_AGENT_RESPONSE"


def test_a_scripted_http_status_is_its_grpc_code(grpc_server) -> None:
    with stub(grpc_server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as caught:
        a2a.SendMessage(send_request("unavailable"), metadata=VERSION, timeout=10)

    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


def test_events_keep_the_recorded_gaps(grpc_server) -> None:
    with stub(grpc_server.grpc_target) as a2a:
        call = a2a.SendStreamingMessage(send_request("paced"), metadata=VERSION, timeout=10)
        first = next(call)
        opened = time.monotonic()
        artifact = next(call)
        gap = time.monotonic() - opened
        call.cancel()  # COMPLETED is due in ten minutes

    assert first.task.status.state == 2  # TASK_STATE_WORKING
    assert artifact.WhichOneof("payload") == "artifact_update"
    assert gap >= 0.28, f"the artifact is due 300 ms after WORKING, came after {gap:.3f} s"


def test_a_waiting_stream_holds_up_no_other_call(grpc_server) -> None:
    # the server answers on one event loop: a stream waiting for its next event must wait
    # beside it, not on it
    with stub(grpc_server.grpc_target) as a2a:
        streams = [
            a2a.SendStreamingMessage(send_request("forever"), metadata=VERSION, timeout=10)
            for _ in range(3)
        ]
        assert [next(s).WhichOneof("payload") for s in streams] == ["task"] * 3
        started = time.monotonic()
        replies = [
            a2a.SendMessage(send_request("hi?"), metadata=VERSION, timeout=5) for _ in range(5)
        ]
        took = time.monotonic() - started
        for stream in streams:
            stream.cancel()  # COMPLETED is due in ten minutes

    assert [r.message.parts[0].text for r in replies] == ["Hi."] * 5
    assert took < 2, f"5 calls beside 3 waiting streams took {took:.2f} s"


def test_scripted_delays_run_side_by_side(grpc_server) -> None:
    with stub(grpc_server.grpc_target) as a2a:
        started = time.monotonic()
        calls = [
            a2a.SendMessage.future(send_request("slow"), metadata=VERSION, timeout=10)
            for _ in range(8)
        ]
        texts = [c.result().message.parts[0].text for c in calls]
        took = time.monotonic() - started

    assert texts == ["Finally."] * 8
    assert took < 0.8, f"8 calls delayed 150 ms each took {took:.2f} s: one after another?"
