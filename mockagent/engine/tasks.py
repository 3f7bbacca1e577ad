"""Live tasks and their scripts: what a client sees is a function of the script, clock and polls."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mockagent.cassette.models import History, Step, TaskState
from mockagent.engine.call import TaskEvent, TaskView
from mockagent.engine.clock import Clock
from mockagent.engine.ids import IdFactory

ARCHIVING = History()  # a2a-sdk's task manager: a status message is history once it is replaced


@dataclass
class Task:
    """A task the engine runs; `script` holds the steps not yet visible."""

    id: str
    context_id: str
    origin: str
    seq: int
    state: TaskState = TaskState.SUBMITTED
    timestamp: str = ""
    status_message: dict[str, Any] | None = None
    status_reason: str | None = None  # Agentex: the last state step's `statusReason`
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    script: deque[Step] = field(default_factory=deque)
    polls: int = 0  # GetTask calls since the last step became visible
    finds: int = 0  # Agentex get-or-creates that found it since the last step became visible
    since_ms: float = 0.0  # clock.elapsed_ms() when the last step became visible
    events: list[TaskEvent] = field(default_factory=list)  # every visible step, for streams
    push_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    due_ms: float | None = None  # while played in real time: when the next step is due
    follow_polls: bool = True  # played in the background only: a polls gate still waits for polls
    subscriptions: int = 0  # SubscribeToTask streams opened on it (`after: {subscribers: N}`)
    waiting: bool = False  # stopped at INPUT_REQUIRED or AUTH_REQUIRED until a follow-up message
    name: str | None = None  # a task may be found by name (Agentex get-or-create)
    params: dict[str, Any] | None = None
    created: str = ""
    version: str = "1.0"  # the A2A protocol version of the call that created it (webhook bodies)

    @property
    def halted(self) -> bool:
        """Nothing moves this task on by itself: it ended, or it waits for a follow-up."""
        return self.state.terminal or self.waiting

    def archive_status_message(self) -> None:
        """Move the current status message into history, where a later turn must follow it."""
        if self.status_message is not None:
            self.history.append(self.status_message)
            self.status_message = None

    def add_user_message(self, message: dict[str, Any], history: History = ARCHIVING) -> None:
        """A client turn: after the agent's question it answers, in chronological order. It
        resumes a waiting task, even before the script's next state step says so.

        `history` is the agent's way with its status message: archived (into history, unless it
        went there when set, or the agent never keeps it) or kept as the status until the next
        state step."""
        if history.afterAnswer == "archived":
            if history.statusMessage in ("when-set", "never"):
                self.status_message = None  # in history already since it was set, or never
            else:
                self.archive_status_message()
        self.history.append(message)
        self.waiting = False
        if self.state is TaskState.INTERRUPTED:  # an interrupted task runs again on the next turn
            self.state = TaskState.WORKING

    def view(self, history_length: int | None = None, include_artifacts: bool = True) -> TaskView:
        """A snapshot; `history_length` 0 omits history, N keeps the last N messages."""
        history = list(self.history)
        if history_length is not None:
            history = history[-history_length:] if history_length > 0 else []
        artifacts = list(self.artifacts.values()) if include_artifacts else None
        return TaskView(
            id=self.id,
            context_id=self.context_id,
            state=self.state,
            timestamp=self.timestamp,
            status_message=self.status_message,
            artifacts=artifacts or None,
            history=history or None,
            metadata=self.metadata,
            name=self.name,
            params=self.params,
            created=self.created,
            status_reason=self.status_reason,
        )


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars), several times faster than deepcopy."""
    if isinstance(value, dict):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    return value


