"""A subscription in a recording: its events whatever order the proxy hears them in, and its end.

A SubscribeToTask stream and a blocking follow-up (or a poll) on the same task travel on two
connections, and the proxy may hear the follow-up's answer first: its snapshot is recorded as the
steps it shows (the artifact and COMPLETED, say), and the subscription's WORKING event comes
after the task has ended. The subscription's events are what its client saw, one by one, so they
are merged into the steps recorded before them: an event that a recorded step already says
takes that step's place in the order the subscription saw it (with its flags and timing), a
chunk of a recorded artifact splits it, and an event nothing recorded says is inserted where the
subscription saw it. The replayed subscription then shows each event, and the blocking answer
still ends where it did.

A subscription that opens while a message stream plays its task (StreamRecording._subscribed)
gates the next step recorded on the task with `after: {subscribers: N}`: a replay plays the
streamed task up to there, then waits for the subscription, which sees the rest as live.

A subscription cut off (the upstream drops it, the client leaves before the task ended, the
recording stops) becomes an interaction of its own, matching `operation: SubscribeToTask` on the
task once, with no reply and the `fault` that cuts the replayed subscription at the same event;
one the upstream ended cleanly before its task ended, the `fault` that ends it there.

A subscription refused (its first answer an error) on a task the recording knows becomes an
interaction with that `error:` reply, where the replay's own answer would differ: the replay
answers a terminal task's with UnsupportedOperation in its own words, any other with the task.
A task canceled during the recording is no longer among the running ones the proxy subscribes
to, but the recording knows it: its refusal is recorded the same way.

A subscription on a task that had ended (canceled, completed …) answered with a stream instead
(the Task as it is, then the end: an agent may answer so) becomes an interaction matching
`operation: SubscribeToTask` on the task in that state (`task: {state:, from:}`) once, with the
`fault` that ends the replayed stream where the live one ended (`closeAfter: 1` after the
Task, or `dropAfter` where the upstream cut it). The engine answers a subscription that such an
interaction matches with the Task as it is instead of refusing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent.engine.task_ops import not_subscribable
from mockagent.proxy.cancel import replay_refusal, unknown_refused
from mockagent.proxy.recorder import TERMINAL, RecordedTask, Recorder

Place = tuple[list[dict[str, Any]], int]  # a script, and the index of the next step not seen


def merge(recorder: Recorder, place: Place, step: dict[str, Any], after: dict[str, Any]) -> Place:
    """A subscription's event, as `step` (see `step_of`), when steps it has not seen are recorded
    already (see above); `after` is its gap since the stream's last event. The stream's place
    after it."""
    script, at = place
    found = _said(script, at, step)
    if found is None:  # a change the snapshots never showed: where the subscription saw it
        step["after"] = after
        script.insert(at, step)
        recorder.recorded += 1
    else:
        j, rest = found
        known = script.pop(j)
        if rest is not None:  # a chunk of an artifact recorded whole: the rest appends to it
            remainder = {**known, "artifact": {**known["artifact"], "parts": rest}, "append": True}
            script.insert(j, remainder)
            known = {}  # the chunk is a step of its own, before the rest
            recorder.recorded += 1
        for key in ("append", "lastChunk"):
            known.pop(key, None)
        known.update(step)
        known.setdefault("after", after)
        script.insert(at, known)
    return script, at + 1


def step_of(recorder: Recorder, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The step an update says, built on a scratch task: the task's own record of what it
    shows now is ahead of this event and stays so."""
    scratch = RecordedTask(origin="", steps=[])
    if "statusUpdate" in payload:
        step = recorder.state_step(scratch, payload["statusUpdate"].get("status") or {})
    elif "artifactUpdate" in payload:
        update = payload["artifactUpdate"]
        step = recorder.artifact_step(
            scratch,
            update.get("artifact") or {},
            bool(update.get("append")),
            bool(update.get("lastChunk")),
        )
    else:
        return None
    redacted: dict[str, Any] = recorder.redactor.redact(step)
    return redacted


