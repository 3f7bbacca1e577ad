"""`compare.differences`: ids renamed consistently, timestamps ignored, everything else reported."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from mockagent.verify.compare import Event, Exchange, differences, event_kind
from mockagent.verify.observe import exchange_from_http, operation_of, parse_sse

T1, T2 = "3f2b8c1e-0000-4000-8000-000000000001", "3f2b8c1e-0000-4000-8000-000000000002"
C1 = "9a9a9a9a-0000-4000-8000-0000000000c1"
R1, R2 = "aaaaaaaa-1111-4111-8111-000000000001", "aaaaaaaa-1111-4111-8111-000000000002"


def task(task_id: str, context_id: str, state: str, when: str, *history: str) -> dict[str, Any]:
    return {
        "id": task_id,
        "contextId": context_id,
        "status": {"state": state, "timestamp": when},
        "history": [
            {"messageId": f"{task_id}-m{i}", "role": "ROLE_AGENT", "parts": [{"text": text}]}
            for i, text in enumerate(history)
        ],
        "artifacts": [{"artifactId": f"{task_id[:8]}-ffff-4fff", "parts": [{"text": "log"}]}],
    }


def conversation(ids: tuple[str, str, str], when: str) -> list[Exchange]:
    """Ask, then a follow-up streamed on the same task, then GetTask of it (JSON-RPC)."""
    first, context, other = ids
    return [
        Exchange(
            "SendMessage",
            "JSONRPC",
            200,
            body={"jsonrpc": "2.0", "id": 1, "result": {"task": task(first, context, "W", when)}},
        ),
        Exchange(
            "SendStreamingMessage",
            "JSONRPC",
            200,
            events=(
                Event("message", {"result": {"task": task(first, context, "I", when, "x")}}),
                Event("message", {"result": {"statusUpdate": {"taskId": first, "status": {}}}}),
            ),
        ),
        Exchange("GetTask", "JSONRPC", 200, body={"result": task(other, context, "C", when)}),
    ]


def test_the_same_conversation_with_other_ids_and_times_has_no_difference():
    live = conversation((T1, C1, T2), "2025-01-01T10:00:00Z")
    replay = conversation((R1, "ctx-replayed", R2), "2026-12-01T15:57:55.123+00:00")
    assert differences(live, replay) == []


def test_ids_must_be_renamed_consistently_a_follow_up_on_another_task_is_a_difference():
    live = conversation((T1, C1, T2), "2025-01-01T10:00:00Z")
    # On replay the GetTask answers with the first task's id where live showed a second task.
    replay = conversation((R1, C1, R1), "2025-01-01T10:00:00Z")
    found = differences(live, replay)
    assert 'call 3 (GetTask) body.result.id: "<task-2>" ≠ "<task-1>"' in found
    assert all(d.startswith("call 3 (GetTask)") for d in found), found


def test_an_id_named_inside_a_text_is_renamed_with_it():
    def answer(task_id: str) -> list[Exchange]:
        return [
            Exchange("SendMessage", "HTTP+JSON", 200, body={"task": task(task_id, C1, "W", "")}),
            Exchange(
                "GetTask",
                "HTTP+JSON",
                404,
                body={"error": {"code": 404, "message": f"Task {task_id} not found"}},
            ),
        ]

    assert differences(answer(T1), answer(R1)) == []


def test_an_artifact_id_that_is_a_name_is_content():
    live = [Exchange("GetTask", "HTTP+JSON", 200, body={"artifacts": [{"artifactId": "log"}]})]
    replay = [Exchange("GetTask", "HTTP+JSON", 200, body={"artifacts": [{"artifactId": "out"}]})]
    assert differences(live, replay) == [
        'call 1 (GetTask) body.artifacts[0].artifactId: "log" ≠ "out"'
    ]


def path_edits() -> list[tuple[str, Any, str]]:
    return [
        ("status", None, "call 1 (SendMessage) status: 200 ≠ 500"),
        (
            "result.task.status.state",
            "COMPLETED",
            'call 1 (SendMessage) body.result.task.status.state: "W" ≠ "COMPLETED"',
        ),
        (
            "result.task.history[0].parts[0].text",
            "Which?",
            'call 1 (SendMessage) body.result.task.history[0].parts[0].text: "Working" ≠ "Which?"',
        ),
        (
            "result.task.metadata",
            {"k": 1},
            'call 1 (SendMessage) body.result.task.metadata: missing live, {"k": 1} on replay',
        ),
        (
            "result.task.history",
            [],
            "call 1 (SendMessage) body.result.task.history: 1 items live, 0 on replay",
        ),
    ]


@pytest.mark.parametrize("path,value,expected", path_edits())
def test_any_other_field_difference_is_reported_with_its_path(path, value, expected):
    body = {"jsonrpc": "2.0", "id": 1, "result": {"task": task(T1, C1, "W", "", "Working")}}
    live = [Exchange("SendMessage", "JSONRPC", 200, body=body)]
    edited = copy.deepcopy(body)
    if path == "status":
        replay = [Exchange("SendMessage", "JSONRPC", 500, body=body)]
    else:
        *parents, last = path.replace("[", ".").replace("]", "").split(".")
        node: Any = edited
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        node[last] = value
        replay = [Exchange("SendMessage", "JSONRPC", 200, body=edited)]
    assert differences(live, replay) == [expected]


def stream(*events: dict[str, Any], dropped: bool = False) -> list[Exchange]:
    return [
        Exchange(
            "SendStreamingMessage",
            "HTTP+JSON",
            200,
            events=tuple(Event("message", e) for e in events),
            dropped=dropped,
        )
    ]


WORKING = {"statusUpdate": {"taskId": T1, "status": {"state": "WORKING"}}}
SNAPSHOT = {"task": task(T1, C1, "INPUT_REQUIRED", "")}
CHUNK = {"artifactUpdate": {"taskId": T1, "artifact": {"artifactId": "a"}, "append": True}}


def test_event_kinds_order_and_count_are_compared():
    found = differences(stream(SNAPSHOT, WORKING, CHUNK), stream(WORKING, CHUNK))
    assert found == [
        "call 1 (SendStreamingMessage): 3 events live (task, statusUpdate, artifactUpdate), "
        "2 on replay (statusUpdate, artifactUpdate)",
        "call 1 (SendStreamingMessage) event 0: kind task ≠ statusUpdate",
        "call 1 (SendStreamingMessage) event 1: kind statusUpdate ≠ artifactUpdate",
    ]


def test_chunk_flags_event_names_and_a_cut_off_stream_are_differences():
    unflagged = {"artifactUpdate": {"taskId": T1, "artifact": {"artifactId": "a"}}}
    assert differences(stream(CHUNK), stream(unflagged)) == [
        "call 1 (SendStreamingMessage) event 0 artifactUpdate.append: true live, missing on replay"
    ]
    assert differences(stream(WORKING), stream(WORKING, dropped=True)) == [
        "call 1 (SendStreamingMessage): complete live, cut off on replay"
    ]
    named = [Exchange("SubscribeToTask", "HTTP+JSON", 200, events=(Event("error", {"e": 1}),))]
    plain = [Exchange("SubscribeToTask", "HTTP+JSON", 200, events=(Event("message", {"e": 1}),))]
    assert differences(named, plain) == ["call 1 (SubscribeToTask) event 0: kind error ≠ e"]


def test_missing_calls_and_other_operations_are_reported():
    one = stream(WORKING)
    get = [Exchange("GetTask", "HTTP+JSON", 200, body={})]
    assert differences(one + get, one) == ["2 calls live, 1 on replay"]
    assert differences(get, one) == [
        "call 1: GetTask over HTTP+JSON live, SendStreamingMessage over HTTP+JSON on replay"
    ]
    assert differences(one, [Exchange("SendStreamingMessage", "HTTP+JSON", 200, body={})]) == [
        "call 1 (SendStreamingMessage): a stream live, a body on replay"
    ]


def test_exchanges_from_the_wire():
    sse = b'event: error\ndata: {"a":\ndata: 1}\n\n: ping\n\ndata: {"task": {}}\n\n'
    assert parse_sse(sse) == (Event("error", {"a": 1}), Event("message", {"task": {}}))
    rpc = b'{"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {}}'
    made = exchange_from_http("POST", "/", rpc, 200, "text/event-stream", sse)
    assert (made.operation, made.binding, len(made.events or ())) == (
        "SubscribeToTask",
        "JSONRPC",
        2,
    )
    assert operation_of("GET", "/t/x/tasks/abc?historyLength=1", None) == "GetTask"
    assert operation_of("POST", "/tasks/abc:cancel", b"") == "CancelTask"
    assert operation_of("GET", "/tasks/abc:subscribe", None) == "SubscribeToTask"
    made = exchange_from_http("GET", "/tasks/x", b"", 404, "application/json", b"not json")
    assert (made.binding, made.status, made.body) == ("HTTP+JSON", 404, "not json")


def test_a_timestamp_one_side_leaves_out_is_no_difference():
    stamped = {"status": {"state": "W", "timestamp": "2025-01-01T10:00:00Z"}, "updatedAt": 1}
    bare: dict[str, Any] = {"status": {"state": "W"}}
    assert (
        differences(
            [Exchange("GetTask", "HTTP+JSON", 200, body=stamped)],
            [Exchange("GetTask", "HTTP+JSON", 200, body=bare)],
        )
        == []
    )
    said = {"text": "Built at 2025-01-01T10:00:00.123Z on main"}
    again = {"text": "Built at 2026-12-01 15:57:55+00:00 on main"}
    assert (
        differences(
            [Exchange("GetTask", "HTTP+JSON", 200, body=said)],
            [Exchange("GetTask", "HTTP+JSON", 200, body=again)],
        )
        == []
    )


def test_a_recorded_artifact_n_stands_for_a_minted_artifact_id():
    def chunks(first: str, second: str) -> list[Exchange]:
        return stream(
            *(
                {"artifactUpdate": {"taskId": T1, "artifact": {"artifactId": artifact_id}}}
                for artifact_id in (first, second)
            )
        )

    assert differences(chunks(R1, R1), chunks("artifact-3", "artifact-3")) == []
    # …consistently: one artifact live must stay one artifact on replay
    assert differences(chunks(R1, R1), chunks("artifact-3", "artifact-4")) == [
        "call 1 (SendStreamingMessage) event 1 artifactUpdate.artifact.artifactId: "
        '"<artifact-1>" ≠ "<artifact-2>"'
    ]


def agentex_line(update: dict[str, Any], task_id: str, when: str) -> bytes:
    parent = {"id": f"{task_id[:8]}-m", "task_id": task_id, "created_at": when}
    result = {**update, "index": 0, "parent_task_message": parent}
    return json.dumps({"jsonrpc": "2.0", "id": None, "result": result, "error": None}).encode()


def agentex_stream(task_id: str, when: str, *kinds: str) -> Exchange:
    body = b"\n".join(agentex_line({"type": k}, task_id, when) for k in kinds) + b"\n"
    request = json.dumps({"method": "message/send", "params": {"stream": True}}).encode()
    path = "/agents/name/echo-bot/rpc"
    return exchange_from_http("POST", path, request, 200, "application/x-ndjson", body)


def test_an_agentex_ndjson_stream_is_compared_line_by_line():
    live = agentex_stream(T1, "2026-10-06T09:00:00Z", "start", "delta", "done")
    assert (live.operation, live.binding) == ("message/send", "Agentex")
    assert [event_kind(e) for e in live.events or ()] == ["start", "delta", "done"]
    same = agentex_stream(T2, "2026-12-01T10:00:00.123456+00:00", "start", "delta", "done")
    assert differences([live], [same]) == []
    other = agentex_stream(T2, "2026-10-06T09:00:00Z", "start", "full", "done")
    assert differences([live], [other]) == ["call 1 (message/send) event 1: kind delta ≠ full"]


def test_an_agentex_error_envelope_is_an_error_and_a_null_error_is_not():
    failed = {"jsonrpc": "2.0", "id": None, "result": None, "error": {"code": -32603}}
    assert event_kind(Event("message", failed)) == "error"
    assert event_kind(Event("message", {**failed, "error": None, "result": {"type": "done"}})) == (
        "done"
    )


def test_the_order_of_an_objects_keys_is_no_difference():
    def answer(task_id: str, user: str, agent: str, status_first: bool) -> Exchange:
        history = [{"messageId": user, "parts": [{"text": "hi"}]}]
        status = {"state": "input-required", "message": {"messageId": agent, "parts": []}}
        pairs = [("history", history), ("status", status)]
        body = {"id": task_id, **dict(pairs[::-1] if status_first else pairs)}
        return Exchange("message/send", "JSONRPC", 200, body={"jsonrpc": "2.0", "result": body})

    live = answer(T1, R1, R2, status_first=False)
    replay = answer(T2, "user-turn-0000000000000001", "agent-turn-00000000000000002", True)
    assert differences([live], [replay]) == []
