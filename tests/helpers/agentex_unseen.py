"""Agentex scenarios in which the platform moves a task on where no call of the client's does
(`Platform.settle`, live only): the recordings of tests/recording/test_agentex_found.py,
test_agentex_polled_untouched.py and the Agentex verify tests."""

from __future__ import annotations

import contextlib
from typing import Any

from agentex import Agentex

from tests.helpers.agentex_fidelity import Settle


def find(client: Agentex) -> Any:
    """A get-or-create of the task named "nightly"."""
    return client.agents.create_task(agent_name="worker", params={"name": "nightly"}).result


def timed_out_before_any_turn(client: Agentex, settle: Settle) -> None:
    """A named task with no turn yet times out unseen; a get-or-create shows it."""
    task = find(client)
    find(client)  # as it was
    client.tasks.retrieve(task.id)
    if settle is not None:
        settle(task.id, "TIMED_OUT")
    find(client)
    client.tasks.retrieve(task.id)
    with contextlib.suppress(Exception):  # refused: the wire keeps the error envelope
        client.agents.cancel_task(agent_name="worker", params={"task_name": "nightly"})


def timed_out_while_polled(client: Agentex, settle: Settle) -> None:
    """A new task is polled twice as it is, times out unseen, and the next poll shows it."""
    task = client.agents.create_task(agent_name="worker", params={}).result
    assert task is not None
    client.tasks.retrieve(task.id)
    client.messages.list(task_id=task.id)
    if settle is not None:
        settle(task.id, "TIMED_OUT")
    client.tasks.retrieve(task.id)
    client.tasks.retrieve(task.id)
    with contextlib.suppress(Exception):  # refused: the wire keeps the error envelope
        client.agents.cancel_task(agent_name="worker", params={"task_id": task.id})
