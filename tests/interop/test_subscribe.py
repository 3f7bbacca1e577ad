"""SubscribeToTask through the official a2a-sdk client: the Task snapshot first, then the live
events until a terminal state; no subscription to a finished or unknown task; a subscription to
an interrupted task stays open for the follow-up another client sends."""

from __future__ import annotations

import asyncio

import pytest
from a2a.client import Client
from a2a.types import (
    Part,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)

from tests.helpers.interop import (
    DIFF,
    LOG,
    STREAM_TIMEOUT,
    Kit,
    as_json,
    assert_reference_run_completed,
    data_part,
    get_task,
    journal_since,
    kind,
    send_task,
    states,
    status_text,
    stream,
    subscribe,
    texts,
)

COMPLETED = "TASK_STATE_COMPLETED"


def test_subscribing_to_a_polled_run_gives_the_snapshot_then_the_rest(kit: Kit) -> None:
    async def scenario(client: Client):
        async with await kit.client("test-runner") as polling:  # a plain, non-streaming client
            sent = await send_task(
                polling, kit.message("Run the tests at 9f3c2e1"), return_immediately=True
            )
            polled = await get_task(polling, sent.id)  # WORKING and the first log chunk
            events = await subscribe(client, sent.id)
            after = await get_task(polling, sent.id)
        return sent, polled, events, after

    before = len(kit.journal("test-runner"))
    sent, polled, events, after = kit.run("test-runner", scenario, streaming=True)

    assert polled.status.state == TaskState.TASK_STATE_WORKING
    # First the Task as it stands: WORKING, with the one log line the poll released ...
    snapshot = events[0].task
    assert kind(events[0]) == "task"
    assert (snapshot.id, snapshot.context_id) == (sent.id, sent.context_id)
    assert snapshot.status.state == TaskState.TASK_STATE_WORKING
    assert [(a.artifact_id, texts(a.parts)) for a in snapshot.artifacts] == [("test-log", LOG[:1])]
    # ... then only what had not happened yet: four appended chunks, the summary, COMPLETED.
    assert states(events) == ["TASK_STATE_WORKING", "-", "-", "-", "-", "-", COMPLETED]
    chunks = [e.artifact_update for e in events[1:5]]
    assert [texts(c.artifact.parts) for c in chunks] == [[line] for line in LOG[1:]]
    assert all(c.append and c.task_id == sent.id for c in chunks)
    assert [c.last_chunk for c in chunks] == [False, False, False, True]
    assert events[5].artifact_update.artifact.artifact_id == "summary"
    assert as_json(events[5].artifact_update.artifact.parts[0])["data"] == {
        "passed": 11,
        "failed": 1,
    }
    assert events[6].status_update.task_id == sent.id
    assert_reference_run_completed(after)
    operations = [(e.operation, e.binding) for e in journal_since(kit, "test-runner", before)]
    assert ("SubscribeToTask", kit.binding) in operations


def test_subscribing_to_a_finished_task_is_an_unsupported_operation(kit: Kit) -> None:
    async def scenario(client: Client):
        events = await stream(client, kit.message("Run the tests at deadbee"))
        assert states(events)[-1] == "TASK_STATE_FAILED"
        await subscribe(client, events[0].task.id)

    with pytest.raises(UnsupportedOperationError):
        kit.run("test-runner", scenario, streaming=True)


def test_subscribing_to_an_unknown_task_is_task_not_found(kit: Kit) -> None:
    async def scenario(client: Client):
        await subscribe(client, "no-such-task")

    with pytest.raises(TaskNotFoundError):
        kit.run("test-runner", scenario, streaming=True)


async def _subscriber(client: Client, task_id: str, opened: asyncio.Event) -> list[StreamResponse]:
    """Subscribe, say when the snapshot is in (the subscription is open), then read to the end."""
    events = []
    async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
        events.append(event)
        opened.set()
    return events


def test_a_subscription_to_an_input_required_task_stays_open_for_the_answer(kit: Kit) -> None:
    diff = Part(text=DIFF, media_type="text/x-diff", filename="change.diff")

    async def scenario(client: Client):
        async with await kit.client("code-reviewer") as asker:  # another client, not streaming
            asked = await send_task(asker, kit.message("Please review this change", diff))
            opened = asyncio.Event()
            listening = asyncio.create_task(_subscriber(client, asked.id, opened))
            await asyncio.wait_for(opened.wait(), STREAM_TIMEOUT)
            assert not listening.done(), "the subscription closed at INPUT_REQUIRED"
            done = await send_task(
                asker, kit.message("main", task_id=asked.id, context_id=asked.context_id)
            )
            events = await asyncio.wait_for(listening, STREAM_TIMEOUT)
        return asked, done, events

    asked, done, events = kit.run("code-reviewer", scenario, streaming=True)

    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    # The snapshot (still waiting), then the answer's events as they happened, then closure.
    assert states(events) == ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "-", COMPLETED]
    assert events[0].task.id == asked.id
    assert "base branch" in status_text(events[0].task)
    assert events[2].artifact_update.artifact.artifact_id == "review"
    assert {e.status_update.task_id for e in (events[1], events[3])} == {asked.id}
    assert events[3].status_update.status.timestamp == done.status.timestamp, "the same COMPLETED"


def test_concurrent_subscribers_to_a_waiting_deploy_see_identical_events(kit: Kit) -> None:
    async def scenario(client: Client):
        async with (
            await kit.client("deployer") as operator,
            await kit.client("deployer", streaming=True) as other,
        ):
            waiting = await send_task(operator, kit.message("Deploy build 1.4.2 to staging"))
            openings = [asyncio.Event(), asyncio.Event()]
            listening = [
                asyncio.create_task(_subscriber(c, waiting.id, o))
                for c, o in zip((client, other), openings, strict=True)
            ]
            await asyncio.wait_for(asyncio.gather(*(o.wait() for o in openings)), STREAM_TIMEOUT)
            approval = kit.message(None, data_part({"approved": True}), task_id=waiting.id)
            done = await send_task(operator, approval)
            results = await asyncio.wait_for(asyncio.gather(*listening), STREAM_TIMEOUT)
        return waiting, done, results

    waiting, done, (first, second) = kit.run("deployer", scenario, streaming=True)

    assert waiting.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    # Open through AUTH_REQUIRED, closed at COMPLETED; both readers got the same events, in order.
    assert states(first) == [
        "TASK_STATE_AUTH_REQUIRED",
        "TASK_STATE_WORKING",
        "-",
        "-",
        "-",
        COMPLETED,
    ]
    assert [as_json(e) for e in first] == [as_json(e) for e in second]
    log = [t for e in first[2:5] for t in texts(e.artifact_update.artifact.parts)]
    assert log == [
        "pulling image registry.example.com/shop:1.4.2\n",
        "rolling out 3/3 replicas\n",
        "health check passed\n",
    ]
