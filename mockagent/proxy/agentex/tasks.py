"""task/create and task/cancel in an Agentex recording: the platform's answers, to replay as they
were.

The replay's task store answers both by itself: a new task is RUNNING with no `status_reason`, a
cancel ends it CANCELED with none, and a cancel of a task that has ended is refused with
mockagent's own text. Where the platform answered otherwise, its answer becomes an interaction
the engine plays instead (as proxy/cancel.py does for A2A), each usable once (`times: 1`):

* a new task: `operation: CreateTask, where: {agent: …}` whose script is one state step,
  `{state: RUNNING, statusReason: …}`. On replay that interaction is the task's origin, so a
  later cancel can name the task by `task: {from: …}`;
* an accepted cancel: `operation: CancelTask, task: {from: …}` with the state step it showed;
* a refused cancel: the same match, with the state the task was refused in, replying with an
  `error:` that carries the platform's message (the task's id in it written `{taskId}`);
* a refused cancel of a task the recording never saw (an id or a name the client made up):
  `operation: CancelTask, task: {known: false}` with the platform's refusal, where the replay's
  store would refuse it in other words.

A get-or-create that finds a task (an existing name) is answered by the store with the task as
its script has it: a state the platform reached without a poll showing it becomes a step of the
task's script (its latest turn's, else its CreateTask interaction's) that waits for that
get-or-create, `after: {finds: N}` (N counted since the script's last step), so that no poll
before it shows it early. A named task the store made alike has no such interaction: one that
matches its name (`where: {name: …}`) is written then, where its task/create came. A poll that
shows a task no turn has run on changed adds to the same script, gated `after: {polls: N,
strict: true}` (`untouched`); a store-made task with no name is then given its interaction
(`where: {name: {absent: true}}`), as is every such task of its agent made before it.
"""

from __future__ import annotations

from typing import Any

from mockagent import errors
from mockagent.cassette.states import TaskState
from mockagent.dialects.agentex.error_table import INVALID_PARAMS
from mockagent.engine.ids import MINTED
from mockagent.engine.replay import TASK_ID
from mockagent.engine.task_ops import not_cancelable, not_found, not_found_by_name
from mockagent.proxy.agentex.known import AgentexTask, KnownTasks, state_step
from mockagent.proxy.recorder import RecordedTask


def record_create(owner: KnownTasks, agent: str | None, result: dict[str, Any]) -> None:
    """An answered task/create: a new task the store would show otherwise is an interaction."""
    task_id = str(result.get("id", ""))
    new = task_id not in owner.tasks
    task = owner.task(task_id, result.get("name"))
    status, reason = str(result.get("status") or task.state), result.get("status_reason")
    if not new:  # get-or-create by name: the task as it is now
        _seen_again(owner, task, status, reason)
        return
    task.state, task.reason = status, reason if isinstance(reason, str) else None
    if status == "RUNNING" and task.reason is None:  # the store answers the same
        name = result.get("name")
        _leave_unwritten(owner, task, agent, name if isinstance(name, str) and name else None)
        return
    match: dict[str, Any] = {"operation": "CreateTask"}
    where: dict[str, Any] = {"agent": agent} if agent else {}
    if isinstance(result.get("name"), str) and result["name"]:
        where["name"] = result["name"]  # only that name's task/create makes it (and verify's)
    if where:
        match["where"] = where
    reply = {"task": {"steps": [state_step(status, reason)]}}
    text = f"create {agent or 'task'}"
    interaction = owner.session.recorder.add_interaction(
        {"parts": [{"text": text}]}, reply, match=match
    )
    task.origin = interaction["name"]
    task.created = RecordedTask(task.origin, interaction["reply"]["task"]["steps"])


