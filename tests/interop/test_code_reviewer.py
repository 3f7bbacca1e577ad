"""code-reviewer through the official a2a-sdk client: direct replies, INPUT_REQUIRED follow-ups,
content-type refusal, unmatched calls."""

from __future__ import annotations

import pytest
from a2a.client import Client
from a2a.types import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    ListTasksRequest,
    Part,
    Role,
    TaskState,
    UnsupportedOperationError,
)

from tests.helpers.interop import Kit, journal_since, send, send_task, status_text, texts

DIFF = (
    "--- a/app/config.py\n"
    "+++ b/app/config.py\n"
    "@@ -1,3 +1,4 @@\n"
    " def parse_config(path):\n"
    "-    with open(path) as f:\n"
    "+    f = open(path)\n"
    "+    retries = 3\n"
)


def diff_part() -> Part:
    return Part(text=DIFF, media_type="text/x-diff", filename="change.diff")


def test_a_question_gets_a_direct_message_and_no_task(kit: Kit) -> None:
    question = kit.message("Which languages do you review?")

    async def scenario(client: Client):
        response = await send(client, question)
        listed = await client.list_tasks(ListTasksRequest(context_id=response.message.context_id))
        return response, listed

    before = len(kit.journal("code-reviewer"))
    response, listed = kit.run("code-reviewer", scenario)

    assert response.HasField("message") and not response.HasField("task")
    reply = response.message
    assert reply.role == Role.ROLE_AGENT
    assert "Python" in "".join(texts(reply.parts))
    assert reply.message_id and reply.message_id != question.message_id
    assert reply.context_id, "a direct reply still carries a contextId for follow-ups"
    assert not reply.task_id
    assert list(listed.tasks) == [], "a direct reply creates no task"
    entries = journal_since(kit, "code-reviewer", before)
    assert [(e.operation, e.interaction, e.matched) for e in entries][0] == (
        "SendMessage",
        "languages",
        True,
    )
    assert entries[0].binding == kit.binding


def test_a_diff_asks_for_the_base_branch_then_completes_on_the_same_task(kit: Kit) -> None:
    async def scenario(client: Client):
        asked = await send_task(client, kit.message("Please review this change", diff_part()))
        answer = kit.message("main", task_id=asked.id, context_id=asked.context_id)
        done = await send_task(client, answer)
        return asked, answer, done

    before = len(kit.journal("code-reviewer"))
    asked, answer, done = kit.run("code-reviewer", scenario)

    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "base branch" in status_text(asked)
    assert asked.status.message.role == Role.ROLE_AGENT
    assert list(asked.artifacts) == []

    assert (done.id, done.context_id) == (asked.id, asked.context_id)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert status_text(done) == "Review ready: 2 issues, 1 nit"
    [review] = done.artifacts
    assert (review.artifact_id, review.name) == ("review", "review.md")
    assert review.parts[0].media_type == "text/markdown"
    assert review.parts[0].text.startswith("## Review")

    entries = journal_since(kit, "code-reviewer", before)
    assert [e.interaction for e in entries] == ["review", "base-branch"]


def test_task_history_holds_both_user_turns_in_order(kit: Kit) -> None:
    first = kit.message("Please review this change", diff_part())

    async def scenario(client: Client):
        asked = await send_task(client, first)
        answer = kit.message("main", task_id=asked.id, context_id=asked.context_id)
        done = await send_task(client, answer)
        return answer, done

    answer, done = kit.run("code-reviewer", scenario)

    ids = [m.message_id for m in done.history]
    assert first.message_id in ids and answer.message_id in ids
    assert ids.index(first.message_id) < ids.index(answer.message_id)
    user_turns = [m for m in done.history if m.role == Role.ROLE_USER]
    assert [m.message_id for m in user_turns] == [first.message_id, answer.message_id]
    # The agent's question came before the user's answer, so history shows it before the answer.
    question = [i for i, m in enumerate(done.history) if "base branch" in "".join(texts(m.parts))]
    assert question, "the INPUT_REQUIRED question belongs to the task's history"
    assert question[0] < ids.index(answer.message_id)


def test_a_follow_up_with_another_context_id_is_invalid(kit: Kit) -> None:
    async def scenario(client: Client):
        asked = await send_task(client, kit.message("Please review this change", diff_part()))
        await send(client, kit.message("main", task_id=asked.id, context_id="some-other-context"))

    with pytest.raises(InvalidParamsError):
        kit.run("code-reviewer", scenario)


def test_a_message_to_a_completed_task_is_an_unsupported_operation(kit: Kit) -> None:
    async def scenario(client: Client):
        asked = await send_task(client, kit.message("Please review this change", diff_part()))
        done = await send_task(
            client, kit.message("main", task_id=asked.id, context_id=asked.context_id)
        )
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        await send(
            client, kit.message("And the tests?", task_id=done.id, context_id=done.context_id)
        )

    with pytest.raises(UnsupportedOperationError):
        kit.run("code-reviewer", scenario)


def test_an_unsupported_content_type_is_refused(kit: Kit) -> None:
    picture = Part(raw=b"\x89PNG\r\n\x1a\n", media_type="image/png", filename="screenshot.png")

    async def scenario(client: Client):
        await send(client, kit.message("What is wrong in this screenshot?", picture))

    before = len(kit.journal("code-reviewer"))
    with pytest.raises(ContentTypeNotSupportedError):
        kit.run("code-reviewer", scenario)
    [entry] = journal_since(kit, "code-reviewer", before)
    assert entry.interaction == "unsupported-content"


def test_an_unmatched_message_raises_an_error_naming_the_closest_interaction(kit: Kit) -> None:
    # No diff and no question mark: neither `languages` nor `review` answers it.
    async def scenario(client: Client):
        await send(client, kit.message("Which languages do you review"))

    before = len(kit.journal("code-reviewer"))
    with pytest.raises(UnsupportedOperationError) as caught:
        kit.run("code-reviewer", scenario)

    # a2a-sdk puts the error's message in the exception: the near-miss report, which names the
    # interaction that nearly matched and what differed.
    message = str(caught.value)
    assert "languages" in message and 'endswith "?"' in message, message
    [entry] = journal_since(kit, "code-reviewer", before)
    assert not entry.matched and entry.interaction is None
    assert entry.report is not None
    assert "languages" in [c.name for c in entry.report.closest]
