"""One turn of a recording: the answer to a message (or a subscription) as it arrives."""

from __future__ import annotations

from typing import Any

from mockagent.proxy.recorder import RecordedTask, Recorder, content
from mockagent.proxy.status_history import requested_length
from mockagent.proxy.subscriptions import (
    EndedAnswer,
    Place,
    ended_answer,
    merge,
    step_of,
    subscription_fault,
    subscription_refused,
)


class StreamRecording:
    """One answer to a message (or a subscription) as it arrives: the first result, then events.

    A follow-up's interaction is opened when the request goes out, not when its answer comes
    back: events that a subscription sees meanwhile belong to this turn of the conversation.
    """

    def __init__(
        self,
        recorder: Recorder,
        message: dict[str, Any] | None,
        at_ms: float,
        task: RecordedTask | None = None,
        streamed: bool = False,
        history_length: int | None = None,
    ) -> None:
        self.recorder = recorder
        self.history_length = history_length  # the message's request asked for no more history
        self.streamed = streamed  # a SendStreamingMessage: its first answer opens a stream
        self.message = message
        self.task = task
        self.last_ms = at_ms
        self.interaction: dict[str, Any] | None = None
        # What a subscriber sees first waits for the client: on replay, a task answered at once
        # must not run ahead by itself before anyone looks (a subscription ignores polls gates).
        self.gate_next = message is None
        follow_up = (message or {}).get("taskId")
        # the client's value: a list or an object is no task id (and no key to look up)
        known = follow_up if isinstance(follow_up, str) else ""
        self.follow_up = recorder.tasks.get(known) if known else None
        self._previous_steps: list[dict[str, Any]] | None = None
        # A stream's place in its task's scripts: the script and the index of the next step it
        # has not seen. Steps past it were seen by others first (a blocking answer, a poll, a
        # subscription beside a message stream, or the other way round): the stream's events
        # are merged into them, not appended after them.
        self.place: Place | None = None
        self.seen = ""  # the last state this subscription showed its client
        self.refused = False  # a subscription answered with an error
        self.ended: EndedAnswer | None = None  # a subscription on a task that had ended
        self.streaming = False  # a message stream open on its task (RecordedTask.streams)
        if self.follow_up is not None:
            self.task = self._open_task("")

    def discard(self) -> None:
        """The upstream never answered: forget the interaction this recording opened."""
        if self.interaction is None:
            return
        self.recorder.remove_interaction(self.interaction)
        if self.streaming and self.task is not None:
            self.task.streams -= 1
            self.streaming = False
        if self.follow_up is not None and self._previous_steps is not None:
            self.follow_up.steps = self._previous_steps
        self.interaction = None

    def _answer(self, reply: dict[str, Any]) -> None:
        """A reply that is not a script: into the opened interaction, or a new one."""
        if self.interaction is not None:
            self.interaction["reply"] = self.recorder.redactor.redact(reply)
        elif self.message is not None:
            self.recorder.add_interaction(self.message, reply, self.follow_up)

    def error(self, error: dict[str, Any]) -> None:
        """The upstream answered the message (or the subscription) with a protocol error
        (`recorded_error`'s `error:`: written as the bare name when nothing else in it is the
        agent's own)."""
        if self.message is None:
            self.refused = True
            if self.task is not None:
                subscription_refused(self.recorder, self.task, error)
            return
        self._answer({"error": error["name"] if set(error) == {"name"} else error})

    def first(self, result: dict[str, Any], at_ms: float) -> None:
        """The first answer: a Message, a Task snapshot, or (a2a-sdk on a follow-up) an update."""
        if self.ended is not None:  # the task changes no more: what it shows is no step
            self.ended.saw(result)
            self.seen = self.ended.state
            return
        recorder = self.recorder
        if "message" in result:
            self._answer({"message": content(result["message"])})
            if self.follow_up is not None:  # the replay keeps a reply on a task in its history
                self.follow_up.said.append(content(result["message"]))
            return
        update = result.get("statusUpdate") or result.get("artifactUpdate")
        snapshot = None if update is not None else result.get("task", result)
        if self.task is None:
            self.task = self._open_task(
                str((snapshot or {}).get("id") or (update or {}).get("taskId", ""))
            )
        task = self.task
        if snapshot is not None:
            self._task_metadata(snapshot)
            steps = self._snapshot_steps(task, snapshot)
            if not steps and not task.state:  # a new task always starts with its state
                steps = [recorder.state_step(task, snapshot.get("status") or {})]
            if (
                steps and self.message is None
            ):  # a subscription: what happened since the last sighting
                steps[0]["after"] = self.after(at_ms - task.since_ms)
            recorder.add_steps(task, steps, at_ms)
            self.seen = str((snapshot.get("status") or {}).get("state", ""))
            if self.streamed and len(steps) > 1:  # one Task showed them: so does the replay's
                self._first_steps(len(steps))
        if self.message is None:
            self._subscribed(task)
        if self.message is None or (self.streamed and snapshot is not None):
            self.place = (task.steps, len(task.steps))
        if self.streamed and not self.streaming:
            self.streaming = True
            task.streams += 1
        self.last_ms = at_ms
        if update is not None:
            self._opened_with("update")
            self.event(result, at_ms)

    def _task_metadata(self, snapshot: dict[str, Any]) -> None:
        """Write the metadata of the task a message started as its reply's `task.metadata`: the
        replay's Task carries it, as the agent's did."""
        reply = (self.interaction or {}).get("reply") or {}
        metadata = snapshot.get("metadata")
        if self.message is not None and self.follow_up is None and "task" in reply and metadata:
            reply["task"]["metadata"] = metadata

    def _subscribed(self, task: RecordedTask) -> None:
        """A subscription opened: counted as the replay counts them. Opened while a message
        stream plays the task, the next step waits for it on replay (`after.subscribers`)."""
        task.subscriptions += 1
        if task.streams:
            task.awaited = task.subscriptions

    def _snapshot_steps(self, task: RecordedTask, snapshot: dict[str, Any]) -> list[dict[str, Any]]:
        """The steps a first snapshot shows. A follow-up's that shows the task as it was (the
        same state, nothing new said or made; a status message moved to history is no news) is
        no step: the answer opened with the task as it is, and the reply says so."""
        if self.follow_up is None:
            return self.recorder.diff(task, snapshot, self.history_length)
        steps = self._follow_up_steps(snapshot)
        if not steps:
            self._opened_with("task-as-is")
        return steps

    def _first_steps(self, count: int) -> None:
        """Write that the Task opening the stream shows `count` steps (`firstSteps`)."""
        reply = (self.interaction or {}).get("reply") or {}
        if self.message is not None and "task" in reply and "first" not in reply["task"]:
            reply["task"]["firstSteps"] = count

    def _opened_with(self, opening: str) -> None:
        """Write how the answer to a message opened as its reply's `first` (`task` is unset)."""
        reply = (self.interaction or {}).get("reply") or {}
        if self.message is not None and "task" in reply:
            reply["task"] = {"first": opening, **reply["task"]}  # the same `steps` list

    def _follow_up_steps(self, snapshot: dict[str, Any]) -> list[dict[str, Any]]:
        """What changed since the task asked for this message, as the replay would see it.

        The engine, as a2a-sdk's agents do, moves the status message into history when the
        message arrives, unless this answer shows the agent kept it as the status. A snapshot
        that shows the task as it was (a returnImmediately answer, before the agent moves on) is
        no step: restating INPUT_REQUIRED would stop the replay there."""
        task = self.follow_up
        assert task is not None
        state, asked = task.state, task.status
        task_id = str((self.message or {}).get("taskId", ""))
        if not self.recorder.status_history.kept_after_answer(task_id, snapshot):
            task.status = task.message = None
        steps = self.recorder.diff(task, snapshot, self.history_length)
        if len(steps) == 1 and steps[0].get("state") == state and task.status in (None, asked):
            steps = []
        return steps

    def _open_task(self, upstream_id: str) -> RecordedTask:
        """The interaction this message starts: a new task's, or a follow-up's on a known task."""
        recorder = self.recorder
        assert self.message is not None
        if self.follow_up is not None:  # continue from what the task showed before
            task = self.follow_up
            self._previous_steps = task.steps
            self.interaction = recorder.add_interaction(self.message, {"task": {"steps": []}}, task)
        else:
            self.interaction = recorder.add_interaction(self.message, {"task": {"steps": []}})
            task = RecordedTask(origin=self.interaction["name"], steps=[])
            recorder.tasks[upstream_id] = task
        task.steps = self.interaction["reply"]["task"]["steps"]
        if self.streamed:  # a subscription beside this stream may record its events first
            self.place = (task.steps, 0)
            if self.follow_up is not None:  # it plays the task from the request on
                self.streaming = True
                task.streams += 1
        return task

    def after(self, ms: float) -> dict[str, Any]:
        """The `after` of a step seen `ms` after the one before (a subscriber's first waits for
        the client, unless a message stream plays the task: the stream, hearing the step first,
        writes no gate, and the recording must not depend on which connection came first)."""
        if self.gate_next:
            self.gate_next = False
            if self.task is None or not self.task.streams:
                return {"polls": 1, "ms": round(ms)}
        return {"ms": round(ms)}

    def event(self, payload: dict[str, Any], at_ms: float) -> None:
        """A statusUpdate or artifactUpdate after the first answer."""
        task = self.task
        if self.ended is not None:
            self.ended.saw(payload)
            return
        if task is None:
            return
        behind = self._behind(task)
        if behind is not None:  # others saw this task further already: merge, do not append
            self._merge(behind, payload, at_ms)
            return
        if "statusUpdate" in payload:
            update = payload["statusUpdate"]
            status = update.get("status") or {}
            self.recorder.status_history.saw_status(str(update.get("taskId", "")), status)
            step = self.recorder.state_step(task, status)
            self.seen = task.state
        elif "artifactUpdate" in payload:
            update = payload["artifactUpdate"]
            step = self.recorder.artifact_step(
                task,
                update.get("artifact") or {},
                bool(update.get("append")),
                bool(update.get("lastChunk")),
            )
        else:  # a Task resent mid-stream changes nothing a step could say
            return
        step["after"] = self.after(at_ms - self.last_ms)
        self.recorder.add_steps(task, [step], at_ms)
        self.last_ms = at_ms
        if self.place is not None:
            self.place = (task.steps, len(task.steps))

    def _merge(self, place: Place, payload: dict[str, Any], at_ms: float) -> None:
        """An event merged into steps others saw first (`subscriptions.merge`)."""
        step = step_of(self.recorder, payload)
        if step is None:  # a Task resent mid-stream changes nothing a step could say
            return
        after = self.after(at_ms - self.last_ms)
        self.last_ms = at_ms
        self.seen = step.get("state", self.seen)
        self.place = merge(self.recorder, place, step, after)

    def _behind(self, task: RecordedTask) -> Place | None:
        """A subscription's place when steps it has not seen are recorded already, else None.

        A subscription at the end of a script the task has left (a follow-up opened a new
        one) goes on at the start of the task's current script."""
        if self.place is None:
            return None
        script, at = self.place
        if at >= len(script) and script is not task.steps:
            script, at = task.steps, 0
            self.place = (script, at)
        rest = script[at:]
        if not rest or (len(rest) == 1 and rest[0] is task.placeholder):
            return None  # a placeholder only restates the state: the event replaces it
        return script, at

    def cut_off(self, fault: dict[str, Any]) -> dict[str, Any] | None:
        """The interaction that carries `fault`, where this answer's stream was cut: the
        message's own, or (a subscription has none) a new one that cuts one replayed
        subscription off."""
        if self.ended is not None:
            return self.ended.end(fault)
        if self.message is None:  # a subscription has no interaction of its own
            task = self.task
            return None if task is None else subscription_fault(self.recorder, task, fault)
        if self.interaction is not None:
            self.interaction["fault"] = self.recorder.redactor.redact(fault)
        return self.interaction

    def close(self) -> None:
        """The answer is complete: a script that got no step at all shows the task's state.

        On a follow-up that step is a placeholder: the first change a later poll sees replaces
        it, so the script does not restate the state the task is already in."""
        if self.ended is not None and not self.refused:
            self.ended.end()
            return
        if self.streaming and self.task is not None:
            self.task.streams -= 1
            self.streaming = False
        reply = (self.interaction or {}).get("reply") or {}
        task = self.task
        if "task" in reply and not reply["task"]["steps"] and task is not None:
            step: dict[str, Any] = {"state": task.state or "TASK_STATE_WORKING"}
            if task.message is not None:
                step["message"] = task.message
            step = self.recorder.redactor.redact(step)
            reply["task"]["steps"].append(step)
            if self.follow_up is not None:
                task.placeholder = step


def open_turn(
    recorder: Recorder, params: dict[str, Any], at_ms: float, streamed: bool = False
) -> StreamRecording:
    """A SendMessage or SendStreamingMessage (`streamed`) as its request leaves: feed it the
    answer as it comes."""
    config, message = params.get("configuration"), params.get("message")
    # The client's values, forwarded as they are: the upstream says what it makes of a list.
    config = config if isinstance(config, dict) else {}
    message = message if isinstance(message, dict) else {}
    history_length = requested_length(config.get("historyLength"))
    return StreamRecording(
        recorder, message, at_ms, streamed=streamed, history_length=history_length
    )


def open_subscription(recorder: Recorder, task_id: str) -> StreamRecording | None:
    """A SubscribeToTask on a task this recording knows (one canceled too); None for any other."""
    ended = ended_answer(recorder, task_id)
    task = recorder.tasks.get(task_id) if ended is None else ended.task
    if task is None:
        return None
    recording = StreamRecording(recorder, None, task.since_ms, task=task)
    recording.ended = ended
    if ended is not None:  # a stream on it is complete as it is: its end is no cut-off
        recording.seen = ended.state
    return recording
