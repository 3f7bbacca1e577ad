"""SendStreamingMessage through the official a2a-sdk client: the kit's nine frames of the
test-runner reference run, streams that end FAILED, REJECTED or at an interrupted state, streamed
follow-ups, a direct Message, and pacing by the cassettes' `after: {ms}` gaps."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import httpx
import pytest
from a2a.client import Client
from a2a.types import (
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
    UnsupportedOperationError,
)
from google.protobuf import json_format

from mockagent.server.thread import serve_in_thread
from tests.helpers.interop import (
    DIFF,
    JSON_BINDINGS,
    LOG,
    Kit,
    as_json,
    assert_reference_run_completed,
    data_part,
    get_task,
    journal_since,
    kind,
    states,
    stream,
    texts,
)
from tests.helpers.paths import KIT

SUBMITTED, WORKING, COMPLETED = "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"


def status_of(event: StreamResponse) -> str:
    """The status message text of a task or status-update event."""
    status = event.task.status if kind(event) == "task" else event.status_update.status
    return "\n".join(texts(status.message.parts))


def assert_one_task(events: list[StreamResponse], task_id: str, context_id: str) -> None:
    """Every event after the first belongs to the first event's task and context."""
    for event in events[1:]:
        update = event.status_update if kind(event) == "status_update" else event.artifact_update
        assert (update.task_id, update.context_id) == (task_id, context_id), event


def test_the_reference_run_streams_the_kits_nine_frames(kit: Kit) -> None:
    async def scenario(client: Client):
        events = await stream(client, kit.message("Run the tests at 9f3c2e1"))
        after = await get_task(client, events[0].task.id)
        return events, after

    before = len(kit.journal("test-runner"))
    events, after = kit.run("test-runner", scenario, streaming=True)

    assert [kind(e) for e in events] == (
        ["task", "status_update"] + ["artifact_update"] * 6 + ["status_update"]
    ), "exactly the kit's nine frames, in order"

    # 1: the Task, SUBMITTED, with nothing produced yet.
    task = events[0].task
    assert task.id and task.context_id
    assert task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert list(task.artifacts) == []
    assert "Run the tests at 9f3c2e1" in [t for m in task.history for t in texts(m.parts)]
    assert_one_task(events, task.id, task.context_id)

    # 2: WORKING.
    working = events[1].status_update.status
    assert working.state == TaskState.TASK_STATE_WORKING
    assert status_of(events[1]) == "Checking out 9f3c2e1 and starting the suite"
    assert working.message.role == Role.ROLE_AGENT

    # 3-7: the test-log, one line per chunk, appended after the first, lastChunk on the last.
    chunks = [e.artifact_update for e in events[2:7]]
    assert [(c.artifact.artifact_id, c.artifact.name) for c in chunks] == [
        ("test-log", "test-log.txt")
    ] * 5
    assert [texts(c.artifact.parts) for c in chunks] == [[line] for line in LOG]
    assert [c.append for c in chunks] == [False, True, True, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, False, False, True]

    # 8: the summary, a data part.
    summary = events[7].artifact_update
    assert (summary.artifact.artifact_id, summary.artifact.name) == ("summary", "summary.json")
    assert (summary.append, summary.last_chunk) == (False, True)
    [part] = summary.artifact.parts
    assert part.media_type == "application/json"
    assert as_json(part)["data"] == {"passed": 11, "failed": 1}

    # 9: COMPLETED; the stream closed after it (the client's iteration ended).
    assert events[8].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert status_of(events[8]) == "1 failed, 11 passed"

    # The streamed task is the task GetTask shows: the chunks add up to the whole log.
    assert after.id == task.id
    assert_reference_run_completed(after)
    entries = journal_since(kit, "test-runner", before)
    assert [(e.operation, e.interaction, e.binding) for e in entries][0] == (
        "SendStreamingMessage",
        "run-9f3c2e1",
        kit.binding,
    )


def test_stream_timestamps_show_the_cassettes_gaps(kit: Kit) -> None:
    """Played at instant pace, the `after: {ms}` gaps still move the virtual clock: each state
    change is stamped the scripted gap (plus the clock's 250 ms tick per stamp) after the last."""

    async def scenario(client: Client):
        return await stream(client, kit.message("Run the tests at 9f3c2e1"))

    events = kit.run("test-runner", scenario, streaming=True)

    stamps = [events[0].task.status.timestamp.ToDatetime()] + [
        e.status_update.status.timestamp.ToDatetime() for e in (events[1], events[8])
    ]
    # SUBMITTED; WORKING after a tick and 300 ms; COMPLETED after a tick and the 1600 ms of the
    # five chunks, the summary and the final gap (250+400+350+200+150 + 150 + 100). Artifact
    # updates carry no timestamp, but their gaps move the clock all the same.
    assert stamps[1] - stamps[0] == timedelta(milliseconds=250 + 300)
    assert stamps[2] - stamps[1] == timedelta(milliseconds=250 + 1600)


