"""deployer through the official a2a-sdk client: AUTH_REQUIRED until approved, REJECTED for
production, cancel of an interrupted task, and the extended card."""

from __future__ import annotations

import pytest
from a2a.client import Client
from a2a.types import (
    CancelTaskRequest,
    ExtendedAgentCardNotConfiguredError,
    GetExtendedAgentCardRequest,
    TaskNotCancelableError,
    TaskState,
    UnsupportedOperationError,
)

from tests.helpers.interop import (
    Kit,
    data_part,
    get_task,
    journal_since,
    send_task,
    status_text,
    texts,
)

DEPLOY_LOG = [
    "pulling image registry.example.com/shop:1.4.2\n",
    "rolling out 3/3 replicas\n",
    "health check passed\n",
]


def test_a_deploy_waits_for_approval_then_completes(kit: Kit) -> None:
    async def scenario(client: Client):
        waiting = await send_task(client, kit.message("Deploy build 1.4.2 to staging"))
        approval = kit.message(
            None, data_part({"approved": True}), task_id=waiting.id, context_id=waiting.context_id
        )
        done = await send_task(client, approval)
        return waiting, done

    before = len(kit.journal("deployer"))
    waiting, done = kit.run("deployer", scenario)

    assert waiting.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert "approve" in status_text(waiting)
    assert list(waiting.artifacts) == []

    assert (done.id, done.context_id) == (waiting.id, waiting.context_id)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert status_text(done) == "Build 1.4.2 is live on staging"
    [log] = done.artifacts
    assert (log.artifact_id, log.name) == ("deploy-log", "deploy-log.txt")
    assert texts(log.parts) == DEPLOY_LOG
    assert [e.interaction for e in journal_since(kit, "deployer", before)] == ["deploy", "approved"]


def test_a_follow_up_without_approval_gets_a_reminder_then_text_approval_works(kit: Kit) -> None:
    async def scenario(client: Client):
        waiting = await send_task(client, kit.message("Deploy build 1.4.2 to staging"))
        nudge = await send_task(
            client,
            kit.message("Is it done yet?", task_id=waiting.id, context_id=waiting.context_id),
        )
        polled = await get_task(client, waiting.id)
        done = await send_task(client, kit.message("approve", task_id=waiting.id))
        return waiting, nudge, polled, done

    before = len(kit.journal("deployer"))
    waiting, nudge, polled, done = kit.run("deployer", scenario)

    assert nudge.id == waiting.id
    assert nudge.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert status_text(nudge).startswith("Still waiting for approval")
    assert polled.status.state == TaskState.TASK_STATE_AUTH_REQUIRED, "polling does not approve"
    assert done.id == waiting.id and done.context_id == waiting.context_id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert [e.interaction for e in journal_since(kit, "deployer", before)] == [
        "deploy",
        "approval-reminder",
        None,
        "approved-by-text",
    ]


def test_a_production_deploy_is_rejected(kit: Kit) -> None:
    async def scenario(client: Client):
        return await send_task(client, kit.message("Deploy build 1.4.2 to production"))

    task = kit.run("deployer", scenario)

    assert task.status.state == TaskState.TASK_STATE_REJECTED
    assert "Production deploys are frozen" in status_text(task)
    assert list(task.artifacts) == []


def test_cancel_of_a_task_waiting_for_approval(kit: Kit) -> None:
    async def scenario(client: Client):
        waiting = await send_task(client, kit.message("Deploy build 1.4.2 to staging"))
        canceled = await client.cancel_task(CancelTaskRequest(id=waiting.id))
        again = None
        try:
            await client.cancel_task(CancelTaskRequest(id=waiting.id))
        except TaskNotCancelableError as exc:
            again = exc
        try:
            await send_task(client, kit.message("approve", task_id=waiting.id))
        except UnsupportedOperationError as exc:
            return waiting, canceled, again, exc
        return waiting, canceled, again, None

    waiting, canceled, again, late_approval = kit.run("deployer", scenario)

    assert waiting.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert canceled.id == waiting.id
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert again is not None, "a canceled task is terminal: a second cancel is TaskNotCancelable"
    assert late_approval is not None, "a canceled task accepts no more messages"


def test_the_extended_card_adds_the_admin_skill(kit: Kit) -> None:
    async def scenario(client: Client):
        return await client.get_extended_agent_card(GetExtendedAgentCardRequest())

    card = kit.run("deployer", scenario)

    # The public card has one skill: two mean the client fetched the extended card.
    assert card.name == "deployer"
    assert [s.id for s in card.skills] == ["deploy", "rollback"]
    assert card.description.endswith("operators can roll back.")
    assert card.capabilities.extended_agent_card
    assert [i.protocol_binding for i in card.supported_interfaces] == [
        "JSONRPC",
        "HTTP+JSON",
        "GRPC",
    ]


def test_the_public_card_lists_every_interface_in_binding_order(kit: Kit) -> None:
    card = kit.card("deployer")

    assert card.name == "deployer"
    assert [s.id for s in card.skills] == ["deploy"]
    assert [(i.protocol_binding, i.url, i.protocol_version) for i in card.supported_interfaces] == [
        ("JSONRPC", kit.agent_url("deployer"), "1.0"),
        ("HTTP+JSON", kit.agent_url("deployer"), "1.0"),
        ("GRPC", kit.server.grpc_target, "1.0"),
    ]
    assert card.supported_interfaces[2].tenant == "deployer", "a folder's agents: gRPC tenants"
    assert card.capabilities.extended_agent_card
    assert card.capabilities.streaming and not card.capabilities.push_notifications
    assert list(card.default_input_modes) == ["text/plain", "application/json"]


def test_an_agent_without_an_extended_card_refuses_to_serve_one(kit: Kit) -> None:
    # The client answers from its cached card when the card declares no extended card, so give
    # it a card that claims one, to make it ask code-reviewer, which has none.
    card = kit.card("code-reviewer")
    assert not card.capabilities.extended_agent_card
    card.capabilities.extended_agent_card = True

    async def scenario(client: Client):
        await client.get_extended_agent_card(GetExtendedAgentCardRequest())

    with pytest.raises((UnsupportedOperationError, ExtendedAgentCardNotConfiguredError)):
        kit.run("code-reviewer", scenario, card=card)
