"""The parts of a recorded subscription, without HTTP: how its events merge into the steps a
blocking answer recorded first, and the cassette form of a subscription that was cut off (a
SubscribeToTask interaction with only a `fault`, used up once) or answered on a task that had
ended."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from mockagent.cassette import json_schema, load_cassette
from mockagent.engine import Engine
from mockagent.errors import CassetteError, UnsupportedOperation
from mockagent.proxy.recorder import Recorder
from mockagent.proxy.turns import open_subscription, open_turn
from tests.helpers.cassette_text import cassette
from tests.helpers.engine_calls import send, send_call, task_call

MakeEngine = Callable[..., Engine]
TASK = {"id": "t1", "contextId": "c1"}


def update(kind: str, **fields: Any) -> dict[str, Any]:
    return {kind: {"taskId": "t1", "contextId": "c1", **fields}}


def chunk(text: str, append: bool = False, last: bool = False) -> dict[str, Any]:
    artifact = {"artifactId": "log", "parts": [{"text": text}]}
    return update("artifactUpdate", artifact=artifact, append=append, lastChunk=last)


def test_a_subscription_behind_a_blocking_answer_splits_its_artifact_into_the_chunks_seen() -> None:
    recorder = Recorder("unit")
    asked = open_turn(recorder, {"message": {"parts": [{"text": "ask me"}]}}, 0.0)
    asked.first({"task": {**TASK, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}, 0.0)
    asked.close()
    subscription = open_subscription(recorder, "t1")
    assert subscription is not None
    subscription.first({"task": {**TASK, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}, 5.0)
    follow_up = open_turn(recorder, {"message": {"taskId": "t1", "parts": [{"text": "go"}]}}, 6.0)
    # the blocking answer reaches the recorder first: the whole artifact, COMPLETED
    artifact = {"artifactId": "log", "parts": [{"text": "a"}, {"text": "b"}]}
    done = {**TASK, "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [artifact]}
    follow_up.first({"task": done}, 20.0)
    follow_up.close()
    for at, event in enumerate(
        [
            update("statusUpdate", status={"state": "TASK_STATE_WORKING"}),
            chunk("a"),
            chunk("b", append=True, last=True),
            update("statusUpdate", status={"state": "TASK_STATE_COMPLETED"}),
        ]
    ):
        subscription.event(event, 30.0 + at)
    steps = recorder.interactions[-1]["reply"]["task"]["steps"]
    assert [{k: v for k, v in s.items() if k != "after"} for s in steps] == [
        {"state": "TASK_STATE_WORKING"},
        {"artifact": {"artifactId": "log", "parts": [{"text": "a"}]}},
        {
            "artifact": {"artifactId": "log", "parts": [{"text": "b"}]},
            "append": True,
            "lastChunk": True,
        },
        {"state": "TASK_STATE_COMPLETED"},
    ]
    assert steps[0]["after"]["polls"] == 1  # as when the subscription is heard first


SUBSCRIPTION_FAULT = """
    - name: ask-me
      match: {text: ask me}
      reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED}]}}
    - name: subscribe-ask-me
      match: {operation: SubscribeToTask, task: {from: ask-me}}
      fault: {dropAfter: 2}
      times: 1
