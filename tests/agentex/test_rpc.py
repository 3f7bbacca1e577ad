"""The Agentex dialect over HTTP: the RPC envelope, each method, NDJSON streams, REST, errors.

Driven in process with Flask's test client (raw HTTP where a real socket matters), against the
cassette in tests/helpers/agentex.py that serves a sync, an async and an agentic agent.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from mockagent.server.app import create_app
from mockagent.server.thread import serve_in_thread
from tests.helpers.agentex import PLATFORM, error, post, result, rpc, stream, text

METHODS = ["task/create", "message/send", "event/send", "task/cancel", "task/interrupt"]
ALLOWED = {
    "sync": {"message/send", "task/create", "task/interrupt"},
    "async": {"task/create", "task/cancel", "task/interrupt", "event/send"},
    "agentic": {"task/create", "task/cancel", "task/interrupt", "event/send"},
}
AGENT_OF_TYPE = {"sync": "agent-sync", "async": "agent-async", "agentic": "agent-legacy"}


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    return path


@pytest.fixture
def client(cassette: Path):
    return create_app(cassette).test_client()


# -- the envelope -------------------------------------------------------------------------------


def test_envelope_without_jsonrpc_and_id_echoes_null(client):
    answer = rpc(client, "agent-sync", "message/send", {"content": text("Hi?")})
    assert answer["id"] is None
    assert answer["error"] is None


@pytest.mark.parametrize("request_id", ["req-7", 7, 0])
def test_envelope_echoes_the_id(client, request_id):
    answer = rpc(client, "agent-sync", "task/create", {}, jsonrpc="2.0", id=request_id)
    assert answer["id"] == request_id
    assert answer["result"]["status"] == "RUNNING"


def test_agent_by_id_and_by_name_are_the_same_agent(client):
    by_id = post(
        client, "agent-sync", {"method": "message/send", "params": {"content": text("Hi?")}}
    )
    by_name = post(
        client,
        "echo-bot",
        {"method": "message/send", "params": {"content": text("Hi?")}},
        by_name=True,
    )
    assert by_id.get_json()["result"][0]["content"]["content"] == "Hello!"
    assert [m["content"] for m in by_name.get_json()["result"]] == [
        m["content"] for m in by_id.get_json()["result"]
    ]


@pytest.mark.parametrize("by_name", [False, True])
def test_unknown_agent_is_a_platform_404(client, by_name):
    response = post(client, "nobody", {"method": "task/create", "params": {}}, by_name=by_name)
    assert response.status_code == 404
    assert response.get_json() == {
        "message": response.get_json()["message"],
        "code": 404,
        "data": None,
    }
    assert "nobody" in response.get_json()["message"]


# -- methods -----------------------------------------------------------------------------------


def test_task_create_and_get_or_create_by_name(client):
    task = result(
        client,
        "agent-async",
        "task/create",
        {"name": "nightly", "params": {"v": 1}, "task_metadata": {"owner": "ci"}},
    )
    assert list(task) == [
        "id",
        "name",
        "params",
        "status",
        "status_reason",
        "task_metadata",
        "created_at",
        "updated_at",
    ]
    assert (task["name"], task["params"], task["status"], task["task_metadata"]) == (
        "nightly",
        {"v": 1},
        "RUNNING",
        {"owner": "ci"},
    )
    assert task["created_at"] == "2026-10-06T09:00:00.000Z"
    again = result(
        client,
        "agent-async",
        "task/create",
        {"name": "nightly", "params": {"v": 2}, "task_metadata": {"owner": "other"}},
    )
    assert again["id"] == task["id"]
    assert again["params"] == {"v": 2}  # new params overwrite the old ones
    assert again["task_metadata"] == {"owner": "ci"}  # metadata is applied only at creation
    other = result(client, "agent-async", "task/create", {})
    assert other["id"] != task["id"] and other["name"] is None


def test_message_send_answers_the_agents_messages_only(client):
    messages = result(client, "agent-sync", "message/send", {"content": text("What is new?")})
    assert [m["content"] for m in messages] == [
        {"type": "text", "author": "agent", "content": "Hello!", "format": "plain"},
        {"type": "data", "author": "agent", "data": {"n": 1}},
    ]
    assert {m["streaming_status"] for m in messages} == {"DONE"}
    assert len({m["task_id"] for m in messages}) == 1 and len({m["id"] for m in messages}) == 2
    assert all(m["created_at"].startswith("2026-10-06T09:00:") for m in messages)


def test_a_conversation_continues_on_its_task_and_history_keeps_both_sides(client):
    task = result(client, "agent-sync", "task/create", {})
    first = result(
        client, "agent-sync", "message/send", {"content": text("One?"), "task_id": task["id"]}
    )
    second = result(
        client, "agent-sync", "message/send", {"content": text("finish now"), "task_id": task["id"]}
    )
    assert {m["task_id"] for m in first + second} == {task["id"]}
    history = client.get(f"/messages?task_id={task['id']}").get_json()
    assert [(m["content"]["author"], m["content"].get("content")) for m in history] == [
        ("user", "One?"),
        ("agent", "Hello!"),
        ("agent", None),
        ("user", "finish now"),
        ("agent", "Done."),
    ]
    assert [m["id"] for m in history if m["content"]["author"] == "agent"] == [
        m["id"] for m in first + second
    ]
    assert client.get(f"/tasks/{task['id']}").get_json()["status"] == "COMPLETED"
    refused = error(
        client, "agent-sync", "message/send", {"content": text("More?"), "task_id": task["id"]}
    )
    assert refused["code"] == -32603 and "terminal" in refused["message"]


def test_task_name_creates_the_task_once(client):
    first = result(
        client,
        "agent-sync",
        "message/send",
        {"content": text("A?"), "task_name": "chat-1", "task_params": {"lang": "en"}},
    )
    second = result(
        client, "agent-sync", "message/send", {"content": text("B?"), "task_name": "chat-1"}
    )
    assert first[0]["task_id"] == second[0]["task_id"]
    task = client.get("/tasks/name/chat-1").get_json()
    assert (task["id"], task["name"], task["params"]) == (
        first[0]["task_id"],
        "chat-1",
        {"lang": "en"},
    )


def test_task_id_and_task_name_together_are_invalid_params(client):
    task = result(client, "agent-sync", "task/create", {"name": "both"})
    failure = error(
        client,
        "agent-sync",
        "message/send",
        {"content": text("Hi?"), "task_id": task["id"], "task_name": "both"},
    )
    assert failure["code"] == -32602


def test_a_failing_turn_is_an_internal_error(client):
    failure = error(client, "agent-sync", "message/send", {"content": text("fail please")})
    assert failure == {"code": -32603, "message": "Tool crashed.", "data": None}


def test_an_unmatched_turn_is_an_internal_error_with_the_near_miss_report(client):
    failure = error(client, "agent-other", "message/send", {"content": text("Anyone?")})
    assert failure["code"] == -32603
    assert "No interaction" in failure["message"] and "agent" in failure["message"]


def test_scripted_error_reply_for_task_create(client):
    assert error(client, "agent-sync", "task/create", {"name": "forbidden"}) == {
        "code": -32602,
        "message": "that name is reserved",
        "data": None,
    }


@pytest.mark.parametrize("acp_type", sorted(ALLOWED))
@pytest.mark.parametrize("method", METHODS)
def test_methods_allowed_per_acp_type(client, acp_type, method):
    answer = rpc(client, AGENT_OF_TYPE[acp_type], method, {})
    refused = answer["error"] is not None and "for ACP type" in answer["error"]["message"]
    assert refused == (method not in ALLOWED[acp_type])
    if refused:
        assert answer["error"] == {
            "code": -32603,
            "data": None,
            "message": f"Unsupported method: {method} for ACP type: {acp_type}",
        }


@pytest.mark.parametrize(
    ("agent", "method"),
    [
        ("agent-async", "event/send"),
        ("agent-async", "task/cancel"),
        ("agent-sync", "task/interrupt"),
    ],
)
def test_a_task_reference_is_required(client, agent, method):
    assert error(client, agent, method, {"content": text("work")}) == {
        "code": -32603,
        "message": "Either task_id or task_name must be provided",
        "data": None,
    }


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"content": "hi"},
        {"content": {"type": "text", "author": "user"}},
        {"content": {"type": "video", "author": "user"}},
        {"content": {"type": ["text"], "author": "user"}},
        {"content": {"type": "text", "author": "robot", "content": "x"}},
        {"content": {"type": "text", "author": "user", "content": "x"}, "stream": "yes"},
        {"content": {"type": "text", "author": "user", "content": "x"}, "task_params": [1]},
        {"content": {"type": "text", "author": "user", "content": "x"}, "task_id": 5},
    ],
)
def test_bad_message_params_are_invalid_params(client, params):
    assert error(client, "agent-sync", "message/send", params)["code"] == -32602


@pytest.mark.parametrize("params", [{"name": 1}, {"params": "x"}, {"task_metadata": []}])
def test_bad_task_create_params_are_invalid_params(client, params):
    assert error(client, "agent-sync", "task/create", params)["code"] == -32602


@pytest.mark.parametrize(
    ("raw", "content_type"),
    [
        (b"", "application/json"),
        (b"not json", "application/json"),
        (b"\xff\xfe{", "application/json"),
        (b"[]", "application/json"),
        (b'"x"', "application/json"),
        (b"{}", "application/json"),
        (b'{"method": 5, "params": {}}', "application/json"),
        (b'{"method": "nope", "params": {}}', "application/json"),
        (b'{"method": "task/create"}', "application/json"),
        (b'{"method": "task/create", "params": []}', "application/json"),
        (b'{"method": "task/create", "params": {}, "jsonrpc": "1.0"}', "application/json"),
        (b'{"method": "task/create", "params": {}, "id": {"a": 1}}', "application/json"),
        (b'{"method": "task/create", "params": {}}', "application/xml"),
    ],
)
def test_garbage_gets_an_error_envelope_never_a_500(client, raw, content_type):
    response = post(client, "agent-sync", None, raw=raw, content_type=content_type)
    assert response.status_code == 200
    answer = response.get_json()
    assert answer["result"] is None and answer["id"] is None
    assert answer["error"]["code"] in (-32602, -32603) and answer["error"]["data"] is None


def test_event_send_numbers_events_per_task(client):
    task = result(client, "agent-async", "task/create", {"name": "events"})
    first = result(
        client, "agent-async", "event/send", {"task_id": task["id"], "content": text("hello")}
    )
    second = result(
        client,
        "agent-async",
        "event/send",
        {"task_name": "events", "content": {"type": "data", "author": "user", "data": {"k": 1}}},
    )
    assert list(first) == ["id", "agent_id", "task_id", "sequence_id", "content", "created_at"]
    assert [(e["sequence_id"], e["agent_id"], e["task_id"]) for e in (first, second)] == [
        (1, "agent-async", task["id"]),
        (2, "agent-async", task["id"]),
    ]
    assert first["content"] == {"type": "text", "author": "user", "content": "hello"}
    other = result(client, "agent-async", "task/create", {})
    assert result(client, "agent-async", "event/send", {"task_id": other["id"]})["sequence_id"] == 1
    listed = client.get(f"/events?agent_id=agent-async&task_id={task['id']}").get_json()
    assert listed == [first, second]
    after = client.get(
        f"/events?agent_id=agent-async&task_id={task['id']}&last_processed_event_id={first['id']}"
    )
    assert after.get_json() == [second]
    history = client.get(f"/messages?task_id={task['id']}").get_json()
    assert [m["content"].get("content", m["content"].get("data")) for m in history] == [
        "hello",
        "Noted.",
        {"k": 1},
        "Got data.",
    ]  # `where: {content.type: data}` chose the reply


def test_async_script_advances_with_polls(client):
    task = result(client, "agent-async", "task/create", {})
    result(
        client, "agent-async", "event/send", {"task_id": task["id"], "content": text("work on it")}
    )
    said = [
        [m["content"]["content"] for m in client.get(f"/messages?task_id={task['id']}").get_json()]
        for _ in range(2)
    ]
    assert said == [["work on it", "Working.", "Almost."]] * 2
    assert (
        client.get(f"/tasks/{task['id']}").get_json()["status"] == "COMPLETED"
    )  # released by the 2nd poll


def test_cancel_and_interrupt(client):
    task = result(client, "agent-async", "task/create", {})
    paused = result(client, "agent-async", "task/interrupt", {"task_id": task["id"]})
    assert paused["status"] == "INTERRUPTED"
    result(client, "agent-async", "event/send", {"task_id": task["id"], "content": text("resume")})
    assert client.get(f"/tasks/{task['id']}").get_json()["status"] == "RUNNING"
    canceled = result(client, "agent-async", "task/cancel", {"task_id": task["id"]})
    assert (canceled["id"], canceled["status"]) == (task["id"], "CANCELED")
    assert error(client, "agent-async", "task/cancel", {"task_id": task["id"]})["code"] == -32603
    assert error(client, "agent-async", "task/cancel", {"task_id": "missing"})["code"] == -32603


# -- streaming ----------------------------------------------------------------------------------


def test_stream_is_ndjson_start_delta_done_per_message(client):
    envelopes = stream(client, "agent-sync", {"content": text("Hi?")}, id="s-1")
    assert {(e["jsonrpc"], e["id"], e["error"]) for e in envelopes} == {("2.0", "s-1", None)}
    updates = [e["result"] for e in envelopes]
    assert [(u["type"], u["index"]) for u in updates] == [
        ("start", 0),
        ("delta", 0),
        ("delta", 0),
        ("done", 0),
        ("start", 1),
        ("full", 1),
        ("done", 1),
    ]
    assert updates[0]["content"] == {
        "type": "text",
        "author": "agent",
        "content": "",
        "format": "plain",
    }
    assert [u["delta"] for u in updates[1:3]] == [
        {"type": "text", "text_delta": "Hel"},
        {"type": "text", "text_delta": "lo!"},
    ]
    assert updates[5]["content"] == {"type": "data", "author": "agent", "data": {"n": 1}}
    parents = [u["parent_task_message"] for u in updates]
    assert [p["streaming_status"] for p in parents] == ["IN_PROGRESS"] * 3 + ["DONE"] + [
        "IN_PROGRESS"
    ] * 2 + ["DONE"]
    assert len({p["id"] for p in parents[:4]}) == 1 and parents[0]["id"] != parents[4]["id"]
    assert parents[3]["content"]["content"] == "Hello!"
    history = client.get(f"/messages?task_id={parents[0]['task_id']}").get_json()
    assert [m["id"] for m in history[1:]] == [parents[3]["id"], parents[6]["id"]]


def test_stream_failure_is_the_last_line(client):
    envelopes = stream(client, "agent-sync", {"content": text("fail now")})
    assert [e["result"]["type"] for e in envelopes[:-1]] == ["start", "full", "done"]
    assert envelopes[-1] == {
        "jsonrpc": "2.0",
        "id": None,
        "result": None,
        "error": {"code": -32603, "message": "Tool crashed.", "data": None},
    }


def test_stream_scripted_error_after_n_lines(client):
    envelopes = stream(client, "agent-sync", {"content": text("break it")})
    assert len(envelopes) == 5
    assert envelopes[-1]["error"] == {
        "code": -32603,
        "message": "agent pod went away",
        "data": None,
    }


def test_stream_ends_at_a_terminal_state(client):
    envelopes = stream(client, "agent-sync", {"content": text("finish it")})
    assert [e["result"]["type"] for e in envelopes] == ["start", "full", "done"]


def test_stream_ends_when_the_script_runs_out(cassette):
    """A sync agent's turn ends when its script does: the stream closes, no state step needed."""
    with serve_in_thread(cassette) as server:  # a stream left open fails on the read timeout
        body = {"method": "message/send", "params": {"content": text("Hi?"), "stream": True}}
        response = httpx.post(f"{server.url}/agents/agent-sync/rpc", json=body, timeout=5)
    assert [json.loads(line)["result"]["type"] for line in response.text.splitlines()] == [
        "start",
        "delta",
        "delta",
        "done",
        "start",
        "full",
        "done",
    ]


