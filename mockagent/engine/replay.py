"""The replay engine: one per cassette. Matches calls, runs task scripts, keeps the journal.

The engine speaks in `Call`s and outcomes; it never imports Flask or a dialect.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from mockagent import errors
from mockagent.cassette.loader import LoadedCassette, collector_paused
from mockagent.cassette.models import Interaction, Opening, Reply
from mockagent.engine.call import Call, MessageResult, Outcome, TaskEvent, TaskResult
from mockagent.engine.clock import Clock
from mockagent.engine.diagnostics import Candidate, NearMissReport
from mockagent.engine.fault_part import FaultPart
from mockagent.engine.faults import on_call
from mockagent.engine.ids import IdFactory
from mockagent.engine.index import InteractionIndex
from mockagent.engine.interactions import Locate, compile_interaction
from mockagent.engine.journal import JOURNAL_SIZE, Journal, Numbering
from mockagent.engine.matchers import TaskFacts
from mockagent.engine.player import Pace, Player
from mockagent.engine.runtime_interactions import RuntimeInteractions
from mockagent.engine.store.eviction import TASK_CAP
from mockagent.engine.store.memory import StoreFactory, memory_store
from mockagent.engine.store.transactions import Transactions
from mockagent.engine.stream import Stream
from mockagent.engine.stuck import AgentFacts, never_finishes
from mockagent.engine.task_ops import (
    TaskOperations,
    history_length_of,
    not_found_by_name,
    not_subscribable,
)
from mockagent.engine.tasks import Runner, Task, json_copy
from mockagent.vocabulary import MESSAGE_OPERATIONS, TASK_OPERATIONS

KEEPALIVE_S = 15.0  # a quiet stream sends a comment this often, and so learns if its client left

EventListener = Callable[[Task, TaskEvent], None]


class Engine(RuntimeInteractions):
    """Answers calls from one cassette, deterministically (its own clock and id factory)."""

    def __init__(
        self,
        loaded: LoadedCassette,
        *,
        record_mode: str = "none",
        on_miss: Callable[[NearMissReport], None] | None = None,
        pace: Pace | str | None = None,
        pace_cap_ms: float | None = None,
        clock_factory: type[Clock] = Clock,
        keepalive_s: float = KEEPALIVE_S,
        store: StoreFactory | None = None,
        numbering: Numbering | None = None,
        allow_repeats: bool = False,
        journal_size: int = JOURNAL_SIZE,
        task_cap: int = TASK_CAP,
    ) -> None:
        self.loaded = loaded
        # VCR.py's allow_playback_repeats: every interaction answers as often as it matches.
        self.allow_repeats = allow_repeats
        self.cassette = loaded.cassette
        self.record_mode = record_mode
        self.on_miss = on_miss  # the server logs near misses as they happen
        self.listeners: list[EventListener] = []  # told of every task event, under the lock
        self.keepalive_s = keepalive_s
        self.numbering = numbering  # shared by a folder's agents; None: the journal counts alone
        self.interactions: list[Interaction] = list(self.cassette.interactions)
        with collector_paused():  # as while loading: many new objects, no garbage
            self._own = [
                compile_interaction(interaction, self._locator(i))
                for i, interaction in enumerate(self.interactions)
            ]
            self._matchers = self._own
            self._index = InteractionIndex(self._matchers)
        # Where each interaction comes from: its index in the cassette, or the data it was
        # added as at runtime (for the agent's cassette as it is now, and its lines).
        self.origins: list[Any] = list(range(len(self.interactions)))
        clock = self.cassette.clock
        self.pace = Pace.resolve(pace, pace_cap_ms, clock.pace, clock.paceCapMs)
        self._clock_factory = clock_factory
        self._lock = threading.RLock()
        self.changed = threading.Condition(self._lock)  # notified on every task event
        self._closed = False
        self.generation = 1  # a reset ends the streams of the tasks it forgets
        self.player: Player | None = None
        key = f"{Path(loaded.path).stem}:{self.cassette.name}"
        self.tasks = (store or memory_store)(key, self.interactions)
        if allow_repeats:
            self.tasks.unlimited()
        self.tasks.bound(journal_size, task_cap)  # a long run's memory stays bounded
        self.locked = Transactions(self._lock, self.tasks, self)
        self._notes = self.tasks.notes(self._woken)  # a shared store's changes made elsewhere
        """`with engine.locked():` a transaction; never wait on `changed` in one."""
        self._start_counters()
        self.tasks.attach(self)

    def _locator(self, index: int) -> Locate:
        return lambda loc, message: self.loaded.locate(("interactions", index, *loc), message)

    def _start_counters(self) -> None:
        """A new clock, id factory and runner, as the cassette says they start."""
        clock = self.cassette.clock
        self.clock = self._clock_factory(clock.start, clock.tick.ms)
        self.ids = IdFactory(self.cassette.ids.seed or self.cassette.name)
        agent = self.cassette.agent
        self.runner = Runner(
            self.clock,
            self.ids,
            on_event=self._on_event,
            gap=self.pace.gap,
            history=agent.history if agent is not None else None,
        )
        self.ops = TaskOperations(self.tasks, self.runner)
        self.player = Player(
            self.changed,
            self.locked.run,
            self.tasks,
            self.clock,
            self.runner,
            self.pace,
            self.cassette.name,
            defer=self.locked.defer,
        )

    @property
    def journal(self) -> Journal:
        """Every call so far (read it in `locked()`)."""
        return self.tasks.journal

    @property
    def uses(self) -> Sequence[int]:
        """How often each interaction answered (read it in `locked()`)."""
        return self.tasks.uses

    def reset(self) -> None:
        """Forget tasks, journal and use counts; restart the clock and the ids."""
        old = self.player
        with self.locked():
            self.generation += 1
            self.changed.notify_all()
            if old is not None:
                old.stop()
            self._start_counters()
            own = list(range(len(self.cassette.interactions)))
            if self.origins != own:  # added or removed at runtime: the cassette's own again
                self._install(list(self.cassette.interactions), self._own, own, [None] * len(own))
            self.tasks.clear()
        if old is not None:
            old.join()  # outside the lock, which the old player needs to finish

    def close(self) -> None:
        """Stop playing tasks and end every open stream (server shutdown)."""
        with self._lock:
            self._closed = True
            self.changed.notify_all()
            if self.player is not None:
                self.player.stop()
        if self.player is not None:
            self.player.join()

    def _woken(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def _closed_since(self, generation: int) -> Callable[[], bool]:
        """For a stream: has the engine closed, or reset (forgetting the stream's task), since?"""
        return lambda: self._closed or self.generation != generation

    def _on_event(self, task: Task, event: TaskEvent) -> None:
        self.changed.notify_all()
        if event.state is not None and event.state.terminal:
            self.tasks.finished(task)  # past the cap, the oldest finished task is evicted
        for listener in self.listeners:  # once the store keeps the event (a shared store's
            self.locked.defer(partial(listener, task, event))  # call may be computed again)

    def handle(self, call: Call) -> Outcome:
        """Answer one call or raise a ProtocolError; either way the journal gets an entry."""
        return self._journaled(call, self._answer)

    def stream(self, call: Call) -> Stream:
        """SendStreamingMessage or SubscribeToTask: the first answer now, then the task's events."""
        return self._journaled(call, self._open_stream)

    def answers(self, call: Call) -> bool:
        """Whether this engine would answer `call` itself: an interaction matches it, or it names
        a task of this engine. Changes nothing (a recording proxy asks before forwarding)."""
        with self.locked():
            task_id = call.params.get("id") if call.operation not in MESSAGE_OPERATIONS else None
            if task_id is not None or call.operation in TASK_OPERATIONS:
                return self.tasks.get(task_id or call.params.get("taskId")) is not None
            try:
                self._referenced_task(call)
                return self._find(call) is not None
            except errors.ProtocolError:
                return False

    def stuck(self, task: Task) -> str | None:
        """Why `task` can never reach a terminal state, in words; None when it may (read it in
        `locked()`): see `engine.stuck`."""
        agent = self.cassette.agent
        streaming = agent is None or bool(agent.capabilities.streaming)
        facts = AgentFacts(
            self.interactions, self.uses, self.cassette.protocol, streaming, self.allow_repeats
        )
        return never_finishes(task, facts)

    def record(self, call: Call, exc: errors.ProtocolError | None = None) -> None:
        """Journal a call its dialect settled alone: refused (version, capability) or a card."""
        self.locked.run(lambda: self._record(call, error=None if exc is None else exc.kind))

    def _journaled(self, call: Call, answer: Callable[[Call, int | None, Task | None], Any]) -> Any:
        compute = partial(self._journal_once, call, answer)
        return self.locked.run(compute, self._task_id(call), group=True)

    def _journal_once(
        self, call: Call, answer: Callable[[Call, int | None, Task | None], Any]
    ) -> Any:
        name = index = None
        try:
            task = self._referenced_task(call)
            index = self._find(call)
            name = None if index is None else self.interactions[index].name
            result = answer(call, index, task)
        except errors.ProtocolError as exc:
            report = exc.report if isinstance(exc, errors.NoMatch) else None
            faults = self._faults(call, index, "error", exc.kind)
            self._record(call, interaction=name, error=exc.kind, report=report, faults=faults)
            if report is not None and self.on_miss is not None:
                self.locked.defer(partial(self.on_miss, report))
            raise
        except errors.HttpFault:
            faults = self._faults(call, index, "status")
            self._record(call, interaction=name, error="HttpFault", faults=faults)
            raise
        faults = self._faults(call, index, result)
        if isinstance(result, Stream):
            result.faults = faults  # its parts fire as it is read
        self._record(call, interaction=name, faults=faults)
        return result

    def _faults(
        self, call: Call, index: int | None, answer: Any, error: str = ""
    ) -> list[FaultPart]:
        """What became of the matched interaction's fault on this call, part by part: `answer`
        is "status", "error" (named by `error`), or what the call was answered with."""
        fault = None if index is None else self.interactions[index].fault
        if fault is None:
            return []
        if not isinstance(answer, str):  # a CreateTask of a name taken has no fault: no reply
            stream = isinstance(answer, Stream)
            answer = "none" if answer.fault is None else "stream" if stream else "response"
        agent = self.cassette.agent
        return on_call(call, fault, answer, error, agent is None or agent.capabilities.streaming)

    def _record(self, call: Call, **outcome: Any) -> None:
        seq = None if self.numbering is None else self.numbering.take()
        self.journal.record(call, seq, **outcome)

    # -- matching -----------------------------------------------------------------------------

    @staticmethod
    def _task_id(call: Call) -> Any:
        """The task a call names: a message's taskId, or the id of a task operation."""
        return (call.message or {}).get("taskId") or call.params.get("id")

    def _canceled_id(self, call: Call) -> Any:
        """The id of the task a CancelTask names, by id or (Agentex) by name; None otherwise."""
        if call.operation != "CancelTask":
            return None
        named = self.tasks.named(call.params["name"]) if call.params.get("name") else None
        return call.params.get("id") or (named.id if named is not None else None)

    def _task_facts(self, call: Call) -> TaskFacts | None:
        task = self.tasks.get(self._task_id(call))
        if task is None and call.operation == "CancelTask" and call.params.get("name"):
            task = self.tasks.named(call.params["name"])  # Agentex cancels by name too
        return None if task is None else TaskFacts(task.state, task.origin)

    def _find(self, call: Call) -> int | None:
        """The first usable interaction that matches; NoMatch for an unanswered message call.

        The index names, in cassette order, every interaction that could match, so the first of
        them that matches is the first in the cassette; only a miss pays for a pass over them all,
        which its near-miss report needs."""
        for i in self._index.candidates(call):
            limit = None if self.allow_repeats else self.interactions[i].times
            if not self._matchers[i].check(call, self._task_facts) and (
                limit is None or self.uses[i] < limit
            ):
                return i
        if call.operation not in MESSAGE_OPERATIONS:
            return None
        candidates = [  # built only for a report: a matched call never pays for it
            Candidate(
                self.interactions[i].name,
                self.line_of(i),
                mismatches,
                used_up=not mismatches,
                uses=self.uses[i],
                matchers=matcher.size,
            )
            for i, matcher in enumerate(self._matchers)
            for mismatches in [matcher.check(call, self._task_facts)]
        ]
        loaded = self.loaded
        raise errors.NoMatch(
            NearMissReport(
                loaded.path,
                self.record_mode,
                call.operation,
                call.summary(),
                candidates,
                no_file=loaded.missing,  # the agent stands for a cassette not recorded yet
            )
        )

    # -- answering ----------------------------------------------------------------------------

    def _referenced_task(self, call: Call) -> Task | None:
        """For a message naming a task: the live task, checked as the protocol requires."""
        message = call.message
        if call.operation not in MESSAGE_OPERATIONS or message is None:
            return None
        if not message.get("taskId"):  # a task may be named instead (a message creates it if new)
            named = (
                self.tasks.named(call.params["taskName"]) if call.params.get("taskName") else None
            )
            if named is None and call.params.get("taskName") and call.operation == "SendEvent":
                raise not_found_by_name(call.params["taskName"])
            return named
        task = self.ops.known(message["taskId"])
        if message.get("contextId") and message["contextId"] != task.context_id:
            raise errors.InvalidParams(
                f"contextId {message['contextId']} does not match "
                f"task {task.id}'s context {task.context_id}"
            )
        if task.state.terminal:
            raise errors.UnsupportedOperation(
                f"Task {task.id} is in terminal state {task.state.name} "
                "and accepts no more messages",
                metadata={"taskId": task.id},
            )
        return task

    def _answer(self, call: Call, index: int | None, task: Task | None) -> Outcome:
        if index is None:
            if call.operation not in TASK_OPERATIONS:
                raise errors.UnsupportedOperation(
                    f"{call.operation} is not supported by this agent"
                )
            outcome = getattr(self.ops, call.operation)(call.params)
            if call.operation == "GetTask":  # a poll may have passed a polls gate: go on from there
                self._background(self.ops.find(call.params))
            return outcome
        interaction = self.interactions[index]
        reply = self._scripted_reply(index, self._canceled_id(call))
        fault = interaction.fault
        if call.operation == "CancelTask" and reply.task is not None:
            # a recorded cancel: the task ends as the agent ended it, not as the store would
            outcome = self.ops.cancel_as_scripted(self.ops.find(call.params), reply.task.steps)
            self.tasks.use(index)
            return outcome if fault is None else replace(outcome, fault=fault)
        if call.operation == "CreateTask" and reply.task is not None:
            # a recorded platform's new task: its state and status reason as it answered
            created = self.ops.create_as_scripted(call.params, interaction.name, reply.task.steps)
            if created is None:  # the name is taken: that task, and the interaction stays unused
                return self.ops.CreateTask(call.params)
            self.tasks.use(index)
            return created if fault is None else replace(created, fault=fault)
        if call.operation not in MESSAGE_OPERATIONS:
            raise errors.InternalError(
                f"interaction {interaction.name!r} answers {call.operation} "
                "with a message or task; "
                "only `error` replies and faults fit that operation "
                "(CancelTask and CreateTask also take a task script)"
            )
        immediate = (call.params.get("configuration") or {}).get("returnImmediately")
        mode = (
            "immediate" if immediate or call.operation == "SendEvent" else "block"
        )  # events never wait
        outcome, task = self._reply_to_message(call, interaction.name, reply, task, mode)
        self.tasks.use(index)  # only now: a call refused as invalid does not use up `times`
        if task is not None:
            self._background(task)
        return outcome if interaction.fault is None else replace(outcome, fault=interaction.fault)

    def _background(self, task: Task) -> None:
        """A task answered at once goes on working by itself, as far as no polls gate holds it."""
        if self.player is not None and task.due_ms is None:
            self.player.play(task, streamed=False)

    def _scripted_reply(self, index: int, task_id: Any = None) -> Reply:
        """The interaction's reply; scripted errors and HTTP faults are raised here (one use).
        An error answering a CancelTask on `task_id` names that task where it says `{taskId}`."""
        interaction = self.interactions[index]
        if interaction.fault is not None and interaction.fault.status is not None:
            self.tasks.use(index)
            raise errors.HttpFault(interaction.fault)
        assert interaction.reply is not None  # the model requires a reply without a status fault
        error = interaction.reply.error
        if error is not None:
            self.tasks.use(index)
            message, details = naming(task_id, (error.message, error.details))
            raise errors.scripted(error.name, message, details, error.status)
        return interaction.reply

    def _reply_to_message(
        self, call: Call, origin: str, reply: Reply, task: Task | None, mode: str
    ) -> tuple[MessageResult | TaskResult, Task | None]:
        """Answer a message: a direct reply, or a new task or a follow-up run in `mode`.

        `block` runs to a terminal or interrupted state; `immediate` shows the first step and
        those right after it with no `after`; `stream` shows the first step only (the player
        plays the rest), or none when the reply's `first` opens the stream otherwise.
        """
        config = call.params.get("configuration") or {}
        history_length = history_length_of(config.get("historyLength"))
        if task is None:
            context_id = (call.message or {}).get("contextId") or self.ids.new()
            if reply.message is not None:
                return MessageResult(
                    self.runner.agent_message(reply.message, context_id, None)
                ), None
            task = self.ops.new_task(
                origin,
                context_id,
                name=call.params.get("taskName"),
                params=call.params.get("taskParams"),
                metadata=reply.task.metadata if reply.task else None,
            )
            task.version = call.version
        message = json_copy(call.message or {})  # kept in the task's history: the task's own copy
        message.update(taskId=task.id, contextId=task.context_id)
        task.add_user_message(message, self.runner.history)
        self.tasks.charge(task, message)  # past the store's bytes, older tasks are evicted
        mark = len(task.history)
        if reply.message is not None:  # a direct reply within a task's conversation
            answer = self.runner.agent_message(reply.message, task.context_id, task.id)
            task.history.append(answer)
            return MessageResult(answer), task
        if isinstance(
            config.get("taskPushNotificationConfig"), dict
        ):  # before any event: webhooks see all
            push = config["taskPushNotificationConfig"]
            self.ops.add_push_config(task, push, "configuration.taskPushNotificationConfig.")
        task.script.extend(reply.task.steps)  # type: ignore[union-attr]
        if mode == "block":
            self.runner.run_to_stop(task)
        elif mode == "immediate":
            self.runner.run_first(task)
        elif opening(reply) != "task":  # no step yet: a new task is shown as old as it is
            task.timestamp = task.timestamp or task.created
        else:  # the opening Task shows the first step (or the first few, recorded so)
            shown = (reply.task.firstSteps if reply.task else None) or 1
            for _ in range(min(shown, len(task.script))):
                self.runner.apply(task, task.script.popleft())
        return TaskResult(task.view(history_length), said=tuple(task.history[mark:])), task

    def _open_stream(self, call: Call, index: int | None, task: Task | None) -> Stream:
        fault = None
        opens: Opening = "task"  # a subscription opens with the current Task, as the spec says
        if call.operation == "SubscribeToTask":
            if index is not None:  # an interaction may script an error or a fault for it
                self._subscription_error(index, call.params.get("id"))
            task = self.ops.known(call.params.get("id"))
            if task.state.terminal and not self._answers_ended(index):
                raise not_subscribable(task.id, task.state)
            if index is not None:  # its fault (a recorded cut-off) cuts one subscription off
                fault = self.interactions[index].fault
                self.tasks.use(index)
            task.subscriptions += 1  # a step gated on it may be played now
            first: MessageResult | TaskResult = TaskResult(task.view())
        elif index is None:
            raise errors.UnsupportedOperation(f"{call.operation} is not supported by this agent")
        else:
            reply = self._scripted_reply(index)
            first, task = self._reply_to_message(
                call, self.interactions[index].name, reply, task, "stream"
            )
            self.tasks.use(index)
            fault = self.interactions[index].fault
            opens = opening(reply)
        cursor = len(task.events) if task else 0  # before playing: steps due now are played at once
        if isinstance(first, TaskResult) and task is not None and self.player is not None:
            self.player.play(task)
        return Stream(
            first=first,
            task=task if isinstance(first, TaskResult) else None,
            opening=opens,
            cursor=cursor,
            close_on_interrupt=call.operation != "SubscribeToTask",
            close_when_idle=call.operation != "SubscribeToTask",
            condition=self.changed,
            keepalive_s=self.keepalive_s,
            fault=fault,
            closed=self._closed_since(self.generation),
            fetch=self.tasks.peek,
            notes=self._notes,
            poll_s=self.tasks.poll_s,
        )

    def _answers_ended(self, index: int | None) -> bool:
        """Whether the SubscribeToTask interaction at `index` answers a subscription on a task
        that has ended: one that names the state it matches in (a recorded agent that answered
        with the Task as it is, then its fault, instead of refusing)."""
        if index is None:
            return False
        on = self.interactions[index].match.task
        return on is not None and bool(on.state)

    def _subscription_error(self, index: int, task_id: Any) -> None:
        """A SubscribeToTask interaction's scripted error (naming `task_id` where it says
        `{taskId}`) or HTTP fault, raised; one with only a fault (a recorded subscription that
        was cut off) has no reply."""
        interaction = self.interactions[index]
        status = interaction.fault.status if interaction.fault is not None else None
        if interaction.reply is not None or status is not None:
            self._scripted_reply(index, task_id)


def opening(reply: Reply) -> Opening:
    """How a stream answering `reply` opens: its task's `first`, `task` when unset."""
    return (reply.task.first if reply.task is not None else None) or "task"


TASK_ID = "{taskId}"


def naming(task_id: Any, value: Any) -> Any:
    """`value` (JSON) with `{taskId}` in its strings made `task_id`: a recorded agent's refusal
    names the task it refused, and the replay's task has an id of its own."""
    if not isinstance(task_id, str) or not task_id:
        return value
    if isinstance(value, str):
        return value.replace(TASK_ID, task_id)
    if isinstance(value, list | tuple):
        return type(value)(naming(task_id, item) for item in value)
    if isinstance(value, dict):
        return {key: naming(task_id, item) for key, item in value.items()}
    return value