def _leave_unwritten(
    owner: KnownTasks, task: AgentexTask, agent: str | None, name: str | None
) -> None:
    """A task the store makes alike: no interaction yet, but the one that would make it (matched
    by its name, as only a get-or-create can find it, or by having none) is kept with where it
    goes, and its script counts the polls and get-or-creates until the task is seen moved on."""
    where: dict[str, Any] = {"agent": agent} if agent else {}
    where["name"] = name if name is not None else {"absent": True}
    recorder = owner.session.recorder
    task.unwritten = {
        "match": {"operation": "CreateTask", "where": where},
        "text": f"create {name or agent or 'task'}",
        "after": recorder.interactions[-1] if recorder.interactions else None,
    }
    task.created = RecordedTask("", [state_step("RUNNING", None)])


def _write_creation(owner: KnownTasks, task: AgentexTask, unwritten: dict[str, Any]) -> None:
    """The CreateTask interaction of a store-made task a get-or-create found moved on: written
    where its task/create came (right after the interaction before it), so that no interaction
    recorded later takes that task/create on replay; from now on it is the task's origin."""
    assert task.created is not None
    recorder = owner.session.recorder
    reply = {"task": {"steps": task.created.steps}}
    interaction = recorder.add_interaction(
        {"parts": [{"text": unwritten["text"]}]}, reply, match=unwritten["match"]
    )
    recorder.interactions.pop()
    before = unwritten["after"]
    at = next((i + 1 for i, x in enumerate(recorder.interactions) if x is before), 0)
    recorder.interactions.insert(at, interaction)
    later = list(owner.tasks.values())
    for other in later[later.index(task) + 1 :]:  # created after it in the same place: after it
        if other.unwritten is not None and other.unwritten["after"] is before:
            other.unwritten["after"] = interaction
    task.origin = task.created.origin = interaction["name"]
    task.created.steps = interaction["reply"]["task"]["steps"]
    task.unwritten = None


def untouched(owner: KnownTasks, task: AgentexTask, first: dict[str, Any]) -> None:
    """A poll showed a task no turn has run on changed: its CreateTask interaction's script
    (a named one the store made is given it now) takes what it showed, the first step `strict`.
    The replay plays a CreateTask script through its plain polls gates as it creates the task,
    as a hand-written one always has; a strict gate holds the step until the polls come."""
    first["after"] = {**first["after"], "strict": True}
    if task.unwritten is None:
        return
    # The tasks made before it that its CreateTask interaction would match too (no name, the
    # same agent) get theirs first, in order, or on replay the first of them would take it.
    for other in list(owner.tasks.values()):
        if other is task:
            break
        if other.unwritten is not None and other.unwritten["match"] == task.unwritten["match"]:
            _write_creation(owner, other, other.unwritten)
    _write_creation(owner, task, task.unwritten)


def _seen_again(owner: KnownTasks, task: AgentexTask, status: str, reason: Any) -> None:
    """A get-or-create that found `task`. The replay's store answers it with the task as its
    script has it and counts it (Runner.find), so a state the platform reached unseen (no poll
    showed it) becomes a step of the script gated by the get-or-creates since its last step:
    neither the polls between them nor an earlier get-or-create shows it. A task canceled (or
    ended by a poll) has no script left to say it in; a named one the store made is given its
    CreateTask interaction now."""
    reason = reason if isinstance(reason, str) else None
    script = (task.record or task.created) if task.scripted else None
    if script is not None:
        script.finds += 1
    if (status, reason) == (task.state, task.reason):
        return
    task.state, task.reason = status, reason
    if script is None:
        return
    step = state_step(status, reason)
    step["after"] = {"finds": script.finds}
    if task.unwritten is not None and script is task.created:
        _write_creation(owner, task, task.unwritten)
    owner.session.recorder.add_steps(script, [step], 0.0)
    if status not in ("RUNNING", "INTERRUPTED"):
        task.scripted = False