def test_stream_lines_are_sent_as_they_happen(cassette):
    """The second message waits a minute: the first one's lines must arrive without it."""
    with serve_in_thread(cassette) as server:
        body = {"method": "message/send", "params": {"content": text("slow down"), "stream": True}}
        with (
            httpx.Client(timeout=10) as http,
            http.stream("POST", f"{server.url}/agents/agent-sync/rpc", json=body) as response,
        ):
            assert response.headers["content-type"] == "application/x-ndjson"
            received = []
            for line in response.iter_lines():
                received.append(json.loads(line)["result"]["type"])
                if len(received) == 3:
                    break
    assert received == ["start", "full", "done"]


# -- faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "status", "body"),
    [
        (
            "503 please",
            503,
            {"message": "mockagent: scripted fault, HTTP 503", "code": 503, "data": None},
        ),
        ("409 please", 409, {"detail": "busy"}),
    ],
)
@pytest.mark.parametrize("streamed", [False, True])
def test_scripted_http_faults_are_not_retried(client, content, status, body, streamed):
    params = {"content": text(content), **({"stream": True} if streamed else {})}
    response = post(client, "agent-sync", {"method": "message/send", "params": params})
    assert response.status_code == status
    assert response.headers["x-should-retry"] == "false"
    assert response.get_json() == body


