"""Operations on the tasks a cassette created, answered without any interaction.

GetTask, CancelTask, ListTasks and the push-notification configs of a task. Each method takes
the call's params (camelCase) and returns an outcome or raises a ProtocolError.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mockagent import errors
from mockagent.cassette.models import Step, TaskState
from mockagent.engine.call import ConfigPage, ConfigResult, Empty, Outcome, TaskPage, TaskResult
from mockagent.engine.clock import format_timestamp
from mockagent.engine.push_configs import checked, room_for
from mockagent.engine.store.memory import TaskStore
from mockagent.engine.tasks import Runner, Task

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
CANCEL = Step.model_validate({"state": TaskState.CANCELED.value})
RUNNING = Step.model_validate({"state": TaskState.WORKING.value})
INTERRUPT = Step.model_validate({"state": TaskState.INTERRUPTED.value})


@dataclass
class TaskOperations:
    """The built-in operations over one engine's task store."""

    tasks: TaskStore
    runner: Runner

    def known(self, task_id: Any) -> Task:
        """The task with this id, or TaskNotFound (saying so when it may have been evicted)."""
        task = self.tasks.get(task_id)
        if task is None:
            raise self.tasks.not_found(task_id) or not_found(task_id)
        return task

    def find(self, p: dict[str, Any]) -> Task:
        """The task `p` names by `id`, or else by `name`; TaskNotFound or InvalidParams."""
        if p.get("id"):
            return self.known(p["id"])
        if p.get("name"):
            task = self.tasks.named(p["name"])
            if task is None:
                raise not_found_by_name(p["name"])
            return task
        raise errors.InvalidParams("Either a task id or a task name must be provided")

    def new_task(
        self,
        origin: str,
        context_id: str | None = None,
        name: str | None = None,
        params: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Task:
        """A task in the store, its ids from the id factory."""
        ids = self.runner.ids
        context_id = context_id or ids.new()
        task = Task(
            id=ids.new(),
            context_id=context_id,
            origin=origin,
            seq=self.tasks.next_seq(),
            name=name,
            params=copy.deepcopy(params),
            metadata=copy.deepcopy(metadata),
            created=format_timestamp(self.runner.clock.now()),
        )
        self.tasks.add(task)
        return task

    def CreateTask(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        """Get or create by name: an existing name returns that task, with new params if given,
        as it is after the steps this get-or-create shows (`after: {finds}`, recorded where the
        platform moved the task on unseen)."""
        task = self.tasks.named(p["name"]) if p.get("name") else None
        if task is None:
            task = self.new_task(
                "", name=p.get("name"), params=p.get("params"), metadata=p.get("taskMetadata")
            )
            self.runner.apply(task, RUNNING)
            return TaskResult(task.view())
        if p.get("params") is not None:
            task.params = copy.deepcopy(p["params"])
            self.tasks.charge(task, task.params)
        self.runner.find(task)
        return TaskResult(task.view())

    def create_as_scripted(
        self, p: dict[str, Any], origin: str, steps: Sequence[Step]
    ) -> Outcome | None:
        """CreateTask answered by an interaction's script (a recorded platform's answer): a new
        task, its `origin` the interaction, plays `steps` to their end (its state and status
        reason as recorded). None when the name is taken: get-or-create then returns that task,
        as CreateTask does."""
        if p.get("name") and self.tasks.named(p["name"]) is not None:
            return None
        task = self.new_task(
            origin, name=p.get("name"), params=p.get("params"), metadata=p.get("taskMetadata")
        )
        task.script.extend(steps)
        self.runner.run_to_stop(task)
        return TaskResult(task.view())

    def InterruptTask(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        """A running task pauses (INTERRUPTED) until the next message or event resumes it."""
        task = self.find(p)
        if task.state.terminal:
            raise errors.UnsupportedOperation(
                f"Task {task.id} is in terminal state {task.state.name}",
                metadata={"taskId": task.id},
            )
        self.runner.apply(task, INTERRUPT)
        return TaskResult(task.view())

    def GetTask(self, p: dict[str, Any]) -> Outcome:  # noqa: N802 (operation names)
        history_length = history_length_of(p.get("historyLength"))
        task = self.find(p)
        self.runner.poll(task)
        return TaskResult(task.view(history_length))

    def CancelTask(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        task = self.find(p)
        if task.state.terminal:
            raise not_cancelable(task.id, task.state)
        task.script.clear()
        self.runner.apply(task, CANCEL)
        return TaskResult(task.view())

    def cancel_as_scripted(self, task: Task, steps: Sequence[Step]) -> Outcome:
        """CancelTask answered by an interaction's script (a recorded agent's cancel): the task
        drops its own script and plays `steps` to their end, whatever state it is in, as the
        agent's answer showed it (CANCELED with its message, and anything else it said)."""
        task.script.clear()
        task.script.extend(steps)
        self.runner.run_to_stop(task)
        return TaskResult(task.view())

    def ListTasks(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        history_length = history_length_of(p.get("historyLength"))
        size = page_size_of(p.get("pageSize"))
        tasks = self.tasks.all()
        if p.get("contextId"):
            tasks = [t for t in tasks if t.context_id == p["contextId"]]
        if p.get("status"):
            try:
                wanted = TaskState.parse(p["status"])
            except ValueError as exc:
                raise errors.InvalidParams(f"status: {exc}") from None
            tasks = [t for t in tasks if t.state == wanted]
        if p.get("statusTimestampAfter"):
            after = _parse_time(p["statusTimestampAfter"])
            tasks = [t for t in tasks if _parse_time(t.timestamp) >= after]
        tasks.sort(key=lambda t: (t.timestamp, t.seq), reverse=True)
        start = decode_token(p.get("pageToken"), len(tasks))
        page = tasks[start : start + size]
        views = [
            t.view(history_length, include_artifacts=bool(p.get("includeArtifacts"))) for t in page
        ]
        more = start + size < len(tasks)
        return TaskPage(views, encode_token(start + size) if more else "", size, len(tasks))

    def CreateTaskPushNotificationConfig(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        task = self.known(p.get("taskId"))
        return ConfigResult(self.add_push_config(task, p))

    def add_push_config(
        self, task: Task, config: dict[str, Any], where: str = ""
    ) -> dict[str, Any]:
        """Keep the config's A2A fields with the client's config id (mint one if absent) and
        the task id; InvalidParams for a bad field (named after `where`) or past the cap."""
        stored = copy.deepcopy(checked(config, where))
        room_for(task.push_configs, stored.get("id"))
        stored["id"] = stored.get("id") or self.runner.ids.new()
        stored["taskId"] = task.id
        task.push_configs[stored["id"]] = stored
        return stored

    def GetTaskPushNotificationConfig(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        config = self.known(p.get("taskId")).push_configs.get(p.get("id"))  # type: ignore[arg-type]
        if config is None:
            raise errors.TaskNotFound(
                f"Push notification config {p.get('id')} not found",
                metadata={"taskId": str(p.get("taskId")), "configId": str(p.get("id"))},
            )
        return ConfigResult(config)

    def ListTaskPushNotificationConfigs(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        configs = list(self.known(p.get("taskId")).push_configs.values())
        size = page_size_of(p.get("pageSize"))
        start = decode_token(p.get("pageToken"), len(configs))
        more = start + size < len(configs)
        return ConfigPage(configs[start : start + size], encode_token(start + size) if more else "")

    def DeleteTaskPushNotificationConfig(self, p: dict[str, Any]) -> Outcome:  # noqa: N802
        self.known(p.get("taskId")).push_configs.pop(p.get("id"), None)  # type: ignore[arg-type]
        return Empty()


def not_found(task_id: Any) -> errors.TaskNotFound:
    """How the task store refuses an id it does not know."""
    return errors.TaskNotFound(f"Task {task_id} not found", metadata={"taskId": str(task_id or "")})


def not_found_by_name(name: Any) -> errors.TaskNotFound:
    """How the task store refuses a task name it does not know (Agentex)."""
    return errors.TaskNotFound(f"Task named {name!r} not found", metadata={"taskName": str(name)})


def not_subscribable(task_id: str, state: TaskState) -> errors.UnsupportedOperation:
    """How the engine refuses a subscription to a task that has ended."""
    return errors.UnsupportedOperation(
        f"Task {task_id} is in terminal state {state.name}: nothing to subscribe to",
        metadata={"taskId": task_id},
    )


def not_cancelable(task_id: str, state: TaskState) -> errors.TaskNotCancelable:
    """How the task store refuses to cancel a task that has ended."""
    return errors.TaskNotCancelable(
        f"Task {task_id} is in terminal state {state.name}", metadata={"taskId": task_id}
    )


def history_length_of(value: Any) -> int | None:
    """historyLength: unset, or a non-negative integer (InvalidParams otherwise)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise errors.InvalidParams(f"historyLength must be a non-negative integer, not {value!r}")
    return value


def page_size_of(value: Any) -> int:
    if value is None:
        return DEFAULT_PAGE_SIZE
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise errors.InvalidParams(f"pageSize must be between 1 and {MAX_PAGE_SIZE}, not {value!r}")
    return value


def _parse_time(value: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise errors.InvalidParams(
            f"statusTimestampAfter is not an RFC 3339 timestamp: {value!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # no offset: UTC


def encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode().rstrip("=")


def decode_token(token: Any, total: int) -> int:
    """The offset a page token stands for; InvalidParams for a token this server did not issue."""
    if not token:
        return 0
    try:
        text = base64.urlsafe_b64decode(str(token) + "=" * (-len(str(token)) % 4)).decode()
        offset = int(text.removeprefix("offset:")) if text.startswith("offset:") else -1
    except (ValueError, UnicodeDecodeError):
        offset = -1
    if not 0 <= offset <= total:
        raise errors.InvalidParams(f"pageToken {token!r} is not a token this server issued")
    return offset