def test_commit_deadbee_streams_to_failed(kit: Kit) -> None:
    async def scenario(client: Client):
        return await stream(client, kit.message("Run the tests at deadbee"))

    events = kit.run("test-runner", scenario, streaming=True)

    assert states(events) == [SUBMITTED, WORKING, "-", "TASK_STATE_FAILED"]
    assert_one_task(events, events[0].task.id, events[0].task.context_id)
    log = events[2].artifact_update
    assert log.artifact.artifact_id == "test-log" and log.last_chunk
    assert "deadbee" in "".join(texts(log.artifact.parts))
    assert "deadbee is not a commit" in status_of(events[-1])


def test_a_diff_stream_closes_at_input_required_and_the_streamed_answer_completes(kit: Kit) -> None:
    diff = Part(text=DIFF, media_type="text/x-diff", filename="change.diff")

    async def scenario(client: Client):
        asked = await stream(client, kit.message("Please review this change", diff))
        task = asked[0].task
        answered = await stream(
            client, kit.message("main", task_id=task.id, context_id=task.context_id)
        )
        return asked, answered

    before = len(kit.journal("code-reviewer"))
    asked, answered = kit.run("code-reviewer", scenario, streaming=True)

    # The first stream ends at the question: the client's iteration finished there.
    assert states(asked) == [SUBMITTED, WORKING, "TASK_STATE_INPUT_REQUIRED"]
    assert status_of(asked[1]) == "Reading the diff"
    assert "base branch" in status_of(asked[-1])
    task = asked[0].task
    assert_one_task(asked, task.id, task.context_id)

    # The answer streams on the same task, from WORKING to COMPLETED.
    assert states(answered) == [WORKING, "-", COMPLETED]
    first = answered[0].task
    assert (first.id, first.context_id) == (task.id, task.context_id)
    assert status_of(answered[0]) == "Reviewing the diff against the base branch"
    assert_one_task(answered, task.id, task.context_id)
    review = answered[1].artifact_update
    assert (review.artifact.artifact_id, review.artifact.name, review.last_chunk) == (
        "review",
        "review.md",
        True,
    )
    assert review.artifact.parts[0].text.startswith("## Review")
    assert status_of(answered[-1]) == "Review ready: 2 issues, 1 nit"
    entries = journal_since(kit, "code-reviewer", before)
    assert [(e.operation, e.interaction) for e in entries] == [
        ("SendStreamingMessage", "review"),
        ("SendStreamingMessage", "base-branch"),
    ]


def test_a_question_streams_one_message(kit: Kit) -> None:
    async def scenario(client: Client):
        return await stream(client, kit.message("Which languages do you review?"))

    [event] = kit.run("code-reviewer", scenario, streaming=True)

    assert kind(event) == "message"
    assert event.message.role == Role.ROLE_AGENT
    assert "Python" in "".join(texts(event.message.parts))
    assert event.message.context_id and not event.message.task_id


@pytest.mark.parametrize("binding", JSON_BINDINGS)  # SSE frames: gRPC's are in test_grpc.py
def test_the_server_closes_a_message_stream_after_the_message(kit: Kit) -> None:
    """The client stops reading after a Message on its own, so read the raw SSE body: it must end
    (the server closed the stream) with exactly one event in it."""
    message = {
        "messageId": kit.new_id("msg"),
        "role": "ROLE_USER",
        "parts": [{"text": "Which languages do you review?"}],
    }
    url = kit.agent_url("code-reviewer")
    if kit.binding == "JSONRPC":
        request = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "SendStreamingMessage",
            "params": {"message": message},
        }
    else:
        url, request = url + "/message:stream", {"message": message}

    response = httpx.post(url, json=request, headers={"A2A-Version": "1.0"}, timeout=10)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = [
        line.removeprefix("data: ")
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]
    [frame] = frames
    payload = json.loads(frame)
    if kit.binding == "JSONRPC":
        assert payload["id"] == 7 and payload["jsonrpc"] == "2.0"
        payload = payload["result"]
    assert list(payload) == ["message"]
    assert "Python" in payload["message"]["parts"][0]["text"]