# -- REST ---------------------------------------------------------------------------------------


def test_agents(client):
    agents = client.get("/agents").get_json()
    assert [(a["id"], a["name"], a["acp_type"], a["status"]) for a in agents] == [
        ("agent-sync", "echo-bot", "sync", "Ready"),
        ("agent-other", "other-bot", "sync", "Ready"),
        ("agent-async", "worker", "async", "Ready"),
        ("agent-legacy", "legacy", "agentic", "Ready"),
    ]
    assert agents[0] == {
        "id": "agent-sync",
        "name": "echo-bot",
        "description": "Answers.",
        "acp_type": "sync",
        "status": "Ready",
        "created_at": "2026-10-06T09:00:00.000Z",
        "updated_at": "2026-10-06T09:00:00.000Z",
    }
    assert client.get("/agents/agent-async").get_json() == agents[2]
    assert client.get("/agents/name/worker").get_json() == agents[2]
    assert client.get("/agents?limit=1&page_number=2").get_json() == [agents[1]]
    missing = client.get("/agents/name/nobody")
    assert (missing.status_code, missing.get_json()["code"], missing.get_json()["data"]) == (
        404,
        404,
        None,
    )


def test_tasks(client):
    first = result(client, "agent-async", "task/create", {"name": "a", "params": {"p": 1}})
    second = result(client, "agent-async", "task/create", {"name": "b"})
    result(client, "agent-async", "task/cancel", {"task_name": "b"})
    listed = client.get("/tasks").get_json()
    assert [t["id"] for t in listed] == [first["id"], second["id"]]
    assert all("params" not in t for t in listed)  # the list is lean, as the platform's
    assert [t["id"] for t in client.get("/tasks?status=CANCELED").get_json()] == [second["id"]]
    chat = result(client, "agent-sync", "message/send", {"content": text("Hi?")})[0][
        "task_id"
    ]  # made by a turn
    assert [t["id"] for t in client.get("/tasks?status=RUNNING").get_json()] == [first["id"], chat]
    assert [t["id"] for t in client.get("/tasks?order_direction=desc&limit=1").get_json()] == [chat]
    assert client.get(f"/tasks/{first['id']}").get_json() == first
    assert client.get("/tasks/name/b").get_json()["status"] == "CANCELED"
    assert client.post(f"/tasks/{first['id']}/cancel").get_json()["status"] == "CANCELED"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/tasks/missing", 404),
        ("GET", "/tasks/name/missing", 404),
        ("GET", "/messages?task_id=missing", 404),
        ("GET", "/messages", 422),
        ("GET", "/events?task_id=x", 422),
        ("GET", "/tasks?limit=many", 422),
        ("GET", "/tasks?status=DONE", 422),
        ("GET", "/nowhere", 404),
        ("DELETE", "/agents", 405),
        ("GET", "/agents/agent-sync/rpc", 404),
    ],
)
def test_rest_errors_are_platform_errors(client, method, path, status):
    response = client.open(path, method=method)
    assert response.status_code == status
    body = response.get_json()
    assert body["data"] is None and body["message"]
    assert body.get("code", body.get("status_code")) == (10422 if status == 422 else status)


