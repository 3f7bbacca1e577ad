"""CancelTask answered by an interaction, as a recording writes a cancel (issue 17): a script
the canceled task plays to its end, or an error with the agent's text and details. With no such
interaction the task store answers as it always has (tests/unit/test_engine.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mockagent import errors
from mockagent.cassette.models import TaskState
from mockagent.engine import Engine, TaskResult
from mockagent.engine.call import TaskView
from mockagent.lint.run import lint
from mockagent.server.app import create_app
from tests.helpers.cassette_text import cassette
from tests.helpers.engine_calls import send, task_call, texts

INFO = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    "reason": "TASK_NOT_CANCELABLE",
    "domain": "a2a-protocol.org",
    "metadata": {},
}
RECORDED = """
- name: ask
  match: {text: ask}
  reply:
    task:
      steps:
        - {state: TASK_STATE_INPUT_REQUIRED, message: {parts: [{text: Which branch?}]}}
- name: cancel-ask
  match: {operation: CancelTask, task: {from: ask}}
  reply:
    task:
      steps:
        - {state: TASK_STATE_CANCELED, message: {parts: [{text: Canceled}]}}
  times: 1
- name: cancel-ask-2
  match: {operation: CancelTask, task: {state: TASK_STATE_CANCELED, from: ask}}
  reply:
    error:
      name: TaskNotCancelable
      message: "Task {taskId} is done"
      details:
        - {"@type": type.googleapis.com/google.rpc.ErrorInfo, reason: TASK_NOT_CANCELABLE,
           domain: a2a-protocol.org, metadata: {}}
  times: 1
"""


@pytest.fixture
def engine(make_engine: Any) -> Engine:
    return make_engine(RECORDED)


def asked(engine: Engine) -> str:
    outcome = send(engine, "ask")
    assert isinstance(outcome, TaskResult)
    return outcome.task.id


def cancel(engine: Engine, task_id: str) -> TaskView:
    outcome = engine.handle(task_call("CancelTask", id=task_id))
    assert isinstance(outcome, TaskResult)
    return outcome.task


def test_a_scripted_cancel_ends_the_task_as_its_script_says(engine: Engine) -> None:
    task_id = asked(engine)
    task = cancel(engine, task_id)
    assert task.state is TaskState.CANCELED
    assert task.status_message is not None and texts([task.status_message]) == ["Canceled"]
    assert texts(task.history) == ["ask", "Which branch?"]  # the question, superseded
    assert engine.journal.entries[-1].interaction == "cancel-ask"


def test_a_scripted_refusal_names_the_replayed_task_and_keeps_its_details(
    engine: Engine,
) -> None:
    task_id = asked(engine)
    cancel(engine, task_id)
    with pytest.raises(errors.TaskNotCancelable) as refused:
        engine.handle(task_call("CancelTask", id=task_id))
    assert refused.value.message == f"Task {task_id} is done"
    assert refused.value.details == [INFO]
    assert not refused.value.own_info  # the details are all the error carries
    # the interactions are used up: the store refuses as it always has
    with pytest.raises(errors.TaskNotCancelable, match="in terminal state CANCELED") as store:
        engine.handle(task_call("CancelTask", id=task_id))
    assert store.value.metadata == {"taskId": task_id}


def test_a_cancel_matcher_on_a_canceled_task_lints_clean(write_cassette: Any) -> None:
    # messages to an ended task are refused, but a CancelTask on one is answered
    assert lint(write_cassette(cassette(RECORDED))) == []


# -- on the wire: a recorded error's details, in place of mockagent's own ErrorInfo -----------


def rpc(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return client.post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()


@pytest.fixture
def client(tmp_path: Path) -> Any:
    path = tmp_path / "recorded.yaml"
    path.write_text(cassette(RECORDED))
    return create_app(path).test_client()


def test_a_recorded_refusal_is_sent_with_its_own_details(client: Any) -> None:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
    task_id = rpc(client, "SendMessage", {"message": message})["result"]["task"]["id"]
    assert rpc(client, "CancelTask", {"id": task_id})["result"]["status"]["message"]["parts"] == [
        {"text": "Canceled"}
    ]
    error = rpc(client, "CancelTask", {"id": task_id})["error"]
    assert error == {"code": -32002, "message": f"Task {task_id} is done", "data": [INFO]}
    response = client.post(f"/tasks/{task_id}:cancel", headers={"A2A-Version": "1.0"})
    assert response.status_code == 400
    assert response.get_json()["error"]["details"] == [  # the store again: its own ErrorInfo
        {**INFO, "metadata": {"taskId": task_id}}
    ]


def test_a_recorded_refusal_over_rest(client: Any) -> None:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
    sent = client.post("/message:send", json={"message": message}, headers={"A2A-Version": "1.0"})
    task_id = sent.get_json()["task"]["id"]
    for _ in range(2):
        response = client.post(f"/tasks/{task_id}:cancel", headers={"A2A-Version": "1.0"})
    assert response.status_code == 400
    assert response.get_json() == {
        "error": {
            "code": 400,
            "status": "FAILED_PRECONDITION",
            "message": f"Task {task_id} is done",
            "details": [INFO],
        }
    }


UNKNOWN_REFUSED = """
- name: ask
  match: {text: ask}
  reply:
    task:
      steps:
        - {state: TASK_STATE_INPUT_REQUIRED, message: {parts: [{text: Which branch?}]}}
- name: cancel-unknown
  match: {operation: CancelTask, task: {known: false}}
  reply:
    error: {name: TaskNotFound, message: Task not found}
  times: 1
"""


def test_a_refusal_of_a_made_up_id_is_not_used_up_by_a_real_task(make_engine: Any) -> None:
    engine = make_engine(UNKNOWN_REFUSED)
    task = cancel(engine, asked(engine))  # a real task: the store cancels it
    assert task.state is TaskState.CANCELED
    assert engine.journal.entries[-1].interaction is None
    with pytest.raises(errors.TaskNotFound) as refused:
        engine.handle(task_call("CancelTask", id="no-such-task"))
    assert str(refused.value) == "Task not found"  # the recorded refusal, not the store's


def test_known_false_takes_no_state_or_origin(make_engine: Any) -> None:
    with pytest.raises(Exception, match="known: false"):
        make_engine(UNKNOWN_REFUSED.replace("{known: false}", "{known: false, from: ask}"))
