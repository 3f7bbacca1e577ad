"""What the engine sees of a request, whatever the binding, and what it answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockagent.cassette.models import Fault, TaskState

SUMMARY_TEXT = 1000
"""How much of a call's text its one-line summary (and so its near-miss report) quotes."""

# The records below are made several times per call (an event per step) and never changed after,
# but they are not `frozen`: a frozen dataclass sets each field through object.__setattr__, which
# makes building one several times slower. `slots` keeps them small (tasks keep their events).


@dataclass(slots=True)
class Call:
    """A dialect-neutral request: params normalised to camelCase, header names lowercased."""

    operation: str
    params: dict[str, Any]
    protocol: str = "a2a"
    binding: str = "JSONRPC"
    version: str = "1.0"
    tenant: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    method: str = (
        ""  # the call's name on the wire when it differs from the operation (message/send)
    )

    @property
    def message(self) -> dict[str, Any] | None:
        message = self.params.get("message")
        return message if isinstance(message, dict) else None

    @property
    def parts(self) -> list[Any]:
        parts = (self.message or {}).get("parts")
        return parts if isinstance(parts, list) else []

    @property
    def text(self) -> str:
        """All text parts of the message, joined by newlines."""
        return "\n".join(
            p["text"] for p in self.parts if isinstance(p, dict) and isinstance(p.get("text"), str)
        )

    def summary(self) -> str:
        """`SendMessage over JSONRPC, text "Please review", 2 parts` for reports."""
        words = f"{self.method} ({self.operation})" if self.method else self.operation
        words += f" over {self.binding}"
        if self.message is not None:
            text = self.text
            if len(text) > SUMMARY_TEXT:  # a report quotes the call; a 4 MB text would bloat it
                more = len(text) - SUMMARY_TEXT
                words += f", text {text[:SUMMARY_TEXT]!r}… ({more:,} more characters)"
            else:
                words += f", text {text!r}" if text else ", no text"
            words += f", {len(self.parts)} part{'s' if len(self.parts) != 1 else ''}"
            media = [
                str(p["mediaType"])
                for p in self.parts
                if isinstance(p, dict) and p.get("mediaType")
            ]
            if media:
                words += f" ({', '.join(media)})"
            if self.message.get("taskId"):
                words += f", task {self.message['taskId']}"
        elif "id" in self.params:
            words += f", task {self.params['id']}"
        return words


@dataclass(slots=True)
class TaskView:
    """A snapshot of a task as a client may see it; `None` collections are omitted."""

    id: str
    context_id: str
    state: TaskState
    timestamp: str
    status_message: dict[str, Any] | None = None
    artifacts: list[dict[str, Any]] | None = None
    history: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None
    params: dict[str, Any] | None = None
    created: str = ""
    status_reason: str | None = None  # Agentex: a state step's `statusReason`


@dataclass(slots=True)
class TaskEvent:
    """One step made visible: a status change or an artifact chunk, as streams and webhooks see
    it."""

    seq: int  # index in the task's event list
    task_id: str
    context_id: str
    at_ms: float  # clock.elapsed_ms() when it happened: what pacing is measured on
    state: TaskState | None = None  # set for a status event
    timestamp: str = ""
    status_message: dict[str, Any] | None = None
    artifact: dict[str, Any] | None = None  # the chunk, for an artifact event
    append: bool = False
    last_chunk: bool = False
    said: dict[str, Any] | None = (
        None  # an agent message (a `say` step), for dialects that have them
    )
    deltas: list[Any] | None = None  # how that message is streamed, piece by piece
    start: bool = True  # Agentex: that message opens with a `start` update
    status_reason: str | None = None  # a status event's `statusReason` (Agentex)

    def closes(self, on_interrupt: bool) -> bool:
        """Whether a stream ends after this event: a terminal state, or an interrupted one."""
        return self.state is not None and (
            self.state.terminal or (on_interrupt and self.state.interrupted)
        )


@dataclass(slots=True)
class MessageResult:
    """A direct reply: one agent message, no task."""

    message: dict[str, Any]
    fault: Fault | None = None  # how the binding should deliver it badly, if scripted


@dataclass(slots=True)
class TaskResult:
    """One task snapshot (SendMessage, GetTask, CancelTask)."""

    task: TaskView
    fault: Fault | None = None
    said: tuple[dict[str, Any], ...] = ()  # the agent messages this call produced, in order


@dataclass(frozen=True)
class TaskPage:
    """One page of ListTasks."""

    tasks: list[TaskView]
    next_page_token: str
    page_size: int
    total_size: int
    fault: Fault | None = None


@dataclass(frozen=True)
class ConfigResult:
    """One push-notification config."""

    config: dict[str, Any]
    fault: Fault | None = None


@dataclass(frozen=True)
class ConfigPage:
    """Push-notification configs of a task."""

    configs: list[dict[str, Any]]
    next_page_token: str
    fault: Fault | None = None


@dataclass(frozen=True)
class Empty:
    """Done, nothing to say (a deleted config)."""

    fault: Fault | None = None


Outcome = MessageResult | TaskResult | TaskPage | ConfigResult | ConfigPage | Empty
