"""A small raw A2A v1.0 agent (Starlette, both bindings) with the quirks of issue 17, all allowed
by the specification, to show that a replay reproduces an agent rather than correcting it.

By the user's text:
- a new message ending with "?" -> a direct Message "Answer: <text>";
- contains "ask" -> a task: WORKING "Working on <text>" (quirk 1: a status message, so history
  holds it), then INPUT_REQUIRED "Which branch?";
- anything else -> WORKING "Working on <text>", the artifact (a uuid id) in two chunks (the 2nd
  appends and is the last chunk), COMPLETED "Done: <text>";
- a follow-up on a task waiting for input -> WORKING, the artifact `answer` "Using branch
  <text>", COMPLETED (no status messages).

How answers go (deterministic: the task advances when a client looks, never on wall time):
- blocking SendMessage runs the task to an interrupted or terminal state;
- `returnImmediately` returns the task as it is (quirk 3: a follow-up answers with the snapshot
  still in INPUT_REQUIRED); each GetTask then advances it up to and including the next state
  change (WORKING, then the artifact and COMPLETED);
- a stream starts with the Task snapshot (quirk 2: on a follow-up, still INPUT_REQUIRED), then a
  statusUpdate or artifactUpdate per step, and closes at an interrupted or terminal state;
- SubscribeToTask sends the snapshot, plays what is pending, then waits (across INPUT_REQUIRED)
  for what other calls do to the task, and closes at a terminal state. On a task that has
  ended it is refused (UnsupportedOperation), or with `streams_ended` answered with the
  snapshot alone, then the end of the stream.

With `stepwise` (a semaphore the test releases) a stream takes each step only when released,
and a subscription plays nothing pending: the test has a stream and a subscription on its task
see one step at a time. With `held` too (another semaphore), the stream sends a step it took
(which the subscriptions have at once) only when that is released: the test has the
subscription's client get each step first.

Every status message is also appended to the history, as a2a-sdk's task manager does.
tests/helpers/quirky_app.py serves it over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

INTERRUPTED = {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}
# name: (JSON-RPC code, HTTP status, google.rpc status, ErrorInfo reason, message)
ERRORS = {
    "TaskNotFound": (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found"),
    "TaskNotCancelable": (
        -32002,
        400,
        "FAILED_PRECONDITION",
        "TASK_NOT_CANCELABLE",
        "Task is done",
    ),
    "UnsupportedOperation": (-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", "Done"),
    "MethodNotFound": (-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND", "Method not found"),
}
SUBSCRIBER_WAIT = 5.0  # seconds a blocking answer waits for subscribers to be sent its steps
Step = tuple[str, Any]  # ("status", (state, text | None)) or ("artifact", (artifact, append, last))


class A2AError(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class QuirkyTask:
    id: str
    context_id: str
    state: str = "TASK_STATE_SUBMITTED"
    message: dict[str, Any] | None = None
    timestamp: str = field(default_factory=now)
    history: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    pending: list[Step] = field(default_factory=list)
    subscribers: list[asyncio.Queue[dict[str, Any] | None]] = field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        status: dict[str, Any] = {"state": self.state, "timestamp": self.timestamp}
        if self.message is not None:
            status["message"] = self.message
        out: dict[str, Any] = {"id": self.id, "contextId": self.context_id, "status": status}
        if self.artifacts:
            out["artifacts"] = self.artifacts
        out["history"] = self.history
        return json.loads(json.dumps(out))  # a copy: later steps must not change what was sent

    def agent_message(self, text: str) -> dict[str, Any]:
        return {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_AGENT",
            "parts": [{"text": text}],
            "taskId": self.id,
            "contextId": self.context_id,
        }

    def apply(self, step: Step) -> dict[str, Any]:
        """Take one step; the stream event that says so (also sent to every subscriber)."""
        kind, what = step
        ids = {"taskId": self.id, "contextId": self.context_id}
        if kind == "status":
            state, text = what
            self.state, self.timestamp = state, now()
            self.message = self.agent_message(text) if text else None
            if self.message is not None:
                self.history.append(self.message)
            status = {"state": state, "timestamp": self.timestamp}
            if self.message is not None:
                status["message"] = self.message
            event: dict[str, Any] = {"statusUpdate": {**ids, "status": status}}
        else:
            artifact, append, last = what
            known = next(
                (a for a in self.artifacts if a["artifactId"] == artifact["artifactId"]), None
            )
            if append and known is not None:
                known["parts"] = known["parts"] + artifact["parts"]
            else:
                self.artifacts.append(json.loads(json.dumps(artifact)))
            update = {**ids, "artifact": artifact}
            if append:
                update["append"] = True
            if last:
                update["lastChunk"] = True
            event = {"artifactUpdate": update}
        for queue in self.subscribers:
            queue.put_nowait(event)
        return event

    def run_until_stop(self) -> list[dict[str, Any]]:
        """Blocking or streamed: every pending step up to an interrupted or terminal state."""
        events = []
        while self.pending:
            events.append(self.apply(self.pending.pop(0)))
            if self.state in INTERRUPTED | TERMINAL:
                break
        return events

    def poll(self) -> None:
        """A GetTask looked: take the steps up to and including the next state change."""
        while self.pending:
            kind, _ = self.pending[0]
            self.apply(self.pending.pop(0))
            if kind == "status":
                return


class QuirkyAgent:
    """The agent's tasks and behaviour, independent of the binding."""

    def __init__(
        self,
        streams_ended: bool = False,
        stepwise: threading.Semaphore | None = None,
        held: threading.Semaphore | None = None,
    ) -> None:
        self.tasks: dict[str, QuirkyTask] = {}
        self.streams_ended = streams_ended  # a subscription on an ended task: its snapshot
        self.stepwise = stepwise  # a stream's steps wait for the test
        self.held = held  # with `stepwise`: a step taken waits for the test to go on the stream

    async def aclose(self) -> None:
        """End every open subscription (UpstreamAgent.stop calls this before shutting down)."""
        for task in self.tasks.values():
            for queue in task.subscribers:
                queue.put_nowait(None)

    def task(self, task_id: str) -> QuirkyTask:
        if task_id not in self.tasks:
            raise A2AError("TaskNotFound")
        return self.tasks[task_id]

    def receive(self, params: dict[str, Any]) -> tuple[dict[str, Any] | None, QuirkyTask | None]:
        """A message arrives: (a direct reply, None) or (None, the task it starts or continues)."""
        message = dict(params.get("message") or {})
        text = " ".join(p.get("text", "") for p in message.get("parts") or [])
        if message.get("taskId"):
            task = self.task(message["taskId"])
            if task.state not in INTERRUPTED:
                raise A2AError("UnsupportedOperation")
            task.history.append({**message, "contextId": task.context_id})
            answer = {
                "artifactId": "answer",
                "name": "answer",
                "parts": [{"text": f"Using branch {text}"}],
            }
            task.pending = [
                ("status", ("TASK_STATE_WORKING", None)),
                ("artifact", (answer, False, False)),
                ("status", ("TASK_STATE_COMPLETED", None)),
            ]
            return None, task
        context_id = message.get("contextId") or str(uuid.uuid4())
        if text.rstrip().endswith("?"):
            reply = {"messageId": str(uuid.uuid4()), "role": "ROLE_AGENT", "contextId": context_id}
            return {**reply, "parts": [{"text": f"Answer: {text}"}]}, None
        task = QuirkyTask(id=str(uuid.uuid4()), context_id=context_id)
        task.history.append({**message, "taskId": task.id, "contextId": context_id})
        self.tasks[task.id] = task
        task.pending = [("status", ("TASK_STATE_WORKING", f"Working on {text}"))]
        if "ask" in text:
            task.pending.append(("status", ("TASK_STATE_INPUT_REQUIRED", "Which branch?")))
            return None, task
        log = str(uuid.uuid4())
        task.pending += [
            (
                "artifact",
                ({"artifactId": log, "name": "log", "parts": [{"text": "part 1\n"}]}, False, False),
            ),
            (
                "artifact",
                ({"artifactId": log, "name": "log", "parts": [{"text": "part 2\n"}]}, True, True),
            ),
            ("status", ("TASK_STATE_COMPLETED", f"Done: {text}")),
        ]
        return None, task

    # -- operations: each returns a result (dict) or an async iterator of stream events ----------

    async def send(self, params: dict[str, Any]) -> dict[str, Any]:
        reply, task = self.receive(params)
        if task is None:
            return {"message": reply}
        if not (params.get("configuration") or {}).get("returnImmediately"):
            task.run_until_stop()
            # Subscribers hear of the steps before the blocking answer goes (as with a2a-sdk):
            # a deterministic order for the recording proxy to see.
            for queue in task.subscribers:
                await asyncio.wait_for(queue.join(), SUBSCRIBER_WAIT)
        return {"task": task.snapshot()}

    async def stream(self, params: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        reply, task = self.receive(params)
        if task is None:
            yield {"message": reply}
            return
        yield {"task": task.snapshot()}
        if self.stepwise is None:
            for event in task.run_until_stop():
                yield event
            return
        while task.pending and task.state not in INTERRUPTED | TERMINAL:
            await asyncio.to_thread(self.stepwise.acquire, True, SUBSCRIBER_WAIT)
            event = task.apply(task.pending.pop(0))
            if self.held is not None:
                await asyncio.to_thread(self.held.acquire, True, SUBSCRIBER_WAIT)
            yield event

    def get(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self.task(str(params.get("id")))
        task.poll()
        return task.snapshot()

    def cancel(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self.task(str(params.get("id")))
        if task.state in TERMINAL:
            raise A2AError("TaskNotCancelable")
        task.pending = []
        task.apply(("status", ("TASK_STATE_CANCELED", None)))
        return task.snapshot()

    def subscribe(self, params: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        task = self.task(str(params.get("id")))
        if task.state in TERMINAL and self.streams_ended:
            return _once({"task": task.snapshot()})
        if task.state in TERMINAL:
            raise A2AError("UnsupportedOperation")
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        task.subscribers.append(queue)

        async def events() -> AsyncIterator[dict[str, Any]]:
            try:
                yield {"task": task.snapshot()}
                while task.pending and task.state not in TERMINAL and self.stepwise is None:
                    task.apply(task.pending.pop(0))
                while (event := await queue.get()) is not None:
                    yield event
                    queue.task_done()
                    state = (event.get("statusUpdate") or {}).get("status", {}).get("state")
                    if state in TERMINAL:
                        return
            finally:
                task.subscribers.remove(queue)

        return events()


async def _once(event: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    yield event