"""


def refusals(tmp_path: Path, interactions: str) -> tuple[list[str], str | None]:
    """What the JSON Schema and the loader say of a cassette with these interactions."""
    text = cassette(interactions)
    data = json.loads(json.dumps(yaml.safe_load(text), default=lambda d: d.isoformat()))
    validator = Draft202012Validator(json.loads(json_schema()))
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_cassette(path)
    except CassetteError as exc:
        return [e.message for e in validator.iter_errors(data)], str(exc)
    return [e.message for e in validator.iter_errors(data)], None


def test_a_fault_alone_answers_a_subscription_and_nothing_else(tmp_path: Path) -> None:
    assert refusals(tmp_path, SUBSCRIPTION_FAULT) == ([], None)
    for operation in ("SendStreamingMessage", "[SubscribeToTask, SendStreamingMessage]"):
        interaction = f"- {{name: s, match: {{operation: {operation}}}, fault: {{dropAfter: 2}}}}"
        schema, loader = refusals(tmp_path, interaction)
        assert schema != [] and loader is not None and "an interaction needs a `reply`" in loader


def test_a_recorded_subscription_fault_cuts_off_one_subscription(make_engine: MakeEngine) -> None:
    engine = make_engine(SUBSCRIPTION_FAULT)
    task_id = send(engine, "ask me").task.id  # type: ignore[union-attr]
    first = engine.stream(task_call("SubscribeToTask", id=task_id))
    second = engine.stream(task_call("SubscribeToTask", id=task_id))
    assert first.fault is not None and first.fault.dropAfter == 2
    assert second.fault is None  # `times: 1`: the live client's next subscription was whole


ENDED = """
    - name: build
      match: {text: build}
      reply: {task: {steps: [{state: TASK_STATE_COMPLETED}]}}
    - name: subscribe-build
      match: {operation: SubscribeToTask, task: {state: TASK_STATE_COMPLETED, from: build}}
      fault: {closeAfter: 1}
      times: 1
"""


def test_an_interaction_naming_the_ended_state_answers_a_subscription_with_the_task(
    make_engine: MakeEngine,
) -> None:
    engine = make_engine(ENDED)
    task_id = send(engine, "build").task.id  # type: ignore[union-attr]
    answered = engine.stream(task_call("SubscribeToTask", id=task_id))
    assert answered.first.task.state.name == "COMPLETED"  # type: ignore[union-attr]
    assert list(answered.events()) == [] and answered.fault is not None
    with pytest.raises(UnsupportedOperation):  # `times: 1`: the next one is refused as ever
        engine.stream(task_call("SubscribeToTask", id=task_id))


def test_a_stream_on_a_canceled_task_cut_off_is_recorded_in_that_state() -> None:
    recorder = Recorder("unit")
    asked = open_turn(recorder, {"message": {"parts": [{"text": "ask me"}]}}, 0.0)
    asked.first({"task": {**TASK, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}, 0.0)
    asked.close()
    recorder.cancelled("t1")
    subscription = open_subscription(recorder, "t1")
    assert subscription is not None
    subscription.first({"task": {**TASK, "status": {"state": "TASK_STATE_CANCELED"}}}, 5.0)
    subscription.close()
    subscription.cut_off({"dropAfter": 1})
    ended = recorder.interactions[-1]
    assert ended["match"]["task"] == {"state": "TASK_STATE_CANCELED", "from": "ask-me"}
    assert ended["fault"] == {"dropAfter": 1} and "reply" not in ended
    assert len(recorder.interactions) == 2  # one interaction, and the script is untouched
    assert recorder.interactions[0]["reply"]["task"]["steps"] == [
        {"state": "TASK_STATE_INPUT_REQUIRED"}
    ]


AWAITED = """
    - name: build
      match: {text: build}
      reply:
        task:
          steps:
            - state: TASK_STATE_SUBMITTED
            - state: TASK_STATE_WORKING
              after: {subscribers: 1}
            - state: TASK_STATE_COMPLETED
"""


def test_a_streamed_task_waits_at_a_subscribers_gate_for_the_subscription(load: Any) -> None:
    engine = Engine(load(cassette(AWAITED)), pace="instant")
    try:
        streamed = engine.stream(send_call("build", operation="SendStreamingMessage"))
        task_id = streamed.first.task.id  # type: ignore[union-attr]
        shown = engine.handle(task_call("GetTask", id=task_id))
        assert shown.task.state.name == "SUBMITTED"  # type: ignore[union-attr]
        subscribed = engine.stream(task_call("SubscribeToTask", id=task_id))
        assert subscribed.first.task.state.name == "SUBMITTED"  # type: ignore[union-attr]
        states = [e.state.name for e in subscribed.events() if e is not None and e.state]
        assert states == ["WORKING", "COMPLETED"]
    finally:
        engine.close()
