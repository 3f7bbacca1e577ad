"""The replay engine: one per cassette. Matches calls, runs task scripts, keeps the journal.

The engine speaks in `Call`s and outcomes; it never imports Flask or a dialect.
"""

from __future__ import annotations

import base64
import copy
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from mockagent import errors
from mockagent.cassette.models import Interaction, Reply, Step, TaskState
from mockagent.cassette.store import LoadedCassette
from mockagent.engine.call import MESSAGE_OPERATIONS, Call, MessageResult, Outcome, TaskPage, TaskResult
from mockagent.engine.clock import Clock
from mockagent.engine.diagnostics import Candidate, NearMissReport, near_miss
from mockagent.engine.ids import IdFactory
from mockagent.engine.journal import Journal
from mockagent.engine.matchers import CompiledMatch, Mismatch, TaskFacts
from mockagent.engine.tasks import Runner, Task, TaskStore

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
TASK_OPERATIONS = ("GetTask", "CancelTask", "ListTasks")
CANCEL = Step.model_validate({"state": TaskState.CANCELED.value})


class Engine:
    """Answers calls from one cassette, deterministically (its own clock and id factory)."""

    def __init__(self, loaded: LoadedCassette, *, record_mode: str = "none",
                 on_miss: Callable[[NearMissReport], None] | None = None) -> None:
        self.loaded = loaded
        self.on_miss = on_miss  # the server logs near misses as they happen
        self.cassette = loaded.cassette
        self.record_mode = record_mode
        self.interactions: list[Interaction] = list(self.cassette.interactions)
        self._matchers = [self._compile(i, interaction) for i, interaction in enumerate(self.interactions)]
        self._lock = threading.RLock()
        self.reset()

    def _compile(self, index: int, interaction: Interaction) -> CompiledMatch:
        try:
            compiled = CompiledMatch(interaction.match)
        except ValueError as exc:
            raise self.loaded.locate(("interactions", index, "match"), str(exc)) from None
        error = interaction.reply.error
        if error is not None and error.name not in errors.ERROR_KINDS:
            raise self.loaded.locate(
                ("interactions", index, "reply", "error"),
                f"unknown error {error.name!r}; use one of {', '.join(errors.ERROR_KINDS)}",
            )
        return compiled

    def reset(self) -> None:
        """Forget tasks, journal and use counts; restart the clock and the ids."""
        with self._lock:
            clock = self.cassette.clock
            self.clock = Clock(clock.start, clock.tick.ms)
            self.ids = IdFactory(self.cassette.ids.seed or self.cassette.agent.name)
            self.runner = Runner(self.clock, self.ids)
            self.tasks = TaskStore()
            self.journal = Journal()
            self.uses = [0] * len(self.interactions)

    def handle(self, call: Call) -> Outcome:
        """Answer one call or raise a ProtocolError; either way the journal gets an entry."""
        with self._lock:
            name = None
            try:
                task = self._referenced_task(call)
                index = self._find(call)
                name = None if index is None else self.interactions[index].name
                outcome = self._answer(call, index, task)
            except errors.ProtocolError as exc:
                report = exc.report if isinstance(exc, errors.NoMatch) else None
                self.journal.record(call, interaction=name, error=exc.kind, report=report)
                if report is not None and self.on_miss is not None:
                    self.on_miss(report)
                raise
            self.journal.record(call, interaction=name)
            return outcome

    def record(self, call: Call, exc: errors.ProtocolError | None = None) -> None:
        """Journal a call its dialect settled alone: refused (version, capability) or a card."""
        with self._lock:
            self.journal.record(call, error=None if exc is None else exc.kind)

    # -- matching -----------------------------------------------------------------------------

    def _task_facts(self, call: Call) -> TaskFacts | None:
        task = self.tasks.get((call.message or {}).get("taskId") or call.params.get("id"))
        return None if task is None else TaskFacts(task.state, task.origin)

    def _find(self, call: Call) -> int | None:
        """The first usable interaction that matches; NoMatch for an unanswered message call."""
        misses: list[tuple[int, list[Mismatch]]] = []
        for i, matcher in enumerate(self._matchers):
            mismatches = matcher.check(call, self._task_facts)
            limit = self.interactions[i].times
            if not mismatches and (limit is None or self.uses[i] < limit):
                return i
            misses.append((i, mismatches))
        if call.operation not in MESSAGE_OPERATIONS:
            return None
        candidates = [  # built only for a report: a matched call never pays for it
            Candidate(self.interactions[i].name, self.loaded.line_of(("interactions", i)), mismatches,
                      used_up=not mismatches, uses=self.uses[i], matchers=self._matchers[i].size)
            for i, mismatches in misses
        ]
        raise errors.NoMatch(near_miss(self.loaded.path, self.record_mode, call, candidates))

    # -- answering ----------------------------------------------------------------------------

    def _referenced_task(self, call: Call) -> Task | None:
        """For a message naming a task: the live task, checked as the protocol requires."""
        message = call.message
        if call.operation not in MESSAGE_OPERATIONS or message is None or not message.get("taskId"):
            return None
        task = self.tasks.get(message["taskId"])
        if task is None:
            raise errors.TaskNotFound(f"Task {message['taskId']} not found", metadata={"taskId": str(message["taskId"])})
        if message.get("contextId") and message["contextId"] != task.context_id:
            raise errors.InvalidParams(
                f"contextId {message['contextId']} does not match task {task.id}'s context {task.context_id}"
            )
        if task.state.terminal:
            raise errors.UnsupportedOperation(
                f"Task {task.id} is in terminal state {task.state.name} and accepts no more messages",
                metadata={"taskId": task.id},
            )
        return task

    def _answer(self, call: Call, index: int | None, task: Task | None) -> Outcome:
        if index is None:
            if call.operation not in TASK_OPERATIONS:
                raise errors.UnsupportedOperation(f"{call.operation} is not supported by this agent")
            return getattr(self, "_" + call.operation)(call)
        interaction = self.interactions[index]
        reply = interaction.reply
        if reply.error is not None:
            self.uses[index] += 1
            raise errors.ERROR_KINDS[reply.error.name](reply.error.message)
        if call.operation not in MESSAGE_OPERATIONS:
            raise errors.InternalError(
                f"interaction {interaction.name!r} answers {call.operation} with a message or task; "
                "only `error` replies fit that operation"
            )
        outcome = self._reply_to_message(call, interaction.name, reply, task)
        self.uses[index] += 1  # only now: a call refused as invalid does not use up `times`
        return outcome

    def _reply_to_message(self, call: Call, origin: str, reply: Reply, task: Task | None) -> Outcome:
        message = copy.deepcopy(call.message or {})
        config = call.params.get("configuration") or {}
        history_length = _history_length(config.get("historyLength"))
        if task is None:
            context_id = message.get("contextId") or self.ids.new()
            if reply.message is not None:
                return MessageResult(self.runner.agent_message(reply.message, context_id, None))  # type: ignore[arg-type]
            task = Task(id=self.ids.new(), context_id=context_id, origin=origin, seq=len(self.tasks) + 1,
                        metadata=copy.deepcopy(reply.task.metadata) if reply.task else None)
            self.tasks.add(task)
        message.update(taskId=task.id, contextId=task.context_id)
        task.add_user_message(message)
        if reply.message is not None:  # a direct reply within a task's conversation
            answer = self.runner.agent_message(reply.message, task.context_id, task.id)  # type: ignore[arg-type]
            task.history.append(answer)
            return MessageResult(answer)
        task.script.extend(reply.task.steps)  # type: ignore[union-attr]
        if config.get("returnImmediately"):
            self.runner.run_first(task)
        else:
            self.runner.run_to_stop(task)
        return TaskResult(task.view(history_length))

    def _known_task(self, call: Call) -> Task:
        task = self.tasks.get(call.params.get("id"))
        if task is None:
            task_id = str(call.params.get("id", ""))
            raise errors.TaskNotFound(f"Task {task_id} not found", metadata={"taskId": task_id})
        return task

    def _GetTask(self, call: Call) -> Outcome:
        history_length = _history_length(call.params.get("historyLength"))
        task = self._known_task(call)
        self.runner.poll(task)
        return TaskResult(task.view(history_length))

    def _CancelTask(self, call: Call) -> Outcome:
        task = self._known_task(call)
        if task.state.terminal:
            raise errors.TaskNotCancelable(
                f"Task {task.id} is in terminal state {task.state.name}", metadata={"taskId": task.id}
            )
        task.script.clear()
        self.runner.apply(task, CANCEL)
        return TaskResult(task.view())

    def _ListTasks(self, call: Call) -> Outcome:
        p = call.params
        history_length = _history_length(p.get("historyLength"))
        size = _page_size(p.get("pageSize"))
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
        start = _decode_token(p.get("pageToken"), len(tasks))
        page = tasks[start:start + size]
        more = start + size < len(tasks)
        views = [t.view(history_length, include_artifacts=bool(p.get("includeArtifacts"))) for t in page]
        return TaskPage(views, _encode_token(start + size) if more else "", size, len(tasks))


def _history_length(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise errors.InvalidParams(f"historyLength must be a non-negative integer, not {value!r}")
    return value


def _page_size(value: Any) -> int:
    if value is None:
        return DEFAULT_PAGE_SIZE
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise errors.InvalidParams(f"pageSize must be between 1 and {MAX_PAGE_SIZE}, not {value!r}")
    return value


def _parse_time(value: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise errors.InvalidParams(f"statusTimestampAfter is not an RFC 3339 timestamp: {value!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)  # no offset: UTC


def _encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode().rstrip("=")


def _decode_token(token: Any, total: int) -> int:
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