# -- the engine sees Agentex calls ------------------------------------------------------------


def test_journal_records_agentex_calls(cassette):
    app = create_app(cassette)
    client = app.test_client()
    task = result(client, "agent-async", "task/create", {"name": "j"})
    result(client, "agent-async", "event/send", {"task_id": task["id"], "content": text("hello")})
    error(client, "agent-async", "message/send", {"content": text("hi")})
    client.get(f"/messages?task_id={task['id']}")
    entries = app.extensions["mockagent"].agents[""].journal.entries
    assert [(e.operation, e.binding, e.interaction, e.error) for e in entries] == [
        ("CreateTask", "RPC", None, None),
        ("SendEvent", "RPC", "any-event", None),
        ("SendMessage", "RPC", None, "UnsupportedOperation"),
        ("GetTask", "REST", None, None),
    ]
    event = entries[1].params
    assert (event["agent"], event["content"]) == ("worker", text("hello"))
    assert event["message"]["parts"] == [{"text": "hello"}]


def test_two_fresh_apps_answer_byte_for_byte_the_same(cassette):
    def replay() -> list[bytes]:
        client = create_app(cassette).test_client()
        out = [post(client, "agent-sync", {"method": "task/create", "params": {"name": "n"}}).data]
        task_id = json.loads(out[0])["result"]["id"]
        for params in (
            {"content": text("A?"), "task_id": task_id},
            {"content": text("B?"), "stream": True},
        ):
            out.append(
                post(
                    client, "agent-sync", {"method": "message/send", "params": params, "id": 1}
                ).data
            )
        task = json.loads(
            post(client, "agent-async", {"method": "task/create", "params": {}}).data
        )["result"]
        out.append(
            post(
                client,
                "agent-async",
                {
                    "method": "event/send",
                    "params": {"task_id": task["id"], "content": text("work")},
                },
            ).data
        )
        for path in (
            f"/messages?task_id={task_id}",
            f"/messages?task_id={task['id']}",
            "/tasks",
            "/agents",
            f"/events?agent_id=agent-async&task_id={task['id']}",
            f"/tasks/{task['id']}",
        ):
            out.append(client.get(path).data)
        return out

    first, second = replay(), replay()
    assert first == second
    assert b"Working." in first[-5] and b"COMPLETED" in first[-1]


def test_an_unmatched_turn_gets_the_near_miss_report_in_protocol_terms(tmp_path):
    from mockagent.server.app import create_app

    path = tmp_path / "bot.yaml"
    path.write_text("""\
version: 1
protocol: agentex
agents: [{id: a1, name: bot, acp_type: sync}]
interactions:
  - name: question
    match: {text: {endswith: "?"}}
    reply: {task: {steps: [{say: "yes"}]}}
""")
    reply = (
        create_app(path)
        .test_client()
        .post(
            "/agents/name/bot/rpc",
            json={
                "method": "message/send",
                "params": {"content": {"type": "text", "author": "user", "content": "Hello"}},
            },
        )
    )
    error = reply.get_json()["error"]
    assert reply.status_code == 200 and error["code"] == -32603
    assert error["message"].splitlines()[1:4] == [
        "Call: message/send (SendMessage) over RPC, text 'Hello', 1 part",
        "Closest interactions:",
        "  1. question (line 5)",
    ]
    assert 'message.parts[0].text: endswith "?" ≠ "Hello"' in error["message"]
