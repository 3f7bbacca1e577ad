"""docs/recording.md's recorded `agent.history` example replays as the paragraph after it says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mockagent.cassette import TaskState, load_cassette
from mockagent.engine import Engine, TaskResult, TaskView
from tests.helpers.cassette_text import HEADER
from tests.helpers.docs import block
from tests.helpers.engine_calls import send, texts

# Not in the page's excerpt: a follow-up on the task, answered with the task as it was.
FOLLOW_UP = {
    "name": "main",
    "match": {"task": {"from": "ask-me"}},
    "reply": {
        "task": {
            "first": "task-as-is",
            "steps": [{"state": "TASK_STATE_COMPLETED", "after": {"polls": 1}}],
        }
    },
}


def task_of(outcome: Any) -> TaskView:
    assert isinstance(outcome, TaskResult), outcome
    return outcome.task


def test_the_recorded_history_example_replays_as_described(tmp_path: Path) -> None:
    example = yaml.safe_load(block("docs/recording.md", "yaml", "statusMessage: when-set").text)
    cassette = yaml.safe_load(HEADER)
    cassette["agent"]["history"] = example["agent"]["history"]
    cassette["interactions"] = [*example["interactions"], FOLLOW_UP]
    path = tmp_path / "quirky.yaml"
    path.write_text(yaml.safe_dump(cassette), encoding="utf-8")
    engine = Engine(load_cassette(path))

    asked = task_of(send(engine, "ask me"))
    assert texts(asked.history) == ["ask me", "Working on ask me", "Which branch?"]
    assert asked.history is not None and asked.history[-1] == asked.status_message

    answer = task_of(
        send(engine, "main", task_id=asked.id, configuration={"returnImmediately": True})
    )
    assert answer.state is TaskState.INPUT_REQUIRED
    assert answer.status_message == asked.status_message
    assert texts(answer.history) == [*texts(asked.history), "main"]