def test_a_deploy_stream_closes_at_auth_required_and_the_streamed_approval_completes(
    kit: Kit,
) -> None:
    async def scenario(client: Client):
        waiting = await stream(client, kit.message("Deploy build 1.4.2 to staging"))
        task = waiting[0].task
        approval = kit.message(
            None, data_part({"approved": True}), task_id=task.id, context_id=task.context_id
        )
        approved = await stream(client, approval)
        return waiting, approved

    waiting, approved = kit.run("deployer", scenario, streaming=True)

    assert states(waiting) == [SUBMITTED, WORKING, "TASK_STATE_AUTH_REQUIRED"]
    assert "approve" in status_of(waiting[-1])
    task = waiting[0].task
    assert states(approved) == [WORKING, "-", "-", "-", COMPLETED]
    assert approved[0].task.id == task.id
    assert_one_task(approved, task.id, task.context_id)
    chunks = [e.artifact_update for e in approved[1:4]]
    assert [texts(c.artifact.parts) for c in chunks] == [
        ["pulling image registry.example.com/shop:1.4.2\n"],
        ["rolling out 3/3 replicas\n"],
        ["health check passed\n"],
    ]
    assert [(c.append, c.last_chunk) for c in chunks] == [
        (False, False),
        (True, False),
        (True, True),
    ]
    assert status_of(approved[-1]) == "Build 1.4.2 is live on staging"


def test_a_production_deploy_streams_to_rejected(kit: Kit) -> None:
    async def scenario(client: Client):
        return await stream(client, kit.message("Deploy build 1.4.2 to production"))

    events = kit.run("deployer", scenario, streaming=True)

    assert states(events) == [SUBMITTED, "TASK_STATE_REJECTED"]
    assert events[1].status_update.task_id == events[0].task.id
    assert "Production deploys are frozen" in status_of(events[1])


def test_streaming_to_a_completed_task_is_an_unsupported_operation(kit: Kit) -> None:
    async def scenario(client: Client):
        events = await stream(client, kit.message("Run the tests at 9f3c2e1"))
        assert states(events)[-1] == COMPLETED
        done = events[0].task
        await stream(
            client, kit.message("Again, please", task_id=done.id, context_id=done.context_id)
        )

    with pytest.raises(UnsupportedOperationError):
        kit.run("test-runner", scenario, streaming=True)


@pytest.fixture(scope="module")
def paced_server():
    """The kit at a tenth of the recorded pace: the reference run's 1.9 s of gaps take 0.19 s."""
    with serve_in_thread(str(KIT), grpc_port=0, pace="scale=0.1") as server:
        yield server


def test_a_paced_stream_waits_for_the_scripted_gaps(paced_server, binding: str) -> None:
    kit = Kit(paced_server, binding, "paced")

    async def scenario(client: Client):
        arrivals: list[tuple[float, StreamResponse]] = []
        start = time.monotonic()
        request = SendMessageRequest(message=kit.message("Run the tests at 9f3c2e1"))
        async for event in client.send_message(request):
            arrivals.append((time.monotonic() - start, event))
        return arrivals

    arrivals = kit.run("test-runner", scenario, streaming=True)

    assert len(arrivals) == 9
    (_, first), (done_at, last) = arrivals[0], arrivals[-1]
    assert first.task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED
    # COMPLETED is due 190 ms after the server opened the stream, which it did after `start`.
    # Events never come early (they may come late), so only the lower bound is checked.
    assert done_at >= 0.185, [round(t, 3) for t, _ in arrivals]


@pytest.mark.parametrize("binding", JSON_BINDINGS)  # SSE frames: gRPC's are in test_grpc.py
def test_stream_events_are_valid_stream_responses_on_the_wire(kit: Kit) -> None:
    """Every SSE frame parses as a StreamResponse (JSON-RPC: inside a response with the id)."""
    message = {
        "messageId": kit.new_id("msg"),
        "role": "ROLE_USER",
        "parts": [{"text": "Run the tests at deadbee"}],
    }
    url = kit.agent_url("test-runner")
    if kit.binding == "JSONRPC":
        request = {
            "jsonrpc": "2.0",
            "id": "s-1",
            "method": "SendStreamingMessage",
            "params": {"message": message},
        }
    else:
        url, request = url + "/message:stream", {"message": message}

    response = httpx.post(url, json=request, headers={"A2A-Version": "1.0"}, timeout=10)

    frames = [
        json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")
    ]
    if kit.binding == "JSONRPC":
        assert {(f["jsonrpc"], f["id"]) for f in frames} == {("2.0", "s-1")}
        frames = [f["result"] for f in frames]
    parsed = [json_format.ParseDict(f, StreamResponse()) for f in frames]
    assert states(parsed) == [SUBMITTED, WORKING, "-", "TASK_STATE_FAILED"]
