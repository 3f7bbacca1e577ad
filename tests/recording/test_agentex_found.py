"""An Agentex get-or-create (task/create of a name that exists) that finds a task the platform
moved on unseen replays as the client saw it live, in the order the client saw it (issue 17).

The live platform is tests/helpers/agentex_platform.py; `Platform.settle` ends a task where no
poll sees it, as an agent working in the background (or the platform's timeout) does. Each
scenario is driven by the official client straight through the recording proxy, then against
the written cassette, and `compare.differences` judges.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from agentex import Agentex

from mockagent.lint.run import lint
from mockagent.verify.compare import differences
from tests.helpers.agentex_fidelity import Settle, record_and_replay, statuses, text
from tests.helpers.agentex_unseen import find, timed_out_before_any_turn


def finished_after_quiet_polls(client: Agentex, settle: Settle) -> None:
    """The agent says one thing, polls see nothing more, it finishes unseen; a get-or-create (the
    second one since its message) shows it."""
    task = find(client)
    client.agents.send_event(
        agent_name="worker",
        params={"task_id": task.id, "content": text("background report")},
    )
    client.messages.list(task_id=task.id)
    find(client)  # as it was
    client.tasks.retrieve(task.id)
    client.tasks.retrieve(task.id)
    if settle is not None:
        settle(task.id, "COMPLETED")
    find(client)
    client.tasks.retrieve(task.id)
    client.messages.list(task_id=task.id)


def chat_timed_out_among_others(client: Agentex, settle: Settle) -> None:
    """A sync agent's named task (one the replay's store makes alike) times out unseen between
    two async tasks' creations; a get-or-create shows it."""
    client.agents.create_task(agent_name="worker", params={})
    task = client.agents.create_task(agent_name="echo-bot", params={"name": "chat"}).result
    assert task is not None
    client.agents.create_task(agent_name="worker", params={})
    client.agents.create_task(agent_name="echo-bot", params={"name": "chat"})  # as it was
    client.tasks.retrieve(task.id)
    if settle is not None:
        settle(task.id, "TIMED_OUT")
    client.agents.create_task(agent_name="echo-bot", params={"name": "chat"})
    client.tasks.retrieve(task.id)


def test_a_get_or_create_shows_what_a_task_without_a_turn_became(tmp_path: Path) -> None:
    path = tmp_path / "timed-out.yaml"
    live, replay = record_and_replay(path, timed_out_before_any_turn)
    assert statuses(live) == ["RUNNING", "RUNNING", "RUNNING", "TIMED_OUT", "TIMED_OUT"]
    # before: the task had no script to move it, so the replay's get-or-create said RUNNING
    assert differences(live, replay) == []
    assert [str(finding) for finding in lint(path)] == []


def test_polls_before_a_get_or_create_do_not_show_what_it_found(tmp_path: Path) -> None:
    path = tmp_path / "quiet-polls.yaml"
    live, replay = record_and_replay(path, finished_after_quiet_polls)
    assert statuses(live) == ["RUNNING", "RUNNING", "RUNNING", "RUNNING", "COMPLETED", "COMPLETED"]
    # before: the second quiet poll already said COMPLETED, one look early
    assert differences(live, replay) == []
    assert [str(finding) for finding in lint(path)] == []
    steps = next(
        i["reply"]["task"]["steps"]
        for i in yaml.safe_load(path.read_text())["interactions"]
        if i["match"].get("operation") == "SendEvent"
    )
    assert steps[-1] == {
        "state": "COMPLETED",
        "statusReason": "Task completed",
        "after": {"finds": 2},
    }


def test_a_task_the_store_made_alike_gets_its_create_interaction_in_place(tmp_path: Path) -> None:
    path = tmp_path / "store-made.yaml"
    live, replay = record_and_replay(path, chat_timed_out_among_others, forwarded=("async",))
    assert statuses(live) == ["RUNNING"] * 5 + ["TIMED_OUT"] * 2
    # before: no interaction made the task, so the replay's get-or-create said RUNNING
    assert differences(live, replay) == []
    assert [str(finding) for finding in lint(path)] == []
    interactions = yaml.safe_load(path.read_text())["interactions"]
    assert [(i["name"], i["match"]["where"]) for i in interactions] == [
        ("create-worker", {"agent": "worker"}),
        ("create-chat", {"agent": "echo-bot", "name": "chat"}),  # where its task/create came
        ("create-worker-2", {"agent": "worker"}),
    ]
    assert interactions[1]["reply"]["task"]["steps"] == [
        {"state": "RUNNING"},
        {"state": "TIMED_OUT", "statusReason": "Task timed out", "after": {"finds": 2}},
    ]