class Runner:
    """Applies script steps to tasks with the engine's clock and ids."""

    def __init__(
        self,
        clock: Clock,
        ids: IdFactory,
        on_event: Callable[[Task, TaskEvent], None] | None = None,
        gap: Callable[[Step], float] | None = None,
        history: History | None = None,
    ) -> None:
        self.clock = clock
        self.ids = ids
        self.history = history or ARCHIVING  # how the agent keeps status messages in history
        self.on_event = on_event  # the engine wakes streams and queues webhooks here
        self.gap = gap or (
            lambda step: float((step.after.ms or 0) if step.after else 0)
        )  # paced ms

    def agent_message(
        self, content: dict[str, Any], context_id: str, task_id: str | None
    ) -> dict[str, Any]:
        """A message from the agent, with a fresh id, in the task's context (its parts and metadata
        are the cassette's own: nothing changes them in place)."""
        message: dict[str, Any] = {"messageId": self.ids.new(), "role": "agent"}
        message["parts"] = content["parts"]
        message["contextId"] = context_id
        if task_id is not None:
            message["taskId"] = task_id
        if content.get("metadata"):
            message["metadata"] = content["metadata"]
        return message

    def apply(self, task: Task, step: Step) -> None:
        """Make one step visible."""
        if step.after is not None and step.after.ms:
            self.clock.move(step.after.ms)
        state = step.task_state
        now = self.clock.elapsed_ms()
        if step.say is not None:
            said = {
                "messageId": self.ids.new(),
                "role": "agent",
                "taskId": task.id,
                "contextId": task.context_id,
                "content": step.say,
                "timestamp": self.clock.stamp(),
            }
            task.history.append(said)
            facts: dict[str, Any] = {"said": said, "deltas": step.deltas, "start": step.start}
        elif state is not None:
            when_set = self.history.statusMessage == "when-set"
            if self.history.statusMessage == "when-replaced":
                task.archive_status_message()  # a superseded status message is history
            task.state = state
            task.waiting = state.interrupted
            task.timestamp = self.clock.stamp()
            task.status_message = (
                None
                if step.message is None
                else self.agent_message(step.message, task.context_id, task.id)
            )
            if when_set and task.status_message is not None:  # the same message, the same id
                task.history.append(task.status_message)
            task.status_reason = step.statusReason
            facts = {
                "state": state,
                "timestamp": task.timestamp,
                "status_message": task.status_message,
                "status_reason": task.status_reason,
            }
        else:
            facts = {
                "artifact": self._merge_artifact(task, step),
                "append": step.append,
                "last_chunk": step.lastChunk,
            }
        event = TaskEvent(len(task.events), task.id, task.context_id, now, **facts)
        task.polls = 0
        task.finds = 0
        task.since_ms = now
        task.events.append(event)
        if self.on_event is not None:
            self.on_event(task, event)

    @staticmethod
    def _merge_artifact(task: Task, step: Step) -> dict[str, Any]:
        """Add the step's chunk to the task's artifacts; return the chunk (for the event). The task,
        the event and the cassette share the dict: none is ever changed in place (a later chunk
        makes a new dict), so no copy per event, and the collector never walks one."""
        artifact = step.artifact or {}
        known = task.artifacts.get(artifact["artifactId"])
        if step.append and known is not None:  # a new dict: snapshots already returned keep theirs
            task.artifacts[artifact["artifactId"]] = {
                **known,
                "parts": known["parts"] + artifact["parts"],
            }
        else:  # a new artifact, or a replacement of one with the same id
            task.artifacts[artifact["artifactId"]] = artifact
        return artifact

    def run_to_stop(self, task: Task) -> None:
        """Blocking: every step until a terminal or interrupted state, the script's end, or a
        step only a get-or-create or polls show (`after: {finds}`, `after: {polls, strict}`)."""
        while task.script and not held(task.script[0]):
            self.apply(task, task.script.popleft())
            if task.halted:
                return

    def run_first(self, task: Task) -> None:
        """returnImmediately: the next step and the ungated steps right after it.

        A follow-up whose script waits for polls first (a recorded agent that answered with the
        task as it was, then moved on) answers with the task as it is; its polls count from now.
        """
        if task.script:
            after = task.script[0].after
            if after is not None and (after.finds or (task.events and after.polls)):
                task.polls = 0
                task.finds = 0
                task.follow_polls = True  # a client that polls, even after a stream
            else:
                self.apply(task, task.script.popleft())
        self._run_due(task)

    def poll(self, task: Task) -> None:
        """A GetTask: count the poll and show every step now due."""
        task.polls += 1
        self._run_due(task)

    def find(self, task: Task) -> None:
        """An Agentex get-or-create found the task: count it, and show the steps it makes due
        (only when one waits for it: to any other script, a get-or-create is no poll)."""
        task.finds += 1
        if task.script and finds_gated(task.script[0]):
            self._run_due(task)

    def _run_due(self, task: Task) -> None:
        while task.script and not task.halted and self._due(task, task.script[0]):
            self.apply(task, task.script.popleft())

    def _due(self, task: Task, step: Step) -> bool:
        after = step.after
        if after is not None and after.subscribers and task.subscriptions < after.subscribers:
            return False  # live, it came after a subscription opened: so it does on replay
        if after is None or (not after.polls and not after.ms and not after.finds):
            return True
        if after.finds:  # only a get-or-create shows it (`find`), however many polls came
            return task.finds >= after.finds
        if after.polls is not None:  # polls, when given, govern polling; ms is then only pacing
            return task.polls >= after.polls
        return self.clock.elapsed_ms() - task.since_ms >= self.gap(step)


def held(step: Step) -> bool:
    """A step only a call of the client's shows, never a blocking call, the clock or a stream:
    one gated by get-or-creates, or by polls with `strict` (recorded where only a poll saw it)."""
    after = step.after
    return after is not None and (bool(after.finds) or (after.strict and after.polls is not None))


def finds_gated(step: Step) -> bool:
    """A step only an Agentex get-or-create shows: it holds blocking calls, polls and players."""
    return step.after is not None and bool(step.after.finds)