def record_cancel(
    owner: KnownTasks, agent: str | None, params: dict[str, Any], payload: Any
) -> None:
    """An answered task/cancel (`payload`: its envelope, a result or an error) on a task the
    recording knows, or refused on one it never saw."""
    ref_id, ref_name = params.get("task_id"), params.get("task_name")
    task_id = ref_id if isinstance(ref_id, str) and ref_id else owner.names.get(str(ref_name), "")
    task = owner.tasks.get(task_id)
    if not isinstance(payload, dict):
        return
    error, result = payload.get("error"), payload.get("result")
    if task is None:
        if isinstance(error, dict):
            _unknown_refused(owner, agent, ref_id, ref_name, error)
        return
    if isinstance(error, dict):
        refusal = _refusal(error, task_id, task.state)
        if refusal is not None:
            _add(owner, agent, task, {"error": refusal}, task.state)
        return
    if not isinstance(result, dict):
        return
    status, reason = str(result.get("status") or "CANCELED"), result.get("status_reason")
    before = task.state
    task.state, task.reason = status, reason if isinstance(reason, str) else None
    task.scripted = False  # what polls show from now on is the cancel, not the script
    if status != "CANCELED" or task.reason is not None:  # else the store answers the same
        _add(owner, agent, task, {"task": {"steps": [state_step(status, reason)]}}, before, True)


def _add(
    owner: KnownTasks,
    agent: str | None,
    task: AgentexTask,
    reply: dict[str, Any],
    state: str,
    accepted: bool = False,
) -> None:
    """An interaction answering one task/cancel on `task`: by its origin, and in `state` for a
    refusal (an accepted cancel came first and answered in another). A task the replay's store
    created with no interaction has no origin: its state alone narrows the match."""
    on: dict[str, Any] = {} if accepted and task.origin else {"state": state}
    if task.origin:
        on["from"] = task.origin
    match: dict[str, Any] = {"operation": "CancelTask"}
    if agent:
        match["where"] = {"agent": agent}
    match["task"] = on
    text = f"cancel {task.origin or agent or 'task'}"
    owner.session.recorder.add_interaction({"parts": [{"text": text}]}, reply, match=match)


def _unknown_refused(
    owner: KnownTasks, agent: str | None, ref_id: Any, ref_name: Any, error: dict[str, Any]
) -> None:
    """A cancel of a task the recording never saw (an id or a name the client made up), refused
    by the platform: an interaction on `task: {known: false}` with its refusal, unless the
    replay's store refuses it in the same words (TaskOperations.known)."""
    message = error.get("message")
    if not isinstance(message, str):
        return
    kind = "InvalidParams" if error.get("code") == INVALID_PARAMS else "TaskNotFound"
    own = not_found(ref_id) if ref_id else not_found_by_name(ref_name)
    if kind == "TaskNotFound" and message == own.message:
        return
    refusal: dict[str, Any] = {"name": kind}
    if message != errors.scripted(kind).message:
        refusal["message"] = message
    # By id or by name, as the call named it: a refusal the store gives alike is not recorded,
    # so a cancel by the other reference must not take this one.
    where: dict[str, Any] = {"agent": agent} if agent else {}
    where["id" if ref_id else "name"] = {"exists": True}
    match = {"operation": "CancelTask", "where": where, "task": {"known": False}}
    owner.session.recorder.add_interaction(
        {"parts": [{"text": "cancel unknown task"}]}, {"error": refusal}, match=match
    )


def _refusal(error: dict[str, Any], task_id: str, state: str) -> dict[str, Any] | None:
    """A refused cancel as a cassette's `error:`; None when the replay's store refuses alike."""
    message = error.get("message")
    if not isinstance(message, str):
        return None
    if MINTED.search(task_id):  # an id, not a word: the replay names its own task there
        message = message.replace(task_id, TASK_ID)
    kind = "InvalidParams" if error.get("code") == INVALID_PARAMS else "TaskNotCancelable"
    try:
        known = TaskState.parse(state)
    except ValueError:
        known = None
    if kind == "TaskNotCancelable" and known is not None and known.terminal:
        if message == not_cancelable(TASK_ID, known).message:
            return None
    out: dict[str, Any] = {"name": kind}
    if message != errors.scripted(kind).message:
        out["message"] = message
    return out
