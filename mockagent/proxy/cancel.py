"""CancelTask in a recording (both bindings): the agent's answer, to replay as it was.

The replay's task store answers a CancelTask by itself: the task ends CANCELED with no status
message, and a task that has ended is refused with mockagent's own text. A recorded agent may
answer otherwise, so its answer on a task the recording knows becomes an interaction that matches
`operation: CancelTask` on that task (`task: {from: …}`) once, where the store would answer
differently:

* an accepted cancel whose snapshot shows more than the bare CANCELED state (a status message,
  an artifact, a message said meanwhile) replies with a script of what it shows;
* a refused cancel replies with the error: its kind, its message unless the kind's default, its
  details unless what the replay sends for the kind by itself. The upstream's task id in them is
  written `{taskId}`: the replay names its own task.

A CancelTask (or SubscribeToTask) on a task the recording never saw, an id the client made up, is
refused by the replay's store with mockagent's TaskNotFound; where the agent refused it in other
words, details or status, an interaction answers the next such call with the agent's refusal.
It matches the operation on a task the replay does not know (`task: {known: false}`: the id is
the client's, not one the recording knows, and a call on a real task must not use it up), once,
in the order the calls came.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockagent import errors
from mockagent.cassette.states import TaskState
from mockagent.dialects.a2a.error_table import TABLE, jsonrpc_error
from mockagent.dialects.a2a.v0_3_rest import REST_ERROR_TYPES
from mockagent.engine.ids import MINTED
from mockagent.engine.replay import TASK_ID
from mockagent.engine.task_ops import not_cancelable, not_found
from mockagent.proxy.recorder import RecordedTask, Recorder
from mockagent.proxy.v0_3_seen import rest_error_body

CANCELED = "TASK_STATE_CANCELED"


def record_cancel(
    recorder: Recorder,
    binding: str,
    params: dict[str, Any],
    result: Any,
    kind: str | None,
    payload: Any,
    status: int = 200,
) -> None:
    """One answered CancelTask: `result` (the task) when accepted, else the error `kind` and
    the answer's `payload` (with its HTTP `status`) that carries the error."""
    task_id = str(params.get("id", ""))
    if kind is None:
        task = recorder.cancelled(task_id)
        if task is not None and isinstance(result, dict):
            _accepted(recorder, task, result)
        return
    canceled = recorder.canceled.get(task_id)
    task = recorder.tasks.get(task_id) or canceled
    if task is None:  # an unknown task: the replay's store refuses it as unknown, in its words
        unknown_refused(recorder, "CancelTask", binding, kind, payload, task_id, status)
        return
    error = recorded_error(binding, kind, payload, task_id, status)
    if error != replay_refusal(task, not_cancelable):
        # A canceled task is refused in that state: the cancel before, answered by the store
        # (no interaction), must not take this refusal on replay. Other refusals go in order
        # (the recording may not have seen the state the agent refused in).
        _add(recorder, task, {"error": error}, CANCELED if task is canceled else "")


def unknown_refused(
    recorder: Recorder,
    operation: str,
    binding: str,
    kind: str,
    payload: Any,
    task_id: str,
    status: int | None = None,
) -> None:
    """`operation` on `task_id`, a task this recording never saw, refused by the agent (see
    above); nothing is recorded where the replay would refuse it the same by itself."""
    if task_id in recorder.tasks or task_id in recorder.canceled:
        return
    error = recorded_error(binding, kind, payload, task_id, status)
    if error == _not_found(task_id):
        return
    verb = "cancel" if operation == "CancelTask" else "subscribe"
    text = f"{verb} unknown task"
    recorder.add_interaction(
        {"parts": [{"text": text}]},
        {"error": error},
        match={"operation": operation, "task": {"known": False}},
    )


def _not_found(task_id: str) -> dict[str, Any]:
    """The replay store's refusal of an id it does not know (TaskOperations.known), as
    `recorded_error` writes an error."""
    return recorded_error(
        "JSONRPC", "TaskNotFound", jsonrpc_error(not_found(task_id), None), task_id
    )


def _accepted(recorder: Recorder, task: RecordedTask, snapshot: dict[str, Any]) -> None:
    steps = recorder.diff(task, snapshot) or [  # the task as it was: a script restates it
        recorder.state_step(task, snapshot.get("status") or {})
    ]
    if steps != [{"state": CANCELED}]:  # else the store answers the same
        _add(recorder, task, {"task": {"steps": steps}})


def _add(recorder: Recorder, task: RecordedTask, reply: dict[str, Any], state: str = "") -> None:
    """An interaction answering one CancelTask on `task` (in `state`, when given)."""
    on = {"state": state, "from": task.origin} if state else {"from": task.origin}
    match = {"operation": "CancelTask", "task": on}
    recorder.add_interaction({"parts": [{"text": f"cancel {task.origin}"}]}, reply, match=match)


def replay_refusal(
    task: RecordedTask, refuse: Callable[[str, TaskState], errors.ProtocolError]
) -> dict[str, Any] | None:
    """How the replay refuses a call on `task` once it has ended (`refuse`: task_ops'
    `not_cancelable` or `not_subscribable`), as `recorded_error` writes an error; None while the
    task has not ended (the replay goes on)."""
    try:
        state = TaskState.parse(task.state)
    except ValueError:
        return None
    if not state.terminal:
        return None
    error = refuse(TASK_ID, state)
    return recorded_error("JSONRPC", error.kind, jsonrpc_error(error, None), TASK_ID)


def recorded_error(
    binding: str, kind: str, payload: Any, task_id: str, status: int | None = None
) -> dict[str, Any]:
    """An error answer as a cassette's `error:`: the kind, and the message, details and (REST)
    HTTP `status` the agent sent where they differ from what the replay sends for `kind` by
    itself, with `task_id` written `{taskId}`. A v0.3 REST `{message, type}` whose `type` no
    kind has (read as Internal) keeps it as the error's one detail, `{type: …}`."""
    typed = rest_error_body(payload)  # v0.3 REST `{message, type}`: it has no details to keep
    error = payload.get("error") if isinstance(payload, dict) else None
    error = typed if error is None else error
    error = _unnamed(error if isinstance(error, dict) else {}, task_id)
    own = jsonrpc_error(errors.scripted(kind), None)["error"]
    out: dict[str, Any] = {"name": kind}
    message = error.get("message")
    if isinstance(message, str) and message and message != own["message"]:
        out["message"] = message
    details = error.get("data" if binding == "JSONRPC" else "details") or []
    written = isinstance(details, list) and all(isinstance(d, dict) for d in details)
    if written and details != own.get("data", []) and typed is None:
        out["details"] = details
    elif typed is not None and payload["type"] != REST_ERROR_TYPES.get(kind):
        out["details"] = [{"type": payload["type"]}]  # a `type` no kind has: sent back as is
    if binding != "JSONRPC" and status in range(400, 600) and status != TABLE[kind].http:
        out["status"] = status  # JSON-RPC errors go with HTTP 200 whatever the agent's kind
    return out


def _unnamed(value: Any, task_id: str) -> Any:
    """`value` with the upstream's task id written `{taskId}` (only an id that looks minted: a
    short one could be any word)."""
    if not MINTED.search(task_id) or task_id == TASK_ID:
        return value
    if isinstance(value, str):
        return value.replace(task_id, TASK_ID)
    if isinstance(value, list):
        return [_unnamed(item, task_id) for item in value]
    if isinstance(value, dict):
        return {key: _unnamed(item, task_id) for key, item in value.items()}
    return value