def _said(
    script: list[dict[str, Any]], at: int, step: dict[str, Any]
) -> tuple[int, list[Any] | None] | None:
    """The first step from `at` on that says `step`: (its index, None), or (its index, the
    parts left) when `step` is the first chunk of an artifact the step holds more of."""
    for j in range(at, len(script)):
        known = script[j]
        if "state" in step:
            if known.get("state") == step["state"] and known.get("message") == step.get("message"):
                return j, None
            continue
        artifact = known.get("artifact")
        if not isinstance(artifact, dict):
            continue
        if artifact.get("artifactId") != step["artifact"].get("artifactId"):
            continue
        parts, chunk = artifact.get("parts") or [], step["artifact"].get("parts") or []
        if parts == chunk:
            return j, None
        if len(chunk) < len(parts) and parts[: len(chunk)] == chunk:
            return j, parts[len(chunk) :]
    return None


def subscription_fault(
    recorder: Recorder, task: RecordedTask, fault: dict[str, Any], state: str = ""
) -> dict[str, Any]:
    """The interaction that cuts off one replayed subscription on `task` (in `state`, when
    given) as `fault` says."""
    interaction = _subscription(recorder, task, {}, state)
    del interaction["reply"]  # a subscription answers with the task as it is: only the fault
    times = interaction.pop("times")
    interaction["fault"] = recorder.redactor.redact(fault)
    interaction["times"] = times
    return interaction


def subscription_refused(recorder: Recorder, task: RecordedTask, error: dict[str, Any]) -> None:
    """A SubscribeToTask on `task` answered with `error` (as `recorded_error` writes it; see
    above)."""
    if error != replay_refusal(task, not_subscribable):
        _subscription(recorder, task, {"error": error})


def _subscription(
    recorder: Recorder, task: RecordedTask, reply: dict[str, Any], state: str = ""
) -> dict[str, Any]:
    """A new interaction answering one SubscribeToTask on `task` (in `state`) with `reply`."""
    on = {"state": state, "from": task.origin} if state else {"from": task.origin}
    match = {"operation": "SubscribeToTask", "task": on}
    message = {"parts": [{"text": f"subscribe {task.origin}"}]}
    return recorder.add_interaction(message, reply, match=match)


def refused_unopened(
    recorder: Recorder,
    binding: str,
    kind: str,
    payload: Any,
    task_id: str,
    status: int | None = None,
) -> None:
    """A SubscribeToTask no recording was opened for (a task the recording never saw),
    refused: as `unknown_refused` records it."""
    unknown_refused(recorder, "SubscribeToTask", binding, kind, payload, task_id, status)


@dataclass
class EndedAnswer:
    """A subscription opened on a task that had ended, answered with a stream (see above)."""

    recorder: Recorder
    task: RecordedTask
    state: str  # the state the task ended in
    events: int = 0  # the events its client got
    interaction: dict[str, Any] | None = None

    def saw(self, payload: dict[str, Any]) -> None:
        """One event the client got; the first Task says the state it ended in."""
        self.events += 1
        shown = ((payload.get("task") or {}).get("status") or {}).get("state")
        if self.events == 1 and shown in TERMINAL:
            self.state = shown

    def end(self, fault: dict[str, Any] | None = None) -> dict[str, Any]:
        """The interaction that answers one replayed subscription as this one went: the Task,
        then `fault` (by default, the end after the events the client got)."""
        fault = fault or {"closeAfter": self.events}
        if self.interaction is None:
            self.interaction = subscription_fault(self.recorder, self.task, fault, self.state)
        else:  # the stream was cut after all: the fault says how
            self.interaction["fault"] = self.recorder.redactor.redact(fault)
        return self.interaction


def ended_answer(recorder: Recorder, task_id: str) -> EndedAnswer | None:
    """What a subscription on `task_id` records when the recording saw the task end (canceled
    during the recording, or in a terminal state); None when it has not ended."""
    canceled = recorder.canceled.get(task_id)
    if canceled is not None:
        state = canceled.state if canceled.state in TERMINAL else "TASK_STATE_CANCELED"
        return EndedAnswer(recorder, canceled, state)
    task = recorder.tasks.get(task_id)
    if task is not None and task.state in TERMINAL:
        return EndedAnswer(recorder, task, task.state)
    return None
