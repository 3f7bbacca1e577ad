"""An Agentex task no turn has run on (made by task/create, no message or event yet) that the
platform moves on unseen, and that a poll (GET /tasks/{id}) shows changed, replays as the client
saw it live (issue 17): the poll that showed it shows it, the polls before it do not.

The live platform is tests/helpers/agentex_platform.py; `Platform.settle` ends a task where no
call of the client's moves it. Each scenario is driven by the official client through the
recording proxy, then against the written cassette, and `compare.differences` judges.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from agentex import Agentex

from mockagent.lint.run import lint
from mockagent.verify.compare import differences
from tests.helpers.agentex_fidelity import Settle, record_and_replay, statuses
from tests.helpers.agentex_unseen import timed_out_while_polled


def named_task_failed_while_polled(client: Agentex, settle: Settle) -> None:
    """A named task the replay's store makes alike fails unseen; a poll shows it, then a
    get-or-create finds it as the poll left it."""
    task = client.agents.create_task(agent_name="worker", params={"name": "nightly"}).result
    assert task is not None
    client.tasks.retrieve(task.id)
    if settle is not None:
        settle(task.id, "FAILED")
    client.tasks.retrieve(task.id)
    client.agents.create_task(agent_name="worker", params={"name": "nightly"})
    client.tasks.retrieve(task.id)


def second_of_two_timed_out_while_polled(client: Agentex, settle: Settle) -> None:
    """Two tasks the replay's store makes alike (no name, no status reason); the second times
    out unseen and a poll shows it; the first is polled as it is."""
    first = client.agents.create_task(agent_name="worker", params={}).result
    second = client.agents.create_task(agent_name="worker", params={}).result
    assert first is not None and second is not None
    client.tasks.retrieve(second.id)
    if settle is not None:
        settle(second.id, "TIMED_OUT")
    client.tasks.retrieve(second.id)
    client.tasks.retrieve(first.id)
    client.agents.create_task(agent_name="worker", params={})  # a third, as the store makes it
    client.tasks.retrieve(second.id)


def steps(path: Path) -> list[list[dict]]:
    return [
        i["reply"]["task"]["steps"]
        for i in yaml.safe_load(path.read_text())["interactions"]
        if i["match"].get("operation") == "CreateTask"
    ]


def test_a_poll_shows_what_a_task_without_a_turn_became(tmp_path: Path) -> None:
    path = tmp_path / "polled.yaml"
    live, replay = record_and_replay(path, timed_out_while_polled)
    assert statuses(live) == ["RUNNING", "RUNNING", "TIMED_OUT", "TIMED_OUT"]
    # before: no script recorded the change, so every replayed poll said RUNNING
    assert differences(live, replay) == []
    assert [str(finding) for finding in lint(path)] == []
    assert steps(path) == [
        [
            {"state": "RUNNING", "statusReason": "Task created, forwarding to ACP server"},
            {
                "state": "TIMED_OUT",
                "statusReason": "Task timed out",
                "after": {"polls": 3, "strict": True},
            },
        ]
    ]


def test_a_store_made_named_task_gets_its_create_interaction_when_polled(tmp_path: Path) -> None:
    path = tmp_path / "named.yaml"
    live, replay = record_and_replay(path, named_task_failed_while_polled, forwarded=())
    assert statuses(live) == ["RUNNING", "RUNNING", "FAILED", "FAILED", "FAILED"]
    assert differences(live, replay) == []
    assert [str(finding) for finding in lint(path)] == []
    assert steps(path) == [
        [
            {"state": "RUNNING"},
            {
                "state": "FAILED",
                "statusReason": "Task failed",
                "after": {"polls": 2, "strict": True},
            },
        ]
    ]


def test_store_made_tasks_before_the_polled_one_get_their_create_interactions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store-made.yaml"
    live, replay = record_and_replay(path, second_of_two_timed_out_while_polled, forwarded=())
    assert statuses(live) == ["RUNNING"] * 3 + ["TIMED_OUT", "RUNNING", "RUNNING", "TIMED_OUT"]
    # before: no interaction made the second task, so the replay's polls said RUNNING
    assert differences(live, replay) == []
    assert [str(finding) for finding in lint(path)] == []
    interactions = yaml.safe_load(path.read_text())["interactions"]
    unnamed = {"agent": "worker", "name": {"absent": True}}
    assert [(i["name"], i["match"]["where"]) for i in interactions] == [
        ("create-worker", unnamed),  # the first task's, or it would take the second's
        ("create-worker-2", unnamed),
    ]
    assert steps(path) == [
        [{"state": "RUNNING"}],
        [
            {"state": "RUNNING"},
            {
                "state": "TIMED_OUT",
                "statusReason": "Task timed out",
                "after": {"polls": 2, "strict": True},
            },
        ],
    ]
