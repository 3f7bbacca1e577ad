"""test-runner through the official a2a-sdk client: blocking and polled runs, FAILED runs, cancel,
task errors and ListTasks paging."""

from __future__ import annotations

import pytest
from a2a.client import Client
from a2a.types import (
    CancelTaskRequest,
    ListTasksRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
)

from tests.helpers.interop import (
    Kit,
    as_json,
    assert_reference_run_completed,
    get_task,
    journal_since,
    send_task,
    status_text,
    texts,
)


def test_a_blocking_send_returns_the_completed_run(kit: Kit) -> None:
    async def scenario(client: Client):
        return await send_task(client, kit.message("Run the tests at 9f3c2e1"))

    before = len(kit.journal("test-runner"))
    task = kit.run("test-runner", scenario)

    assert task.id and task.context_id
    assert_reference_run_completed(task)
    [entry] = journal_since(kit, "test-runner", before)
    assert (entry.operation, entry.interaction, entry.binding) == (
        "SendMessage",
        "run-9f3c2e1",
        kit.binding,
    )


def test_a_polled_run_shows_submitted_then_working_then_completed(kit: Kit) -> None:
    async def scenario(client: Client):
        sent = await send_task(
            client, kit.message("Run the tests at 9f3c2e1"), return_immediately=True
        )
        first = await get_task(client, sent.id, history_length=0)
        second = await get_task(client, sent.id, history_length=0)
        third = await get_task(client, sent.id)
        return sent, first, second, third

    sent, first, second, third = kit.run("test-runner", scenario)

    assert sent.status.state == TaskState.TASK_STATE_SUBMITTED
    assert list(sent.artifacts) == []

    assert first.id == sent.id and first.context_id == sent.context_id
    assert first.status.state == TaskState.TASK_STATE_WORKING
    assert status_text(first) == "Checking out 9f3c2e1 and starting the suite"
    [log] = first.artifacts
    assert log.artifact_id == "test-log"
    assert texts(log.parts) == ["collected 12 items\n"]
    assert list(first.history) == [], "historyLength 0 omits the history"

    assert list(second.history) == []
    assert_reference_run_completed(second)

    # A finished task stays as it is, and without historyLength it carries the user's message.
    assert_reference_run_completed(third)
    assert third.status.timestamp == second.status.timestamp
    assert "Run the tests at 9f3c2e1" in [t for m in third.history for t in texts(m.parts)]


def test_status_timestamps_follow_the_cassette_clock(kit: Kit) -> None:
    async def scenario(client: Client):
        sent = await send_task(
            client, kit.message("Run the tests at 9f3c2e1"), return_immediately=True
        )
        working = await get_task(client, sent.id)
        done = await get_task(client, sent.id)
        return sent, working, done

    stamps = [t.status.timestamp.ToDatetime() for t in kit.run("test-runner", scenario)]
    # Virtual time from `clock.start`, never the wall clock; each state change takes a new stamp.
    assert all(s.date().isoformat() == "2026-10-06" and s.hour == 9 for s in stamps), stamps
    assert stamps == sorted(stamps) and len(set(stamps)) == 3, stamps


def test_commit_deadbee_fails(kit: Kit) -> None:
    async def scenario(client: Client):
        return await send_task(client, kit.message("Run the tests at deadbee"))

    task = kit.run("test-runner", scenario)

    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "deadbee" in status_text(task)
    [log] = task.artifacts
    assert log.artifact_id == "test-log"
    assert "deadbee" in "".join(texts(log.parts))


def test_a_message_naming_no_commit_tests_head(kit: Kit) -> None:
    async def scenario(client: Client):
        return await send_task(client, kit.message("Run the suite, please"))

    before = len(kit.journal("test-runner"))
    task = kit.run("test-runner", scenario)

    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert status_text(task) == "12 passed"
    summary = {a.artifact_id: a for a in task.artifacts}["summary"]
    assert as_json(summary.parts[0])["data"] == {"passed": 12, "failed": 0}
    assert [e.interaction for e in journal_since(kit, "test-runner", before)] == ["run-head"]


def test_get_task_of_an_unknown_id_is_task_not_found(kit: Kit) -> None:
    async def scenario(client: Client):
        await get_task(client, "no-such-task")

    with pytest.raises(TaskNotFoundError):
        kit.run("test-runner", scenario)


def test_cancel_of_a_completed_task_is_not_cancelable(kit: Kit) -> None:
    async def scenario(client: Client):
        task = await send_task(client, kit.message("Run the tests at 9f3c2e1"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        await client.cancel_task(CancelTaskRequest(id=task.id))

    with pytest.raises(TaskNotCancelableError):
        kit.run("test-runner", scenario)


def test_cancel_of_an_unknown_task_is_task_not_found(kit: Kit) -> None:
    async def scenario(client: Client):
        await client.cancel_task(CancelTaskRequest(id="no-such-task"))

    with pytest.raises(TaskNotFoundError):
        kit.run("test-runner", scenario)


def test_cancel_of_a_running_task_stops_its_script(kit: Kit) -> None:
    async def scenario(client: Client):
        sent = await send_task(
            client, kit.message("Run the tests at 9f3c2e1"), return_immediately=True
        )
        canceled = await client.cancel_task(CancelTaskRequest(id=sent.id))
        later = [await get_task(client, sent.id) for _ in range(3)]
        return sent, canceled, later

    sent, canceled, later = kit.run("test-runner", scenario)

    assert sent.status.state == TaskState.TASK_STATE_SUBMITTED
    assert canceled.id == sent.id
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    for task in later:  # polling a canceled task no longer advances its script
        assert task.status.state == TaskState.TASK_STATE_CANCELED
        assert list(task.artifacts) == []


def test_list_tasks_filters_by_context_and_pages(kit: Kit) -> None:
    context = kit.new_id("ctx")

    async def scenario(client: Client):
        made = [
            await send_task(client, kit.message(text, context_id=context))
            for text in ("Run the tests at 9f3c2e1", "Run the tests at deadbee", "Run the suite")
        ]
        await send_task(client, kit.message("Run the tests at 9f3c2e1"))  # another context
        first = await client.list_tasks(ListTasksRequest(context_id=context, page_size=2))
        second = await client.list_tasks(
            ListTasksRequest(context_id=context, page_size=2, page_token=first.next_page_token)
        )
        with_artifacts = await client.list_tasks(
            ListTasksRequest(context_id=context, include_artifacts=True)
        )
        return made, first, second, with_artifacts

    made, first, second, with_artifacts = kit.run("test-runner", scenario)

    assert all(t.context_id == context for t in made)
    newest_first = [t.id for t in reversed(made)]
    assert [t.id for t in first.tasks] == newest_first[:2]
    assert first.next_page_token, "a page with more after it carries a nextPageToken"
    assert (first.page_size, first.total_size) == (2, 3)
    assert [t.id for t in second.tasks] == newest_first[2:]
    assert second.next_page_token == ""
    assert all(t.context_id == context for t in [*first.tasks, *second.tasks])
    assert all(len(t.artifacts) == 0 for t in [*first.tasks, *second.tasks]), (
        "artifacts are omitted unless includeArtifacts is set"
    )
    assert [t.id for t in with_artifacts.tasks] == newest_first
    assert {t.status.state for t in with_artifacts.tasks} == {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
    }
    assert all(len(t.artifacts) > 0 for t in with_artifacts.tasks)
