"""SSE framing and stream semantics of SendStreamingMessage and SubscribeToTask (reference §4)."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from tests.helpers.streams import V1, message, rpc_stream, send, stream


def kinds(payloads: list[Any]) -> list[str]:
    out = []
    for payload in payloads:
        result = payload.get("result", payload)
        kind = next(iter(result))
        state = result[kind].get("status", {}).get("state", "") if kind != "artifactUpdate" else ""
        out.append(f"{kind} {state}".strip())
    return out


def test_rest_stream_replays_the_script_one_event_per_step(server):
    sse = stream(server, "/message:stream", {"message": message("work")})
    assert sse.status == 200 and sse.content_type.startswith("text/event-stream")
    assert all(
        name == "message" and len(lines) == 1 for name, lines in sse.events
    )  # one data: line each
    assert kinds(sse.payloads) == [
        "task TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    first_chunk, second_chunk = sse.payloads[2]["artifactUpdate"], sse.payloads[3]["artifactUpdate"]
    assert (
        "append" not in first_chunk
        and second_chunk["append"] is True
        and second_chunk["lastChunk"] is True
    )
    task_id = sse.payloads[0]["task"]["id"]
    assert {p[next(iter(p))].get("taskId", task_id) for p in sse.payloads} == {task_id}


def test_jsonrpc_events_are_whole_responses_with_the_request_id(server):
    sse = rpc_stream(
        server, "SendStreamingMessage", {"message": message("work")}, request_id="req-9"
    )
    assert [(p["jsonrpc"], p["id"]) for p in sse.payloads] == [("2.0", "req-9")] * 5
    assert kinds(sse.payloads)[-1] == "statusUpdate TASK_STATE_COMPLETED"


def test_a_direct_message_is_one_event_then_close(server):
    sse = rpc_stream(server, "SendStreamingMessage", {"message": message("Anyone?")})
    assert [list(p["result"]) for p in sse.payloads] == [["message"]]


def test_errors_before_the_first_event_are_plain_protocol_errors(server):
    jsonrpc = rpc_stream(server, "SendStreamingMessage", {"message": message("nothing matches")})
    assert "application/json" in jsonrpc.content_type and jsonrpc.status == 200
    assert json.loads(jsonrpc.body)["error"]["code"] == -32004
    rest = stream(server, "/tasks/unknown:subscribe", method="GET")
    assert (
        rest.status == 404
        and json.loads(rest.body)["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
    )


def test_stream_closes_at_input_required_and_a_streamed_follow_up_goes_on(server):
    first = stream(server, "/message:stream", {"message": message("wait")})
    assert kinds(first.payloads) == [
        "task TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_INPUT_REQUIRED",
    ]
    task = first.payloads[0]["task"]
    follow = stream(server, "/message:stream", {"message": message("main", taskId=task["id"])})
    assert kinds(follow.payloads) == [
        "task TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    assert follow.payloads[0]["task"]["id"] == task["id"]


def test_subscribe_to_terminal_or_unknown_tasks(server):
    done = send(server, "work")["task"]
    for method in ("GET", "POST"):
        terminal = stream(server, f"/tasks/{done['id']}:subscribe", method=method)
        assert terminal.status == 400
        assert json.loads(terminal.body)["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"
    error = rpc_stream(server, "SubscribeToTask", {"id": "nope"})
    assert json.loads(error.body)["error"]["code"] == -32001


def subscribe_in_thread(
    server: Any, task_id: str, out: list[Any], ready: threading.Event
) -> threading.Thread:
    def run() -> None:
        with httpx.stream(
            "POST", f"{server.url}/tasks/{task_id}:subscribe", headers=V1, timeout=10
        ) as response:
            data: list[str] = []
            for line in response.iter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].strip())
                elif line == "" and data:
                    out.append(json.loads(data[0]))
                    data = []
                    ready.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_subscriptions_stay_open_across_input_required_and_agree(server):
    task = send(server, "wait")["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    outs: list[list[Any]] = [[], []]
    readies = [threading.Event(), threading.Event()]
    threads = [subscribe_in_thread(server, task["id"], outs[i], readies[i]) for i in range(2)]
    assert all(ready.wait(5) for ready in readies)  # both have the snapshot: they are subscribed
    follow = httpx.post(
        server.url + "/message:send",
        headers=V1,
        json={"message": message("main", taskId=task["id"])},
    ).json()
    assert follow["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive(), "a subscription closes at the terminal state"
    assert kinds(outs[0]) == [
        "task TASK_STATE_INPUT_REQUIRED",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    assert outs[0] == outs[1]  # identical events in identical order


def test_a_stream_is_never_buffered(server):
    # The second step is due in ten minutes: the first events must arrive long before that.
    sse = stream(
        server, "/message:stream", {"message": message("forever")}, stop_after=1, timeout=5
    )
    assert kinds(sse.payloads) == ["task TASK_STATE_WORKING"]


def test_keepalive_comments_on_a_quiet_stream(server):
    task = send(server, "forever", returnImmediately=True)["task"]
    with httpx.stream(
        "GET", f"{server.url}/tasks/{task['id']}:subscribe", headers=V1, timeout=5
    ) as response:
        lines = []
        for line in response.iter_lines():
            lines.append(line)
            if line.startswith(":"):
                break
    assert lines[0].startswith("data: ") and lines[-1] == ": keepalive"


def test_fault_drop_after_n_events(server):
    with pytest.raises(httpx.RemoteProtocolError):
        stream(server, "/message:stream", {"message": message("drop")})
    journal = [e for e in server.journal() if e.interaction == "drop"]
    assert journal and journal[-1].matched


def test_fault_error_event_mid_stream(server):
    sse = rpc_stream(server, "SendStreamingMessage", {"message": message("error")}, request_id=3)
    assert [name for name, _ in sse.events] == ["message", "error"]
    error = sse.payloads[1]
    assert (
        error["id"] == 3
        and error["error"]["code"] == -32006
        and error["error"]["message"] == "the agent broke"
    )
    rest = stream(server, "/message:stream", {"message": message("error")})
    assert rest.payloads[1]["error"]["details"][0]["reason"] == "INVALID_AGENT_RESPONSE"


def test_fault_http_status_and_delay(server):
    unavailable = httpx.post(
        server.url + "/message:send", json={"message": message("unavailable")}, headers=V1
    )
    assert unavailable.status_code == 503 and unavailable.json()["error"]["code"] == 503
    slow = httpx.post(server.url + "/message:send", json={"message": message("slow")}, headers=V1)
    assert slow.elapsed.total_seconds() >= 0.15  # the scripted delay, a lower bound only
    assert slow.json()["message"]["parts"] == [{"text": "Finally."}]
