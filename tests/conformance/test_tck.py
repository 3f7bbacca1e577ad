"""cassettes/conformance/tck.yaml as the TCK sees it: the card, every messageId prefix, streams,
resubscription, push-config CRUD and the errors, over JSON-RPC and HTTP+JSON in raw JSON and SSE.

Tests share one server (module scope), so each uses fresh messageIds and the tasks it created,
and reads only the journal entries of its own calls.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest
import yaml

from mockagent.server.thread import ServerThread
from tests.helpers.tck import (
    CASSETTE,
    HEADERS,
    TIMEOUT,
    Agent,
    Reply,
    assert_error,
    check_wire,
    kind,
    new_id,
    rest_error_of,
    status_text,
    user_message,
)

FILE_PART = {"raw": "dGNr", "mediaType": "text/plain", "filename": "output.txt"}  # b"tck"
URL_PART = {
    "url": "https://example.com/output.txt",
    "mediaType": "text/plain",
    "filename": "output.txt",
}


def journal_of(server: ServerThread, message_id: str) -> list[tuple[str, str | None, bool]]:
    """(operation, interaction, matched) of every call that sent this messageId."""
    return [
        (e.operation, e.interaction, e.matched)
        for e in server.journal()
        if (e.params.get("message") or {}).get("messageId") == message_id
    ]


def parts_of(task: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [artifact["parts"] for artifact in task.get("artifacts", [])]


def parse_time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


# -- the agent card --------------------------------------------------------------------------


def test_card_has_every_required_field_and_non_empty_arrays(server: ServerThread) -> None:
    response = httpx.get(server.card_url(), timeout=TIMEOUT)  # the TCK sends no version header
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    card = response.json()
    check_wire(card)
    for field in ("name", "description", "version"):
        assert isinstance(card[field], str) and card[field]
    assert card["capabilities"] == {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
    }
    for field in ("supportedInterfaces", "defaultInputModes", "defaultOutputModes", "skills"):
        assert isinstance(card[field], list) and card[field], field
    for skill in card["skills"]:
        assert {"id", "name", "description", "tags"} <= set(skill) and skill["tags"]


def test_card_interfaces_put_jsonrpc_first_and_point_at_this_server(server: ServerThread) -> None:
    card = httpx.get(server.card_url(), timeout=TIMEOUT).json()
    assert card["supportedInterfaces"] == [
        {"url": server.url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": server.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]


def test_card_is_cacheable_with_a_stable_etag(server: ServerThread) -> None:
    first = httpx.get(server.card_url(), timeout=TIMEOUT)
    second = httpx.get(server.card_url(), timeout=TIMEOUT)
    assert "max-age=" in first.headers["cache-control"]
    assert first.headers["etag"] and first.headers["etag"] == second.headers["etag"]
    revalidated = httpx.get(
        server.card_url(), headers={"If-None-Match": first.headers["etag"]}, timeout=TIMEOUT
    )
    assert revalidated.status_code == 304


def test_card_last_modified_is_the_clock_start_and_answers_if_modified_since(
    server: ServerThread,
) -> None:
    """CARD-CACHE-003: a Last-Modified the cassette fixes, and If-Modified-Since revalidation."""
    first = httpx.get(server.card_url(), timeout=TIMEOUT)
    start = yaml.safe_load(CASSETTE.read_text())["clock"]["start"]
    assert parsedate_to_datetime(first.headers["last-modified"]) == start
    assert first.headers["last-modified"] == "Tue, 06 Oct 2026 09:00:00 GMT"
    for method in ("GET", "HEAD"):
        revalidated = httpx.request(
            method,
            server.card_url(),
            headers={"If-Modified-Since": first.headers["last-modified"]},
            timeout=TIMEOUT,
        )
        assert revalidated.status_code == 304 and revalidated.content == b""
        assert revalidated.headers["etag"] == first.headers["etag"]
    earlier = {"If-Modified-Since": "Mon, 05 Oct 2026 09:00:00 GMT"}
    assert httpx.get(server.card_url(), headers=earlier, timeout=TIMEOUT).json() == first.json()


def test_extended_card_adds_a_skill(agent: Agent, server: ServerThread) -> None:
    public = httpx.get(server.card_url(), timeout=TIMEOUT).json()
    extended = agent.call("GetExtendedAgentCard", {}).ok()
    assert [s["id"] for s in public["skills"]] == ["tck"]
    assert [s["id"] for s in extended["skills"]] == ["tck", "tck-extended"]
    assert extended["supportedInterfaces"] == public["supportedInterfaces"]


# -- blocking SendMessage, prefix by prefix --------------------------------------------------

BLOCKING = [  # prefix, interaction, final state, status text, artifact parts
    ("tck-complete-task", "complete-task", "TASK_STATE_COMPLETED", "Hello from TCK", []),
    (
        "tck-artifact-text",
        "artifact-text",
        "TASK_STATE_COMPLETED",
        None,
        [[{"text": "Generated text content"}]],
    ),
    ("tck-artifact-file", "artifact-file", "TASK_STATE_COMPLETED", None, [[FILE_PART]]),
    ("tck-artifact-file-url", "artifact-file-url", "TASK_STATE_COMPLETED", None, [[URL_PART]]),
    (
        "tck-artifact-data",
        "artifact-data",
        "TASK_STATE_COMPLETED",
        None,
        [[{"data": {"key": "value", "count": 42}}]],
    ),
    ("tck-input-required", "input-required", "TASK_STATE_INPUT_REQUIRED", "Input required", []),
    ("tck-reject-task", "reject-task", "TASK_STATE_REJECTED", "rejected", []),
    ("tck-delayed-complete", "delayed-complete", "TASK_STATE_COMPLETED", "Done after delay", []),
    ("tck-no-such-prefix", "default", "TASK_STATE_COMPLETED", "Hello from TCK", []),
    ("someone-elses-message", "default", "TASK_STATE_COMPLETED", "Hello from TCK", []),
]


@pytest.mark.parametrize(
    "prefix, interaction, state, text, artifacts", BLOCKING, ids=[row[0] for row in BLOCKING]
)
def test_blocking_send_by_prefix(
    agent: Agent,
    server: ServerThread,
    prefix: str,
    interaction: str,
    state: str,
    text: str | None,
    artifacts: list[Any],
) -> None:
    message_id = new_id(prefix)
    task = agent.task(message_id)
    assert task["status"]["state"] == state
    assert status_text(task) == text
    assert parts_of(task) == artifacts
    assert task["id"] and task["contextId"]
    [user] = task["history"]
    assert user["messageId"] == message_id and user["role"] == "ROLE_USER"
    assert user["taskId"] == task["id"] and user["contextId"] == task["contextId"]
    if text is not None:
        message = task["status"]["message"]
        assert message["role"] == "ROLE_AGENT" and message["taskId"] == task["id"]
    assert journal_of(server, message_id) == [("SendMessage", interaction, True)]
    assert agent.call("GetTask", {"id": task["id"]}).ok() == task, "GetTask shows the same task"


def test_the_same_message_id_twice_behaves_the_same(agent: Agent, server: ServerThread) -> None:
    message_id = new_id("tck-artifact-file-url")
    first = agent.task(message_id)
    second = agent.task(message_id)
    assert first["id"] != second["id"], "each send is a new task"
    for task in (first, second):
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert parts_of(task) == [[URL_PART]]
    assert journal_of(server, message_id) == [("SendMessage", "artifact-file-url", True)] * 2


def test_message_response_is_a_message_without_a_task(agent: Agent, server: ServerThread) -> None:
    message_id = new_id("tck-message-response")
    result = agent.send(message_id)
    assert set(result) == {"message"}
    message = result["message"]
    assert message["role"] == "ROLE_AGENT"
    assert message["parts"] == [{"text": "Direct message response"}]
    assert message["contextId"] and "taskId" not in message
    assert message["messageId"] != message_id
    assert journal_of(server, message_id) == [("SendMessage", "message-response", True)]


def test_input_required_then_a_follow_up_completes_the_task(
    agent: Agent, server: ServerThread
) -> None:
    first_id, second_id = new_id("tck-input-required"), new_id("tck-complete-task")
    task = agent.task(first_id)
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

    done = agent.task(second_id, taskId=task["id"], contextId=task["contextId"])

    assert done["id"] == task["id"] and done["contextId"] == task["contextId"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert status_text(done) == "Hello from TCK"
    history = done["history"]
    assert [m["messageId"] for m in history if m["role"] == "ROLE_USER"] == [first_id, second_id]
    assert [m["role"] for m in history] == ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"], (
        "the agent's question sits between the two user turns"
    )
    assert journal_of(server, first_id) == [("SendMessage", "input-required", True)]
    assert journal_of(server, second_id) == [("SendMessage", "input-required-follow-up", True)]
    assert (
        agent.call("GetTask", {"id": task["id"]}).ok()["status"]["state"] == "TASK_STATE_COMPLETED"
    )


def test_a_message_to_a_completed_task_is_refused(agent: Agent) -> None:
    task = agent.task(new_id("tck-complete-task"))
    params = {"message": user_message(new_id("tck-complete-task"), taskId=task["id"])}
    assert_error(agent.call("SendMessage", params), "UnsupportedOperation", agent.binding)


def test_return_immediately_shows_working_and_blocking_waits(agent: Agent) -> None:
    """CORE-EXECUTION-MODE: `tck-delayed-complete` works for a while before completing."""
    waiting = agent.task(new_id("tck-delayed-complete"), configuration={"returnImmediately": True})
    assert waiting["status"]["state"] == "TASK_STATE_WORKING"
    assert (
        agent.call("GetTask", {"id": waiting["id"]}).ok()["status"]["state"] == "TASK_STATE_WORKING"
    )
    blocked = agent.task(new_id("tck-delayed-complete"))
    assert blocked["status"]["state"] == "TASK_STATE_COMPLETED"


# -- streams ---------------------------------------------------------------------------------

WORKING, COMPLETED = "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"
STREAMS = [  # prefix, interaction, (kind, state) of each event, the artifact chunks in order
    (
        "tck-stream-001",
        "stream-001",
        [("task", WORKING), ("artifactUpdate", None), ("statusUpdate", COMPLETED)],
        [[{"text": "Stream hello from TCK"}]],
    ),
    (
        "tck-stream-002",
        "stream-002",
        [("task", "TASK_STATE_SUBMITTED"), ("statusUpdate", COMPLETED)],
        [],
    ),
    (
        "tck-stream-003",
        "stream-003",
        [("task", WORKING), ("artifactUpdate", None), ("statusUpdate", COMPLETED)],
        [[{"text": "Stream task lifecycle"}]],
    ),
    (
        "tck-stream-ordering-001",
        "stream-ordering",
        [("task", WORKING), ("artifactUpdate", None), ("statusUpdate", COMPLETED)],
        [[{"text": "Ordered output"}]],
    ),
    (
        "tck-stream-artifact-text",
        "stream-artifact-text",
        [("task", WORKING), ("artifactUpdate", None), ("statusUpdate", COMPLETED)],
        [[{"text": "Streamed text content"}]],
    ),
    (
        "tck-stream-artifact-file",
        "stream-artifact-file",
        [("task", WORKING), ("artifactUpdate", None), ("statusUpdate", COMPLETED)],
        [[FILE_PART]],
    ),
    (
        "tck-stream-artifact-chunked",
        "stream-artifact-chunked",
        [
            ("task", WORKING),
            ("artifactUpdate", None),
            ("artifactUpdate", None),
            ("statusUpdate", COMPLETED),
        ],
        [[{"text": "chunk-1 "}], [{"text": "chunk-2"}]],
    ),
    ("tck-message-response", "message-response", [("message", None)], []),
]


@pytest.mark.parametrize(
    "prefix, interaction, kinds, chunks", STREAMS, ids=[row[0] for row in STREAMS]
)
def test_stream_by_prefix(
    agent: Agent,
    server: ServerThread,
    prefix: str,
    interaction: str,
    kinds: list[Any],
    chunks: list[Any],
) -> None:
    message_id = new_id(prefix)
    events = agent.stream_message(message_id)  # read until the server closes the stream
    assert [kind(e) for e in events] == kinds
    updates = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    assert [u["artifact"]["parts"] for u in updates] == chunks
    assert journal_of(server, message_id) == [("SendStreamingMessage", interaction, True)]
    if "task" not in events[0]:
        return
    task = events[0]["task"]
    assert task["history"][0]["messageId"] == message_id
    for event in events[1:]:
        [body] = event.values()
        assert (body["taskId"], body["contextId"]) == (task["id"], task["contextId"])
    final = agent.call("GetTask", {"id": task["id"]}).ok()
    assert final["status"] == events[-1]["statusUpdate"]["status"], (
        "the last event is the task's state"
    )
    assert len(final.get("artifacts", [])) == (1 if chunks else 0)


def test_chunked_artifact_flags_and_the_assembled_artifact(agent: Agent) -> None:
    events = agent.stream_message(new_id("tck-stream-artifact-chunked"))
    first, second = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    assert first["artifact"]["artifactId"] == second["artifact"]["artifactId"]
    assert "append" not in first and "lastChunk" not in first, "the first chunk starts the artifact"
    assert second["append"] is True and second["lastChunk"] is True
    task = agent.call("GetTask", {"id": events[0]["task"]["id"]}).ok()
    [artifact] = task["artifacts"]
    assert artifact["parts"] == [{"text": "chunk-1 "}, {"text": "chunk-2"}]


def test_jsonrpc_stream_events_are_single_data_lines_with_the_request_id(
    server: ServerThread,
) -> None:
    """Byte level: `data: {json}` + blank line per event, each a response to request 42."""
    body = {
        "jsonrpc": "2.0",
        "id": 42,
        "method": "SendStreamingMessage",
        "params": {"message": user_message(new_id("tck-stream-001"))},
    }
    response = httpx.post(server.url + "/", json=body, headers=HEADERS, timeout=TIMEOUT)
    assert response.headers["content-type"].startswith("text/event-stream")
    blocks = [block for block in response.text.split("\n\n") if block.strip()]
    assert response.text.endswith("\n\n") and len(blocks) == 3
    for block in blocks:
        [line] = block.splitlines()
        assert line.startswith("data: {") and '"id":42' in line


# -- resubscription --------------------------------------------------------------------------


def test_subscribe_after_return_immediately_sees_working_then_completed(agent: Agent) -> None:
    task = agent.task(
        new_id("test-resubscribe-message-id"), configuration={"returnImmediately": True}
    )
    assert task["status"]["state"] == WORKING
    started = time.monotonic()
    events = agent.stream_all("SubscribeToTask", {"id": task["id"]})
    elapsed = time.monotonic() - started
    assert [kind(e) for e in events] == [("task", WORKING), ("statusUpdate", COMPLETED)]
    assert events[0]["task"]["id"] == task["id"]
    working, completed = events[0]["task"]["status"], events[1]["statusUpdate"]["status"]
    gap = parse_time(completed["timestamp"]) - parse_time(working["timestamp"])
    assert gap.total_seconds() >= 4, "the virtual clock shows the scripted 4 s"
    assert elapsed >= 0.15, "paced: 4000 ms at scale 0.05 is 200 ms of real time"


@pytest.mark.parametrize("verb", ["POST", "GET"])
def test_subscribe_after_abandoning_the_stream(rest: Agent, verb: str) -> None:
    with rest.stream(
        "SendStreamingMessage", {"message": user_message(new_id("test-resubscribe-message-id"))}
    ) as events:
        first = next(events)  # then hang up, as the TCK does
    assert kind(first) == ("task", WORKING)
    resumed = rest.stream_all("SubscribeToTask", {"id": first["task"]["id"]}, verb=verb)
    assert [kind(e) for e in resumed] == [("task", WORKING), ("statusUpdate", COMPLETED)]
    assert resumed[1]["statusUpdate"]["taskId"] == first["task"]["id"]


def test_concurrent_subscribers_get_identical_events(agent: Agent, server: ServerThread) -> None:
    """Two subscribers see the same events. The task waits for input until both have its first
    event, then a follow-up completes it: no timing decides whether a subscriber comes too late."""
    task = agent.task(new_id("tck-input-required"))
    subscribed = threading.Barrier(3)  # both subscribers and this thread
    results: dict[int, Any] = {}

    def subscribe(slot: int) -> None:
        with httpx.Client(base_url=server.url, headers=HEADERS, timeout=TIMEOUT) as client:
            try:
                with Agent(client, agent.binding).stream(
                    "SubscribeToTask", {"id": task["id"]}
                ) as events:
                    first = next(events)
                    subscribed.wait(timeout=5)
                    results[slot] = [first, *events]
            except BaseException as exc:  # handed to the test thread, which asserts on it
                subscribed.abort()
                results[slot] = exc

    threads = [threading.Thread(target=subscribe, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    try:
        subscribed.wait(timeout=5)
        agent.task(new_id("tck-complete-task"), taskId=task["id"])
    except threading.BrokenBarrierError:
        pass  # a subscriber failed: its exception is in `results`
    for thread in threads:
        thread.join(timeout=10)
    assert not isinstance(results[0], BaseException), repr(results[0])
    assert not isinstance(results[1], BaseException), repr(results[1])
    # The reader already dropped `id`/`jsonrpc` (checked per event): the rest must be equal.
    assert results[0] == results[1]
    assert [kind(e) for e in results[0]] == [
        ("task", "TASK_STATE_INPUT_REQUIRED"),
        ("statusUpdate", COMPLETED),
    ]


def test_subscription_stays_open_through_input_required(agent: Agent, http: httpx.Client) -> None:
    """STREAM-SUB-002: subscribe to an INPUT_REQUIRED task, complete it, see COMPLETED, then
    close."""
    task = agent.task(new_id("tck-input-required"))
    other = Agent(http, agent.binding)
    with agent.stream("SubscribeToTask", {"id": task["id"]}) as events:
        assert kind(next(events)) == ("task", "TASK_STATE_INPUT_REQUIRED")
        other.task(new_id("tck-complete-task"), taskId=task["id"])
        rest = list(events)
    assert [kind(e) for e in rest] == [("statusUpdate", COMPLETED)]
    assert status_text(rest[0]["statusUpdate"]) == "Hello from TCK"


def test_cancel_ends_a_subscription_with_canceled(agent: Agent, http: httpx.Client) -> None:
    task = agent.task(
        new_id("test-resubscribe-message-id"), configuration={"returnImmediately": True}
    )
    with agent.stream("SubscribeToTask", {"id": task["id"]}) as events:
        assert kind(next(events)) == ("task", WORKING)
        canceled = Agent(http, agent.binding).call("CancelTask", {"id": task["id"]}).ok()
        rest = list(events)
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert rest == [
        {
            "statusUpdate": {
                "taskId": task["id"],
                "contextId": task["contextId"],
                "status": canceled["status"],
            }
        }
    ]


def test_a_streamed_follow_up_completes_an_input_required_task(
    agent: Agent, server: ServerThread
) -> None:
    task = agent.task(new_id("tck-input-required"))
    message_id = new_id("tck-complete-task")
    events = agent.stream_all(
        "SendStreamingMessage", {"message": user_message(message_id, taskId=task["id"])}
    )
    assert [kind(e) for e in events] == [("task", COMPLETED)]
    assert (
        events[0]["task"]["id"] == task["id"] and status_text(events[0]["task"]) == "Hello from TCK"
    )
    assert journal_of(server, message_id) == [
        ("SendStreamingMessage", "input-required-follow-up", True)
    ]


def test_subscribe_to_a_completed_task_is_refused(agent: Agent) -> None:
    task = agent.task(new_id("tck-complete-task"))
    if agent.binding == "JSONRPC":
        reply = agent.call("SubscribeToTask", {"id": task["id"]})  # an immediate error: plain JSON
    else:
        reply = Reply(error=rest_error_of(agent.http.post(f"/tasks/{task['id']}:subscribe")))
    assert_error(reply, "UnsupportedOperation", agent.binding)


# -- push notification configs ---------------------------------------------------------------


def test_push_config_create_get_list_delete(agent: Agent) -> None:
    task = agent.task(new_id("tck-complete-task"))
    config = {
        "taskId": task["id"],
        "id": "tck-push-config",
        "url": "https://example.com/webhook",
        "token": "tck-token",
    }

    created = agent.call("CreateTaskPushNotificationConfig", config).ok()
    assert created == config, "the client's id is kept and the task id filled in"
    got = agent.call(
        "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "tck-push-config"}
    ).ok()
    assert got == config
    listed = agent.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]}).ok()
    assert listed == {"configs": [config], "nextPageToken": ""}

    ids = {"taskId": task["id"], "id": "tck-push-config"}
    deleted = agent.call("DeleteTaskPushNotificationConfig", ids).ok()
    assert deleted == (None if agent.binding == "JSONRPC" else {})
    assert agent.call("DeleteTaskPushNotificationConfig", ids).error is None, "delete is idempotent"
    assert_error(agent.call("GetTaskPushNotificationConfig", ids), "TaskNotFound", agent.binding)
    assert agent.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]}).ok() == {
        "configs": [],
        "nextPageToken": "",
    }


def test_push_config_on_an_unknown_task_is_task_not_found(agent: Agent) -> None:
    reply = agent.call(
        "CreateTaskPushNotificationConfig",
        {"taskId": "no-such-task", "url": "https://example.com/webhook"},
    )
    assert_error(reply, "TaskNotFound", agent.binding)


def test_push_config_ops_accept_snake_case_params(rpc: Agent) -> None:
    task = rpc.task(new_id("tck-complete-task"))
    created = rpc.call(
        "CreateTaskPushNotificationConfig",
        {"task_id": task["id"], "id": "snake", "url": "https://example.com/hook"},
    ).ok()
    assert created["taskId"] == task["id"] and created["id"] == "snake"
    got = rpc.call("GetTaskPushNotificationConfig", {"task_id": task["id"], "id": "snake"}).ok()
    assert got == created


# -- cancel, get, params -----------------------------------------------------------------------


def test_cancel_of_a_completed_task_is_task_not_cancelable(agent: Agent) -> None:
    task = agent.task(new_id("tck-complete-task"))
    error = assert_error(
        agent.call("CancelTask", {"id": task["id"]}), "TaskNotCancelable", agent.binding
    )
    assert task["id"] in error.message


def test_cancel_of_an_input_required_task_cancels_it(agent: Agent) -> None:
    """CORE-CANCEL-001 uses `tck-input-required` for a task that is not finished."""
    task = agent.task(new_id("tck-input-required"))
    canceled = agent.call("CancelTask", {"id": task["id"]}).ok()
    assert canceled["id"] == task["id"] and canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert_error(agent.call("CancelTask", {"id": task["id"]}), "TaskNotCancelable", agent.binding)


def test_get_of_an_unknown_task_is_task_not_found(agent: Agent) -> None:
    assert_error(agent.call("GetTask", {"id": "no-such-task"}), "TaskNotFound", agent.binding)


def test_a_wrong_content_type_or_version_is_refused_by_spec_1_0_0s_table(rest: Agent) -> None:
    """HTTP_JSON-STATUS-001: a `text/plain` body is ContentTypeNotSupported (415), and
    `A2A-Version: 99.0` VersionNotSupported (400), its body naming UNIMPLEMENTED, the gRPC code
    spec 1.0.0 gives it (JSON-RPC's codes are the same in both tables)."""
    content = json.dumps({"message": user_message(new_id("tck-complete-task"))})
    wrong_type = rest.http.post(
        "/message:send", content=content, headers={"Content-Type": "text/plain"}
    )
    wrong_version = rest.http.post(
        "/message:send", content=content, headers={"A2A-Version": "99.0"}
    )
    assert_error(Reply(error=rest_error_of(wrong_type)), "ContentTypeNotSupported", rest.binding)
    assert_error(Reply(error=rest_error_of(wrong_version)), "VersionNotSupported", rest.binding)


def test_unknown_fields_are_ignored(agent: Agent, server: ServerThread) -> None:
    """DM-SERIAL-005 sends fields the protocol does not have; they change nothing."""
    message_id = new_id("tck-artifact-text")
    message = {**user_message(message_id), "tckUnknownField": "ignored"}
    params = {
        "message": message,
        "configuration": {"tckExtraParam": True},
        "tckExtraParam": {"x": 1},
    }
    result = agent.call("SendMessage", params).ok()
    assert parts_of(result["task"]) == [[{"text": "Generated text content"}]]
    assert journal_of(server, message_id) == [("SendMessage", "artifact-text", True)]


def test_snake_case_params_are_accepted(rpc: Agent, server: ServerThread) -> None:
    """The TCK's JSON-RPC client sends proto field names: `message_id`, `history_length`, …"""
    message_id = new_id("tck-artifact-data")
    params = {
        "message": {"message_id": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"history_length": 0, "return_immediately": False},
    }
    task = rpc.call("SendMessage", params).ok()["task"]
    assert parts_of(task) == [[{"data": {"key": "value", "count": 42}}]], (
        "the prefix matcher saw messageId"
    )
    assert "history" not in task, "history_length: 0 omits history"
    got = rpc.call("GetTask", {"id": task["id"], "history_length": 0}).ok()
    assert got["status"]["state"] == "TASK_STATE_COMPLETED" and "history" not in got
    assert journal_of(server, message_id) == [("SendMessage", "artifact-data", True)]


# -- the cassette itself ---------------------------------------------------------------------


def _prefix_of(interaction: dict[str, Any]) -> str | None:
    where = (interaction.get("match") or {}).get("where") or {}
    spec = where.get("message.messageId")
    return spec.get("startswith") if isinstance(spec, dict) else None


def test_longer_prefixes_come_first_so_the_longest_prefix_wins() -> None:
    """First match wins, so no interaction may follow one whose prefix is a prefix of its own."""
    text = CASSETTE.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schema.json\n")
    interactions = yaml.safe_load(text)["interactions"]
    prefixes = [_prefix_of(i) for i in interactions]
    for later, prefix in enumerate(prefixes):
        for earlier in range(later):
            shorter = prefixes[earlier]
            if prefix and shorter and prefix != shorter and prefix.startswith(shorter):
                pytest.fail(
                    f"{interactions[later]['name']} ({prefix}) is shadowed by "
                    f"{interactions[earlier]['name']} ({shorter}): move it up"
                )
    assert interactions[0]["name"] == "input-required-follow-up"
    assert interactions[-1]["name"] == "default" and "match" not in interactions[-1]
    assert all("times" not in i for i in interactions), (
        "every prefix may be sent any number of times"
    )
