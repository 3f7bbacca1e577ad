"""The cassette format, version 1, as pydantic models (the JSON Schema is generated from these).

Protocol objects inside a cassette (message parts, artifacts, skills' extra fields) are written in
A2A v1.0 ProtoJSON (camelCase, flat parts) and kept as plain JSON; everything that is mockagent's
own structure is a model with `extra="forbid"`, so a typo is an error that names the field.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class TaskState(str, Enum):
    """Neutral task states; each dialect renders them (A2A: `TASK_STATE_WORKING`)."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    AUTH_REQUIRED = "auth_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    REJECTED = "rejected"
    # Agentex's own: INTERRUPTED waits like INPUT_REQUIRED; the other three end a task.
    INTERRUPTED = "interrupted"
    TERMINATED = "terminated"
    TIMED_OUT = "timed_out"
    DELETED = "deleted"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATES

    @property
    def interrupted(self) -> bool:
        return self in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED, TaskState.INTERRUPTED)

    @classmethod
    def parse(cls, value: Any) -> TaskState:
        """Accept `TASK_STATE_INPUT_REQUIRED`, `INPUT_REQUIRED`, `input-required` and friends."""
        if isinstance(value, TaskState):
            return value
        text = str(value).strip().lower().replace("-", "_")
        text = ALIASES.get(text.removeprefix("task_state_"), text.removeprefix("task_state_"))
        try:
            return cls(text)
        except ValueError:
            names = ", ".join("TASK_STATE_" + s.name for s in cls)
            raise ValueError(f"unknown task state {value!r}; use one of {names}") from None


TERMINAL_STATES = frozenset({
    TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED,
    TaskState.TERMINATED, TaskState.TIMED_OUT, TaskState.DELETED,
})
AGENTEX_STATES = frozenset({TaskState.INTERRUPTED, TaskState.TERMINATED, TaskState.TIMED_OUT, TaskState.DELETED})
ALIASES = {"running": "working", "cancelled": "canceled"}  # Agentex says RUNNING

StateName = str  # written as TASK_STATE_* in cassettes; parsed by TaskState.parse


class After(_Model):
    """When a step becomes visible, counted from the previous step."""

    polls: int | None = Field(None, ge=0, description="GetTask calls on the task to wait for")
    ms: int | None = Field(None, ge=0, description="milliseconds on the cassette clock")


def _message_content(value: Any) -> dict[str, Any]:
    """`"text"` is shorthand for one text part; a mapping must carry `parts`."""
    if isinstance(value, str):
        return {"parts": [{"text": value}]}
    if isinstance(value, dict):
        if not isinstance(value.get("parts"), list) or not value["parts"]:
            raise ValueError("a message needs a non-empty `parts` list (or write it as a string)")
        for i, part in enumerate(value["parts"]):
            _check_part(part, f"parts[{i}]")
        return value
    raise ValueError("a message is a string or a mapping with `parts`")


def _check_part(part: Any, where: str) -> None:
    if not isinstance(part, dict):
        raise ValueError(f"{where}: a part is a mapping such as {{text: hello}}")
    content = [k for k in ("text", "raw", "url", "data") if k in part]
    if len(content) != 1:
        raise ValueError(f"{where}: a part has exactly one of text, raw, url, data")


class Step(_Model):
    """One step of a task script: a status change or an artifact update."""

    state: StateName | None = None
    message: str | dict[str, Any] | None = Field(
        None, description="status message: a string or {parts: [...], metadata: {...}}"
    )
    artifact: dict[str, Any] | None = Field(None, description="A2A Artifact (artifactId, parts…)")
    say: str | dict[str, Any] | None = Field(
        None, description="Agentex: an agent message (TaskMessageContent, or a string for text)")
    deltas: list[Any] | None = Field(
        None, description="Agentex: streamed as these deltas (text pieces, or delta objects) before done")
    append: bool = False
    lastChunk: bool = False
    after: After | None = None

    @field_validator("state")
    @classmethod
    def _state(cls, value: str | None) -> str | None:
        return None if value is None else TaskState.parse(value).value

    @field_validator("message", mode="before")
    @classmethod
    def _message(cls, value: Any) -> Any:
        return None if value is None else _message_content(value)

    @field_validator("artifact")
    @classmethod
    def _artifact(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value.get("artifactId"), str):
            raise ValueError("an artifact needs an `artifactId`")
        parts = value.get("parts")
        if not isinstance(parts, list) or not parts:
            raise ValueError("an artifact needs a non-empty `parts` list")
        for i, part in enumerate(parts):
            _check_part(part, f"parts[{i}]")
        return value

    @field_validator("say", mode="before")
    @classmethod
    def _say(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"type": "text", "author": "agent", "content": value, "format": "plain"}
        if isinstance(value, dict):
            return {"author": "agent", **value}
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        if sum(x is not None for x in (self.state, self.artifact, self.say)) != 1:
            raise ValueError("a step has one of `state`, `artifact` or `say`")
        if self.deltas is not None and self.say is None:
            raise ValueError("`deltas` belong to a `say` step")
        if self.message is not None and self.state is None:
            raise ValueError("`message` belongs to a `state` step")
        if (self.append or self.lastChunk) and self.artifact is None:
            raise ValueError("`append` and `lastChunk` belong to an `artifact` step")
        return self

    @property
    def task_state(self) -> TaskState | None:
        return None if self.state is None else TaskState(self.state)


class TaskReply(_Model):
    """A task script: the steps run in order, gated by their `after`."""

    steps: list[Step] = Field(min_length=1)
    metadata: dict[str, Any] | None = None


class ErrorReply(_Model):
    """A protocol error by neutral name (`TaskNotFound`) and an optional message."""

    name: str
    message: str | None = None


class Reply(_Model):
    """Exactly one of `message` (direct reply), `task` (script) or `error`."""

    message: str | dict[str, Any] | None = None
    task: TaskReply | None = None
    error: ErrorReply | None = None

    @field_validator("message", mode="before")
    @classmethod
    def _message(cls, value: Any) -> Any:
        return None if value is None else _message_content(value)

    @field_validator("error", mode="before")
    @classmethod
    def _error(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_kind(self) -> Reply:
        if sum(x is not None for x in (self.message, self.task, self.error)) != 1:
            raise ValueError("a reply has exactly one of `message`, `task`, `error`")
        return self


class Fault(_Model):
    """A reply delivered badly, for clients that must survive it."""

    status: int | None = Field(None, ge=400, le=599, description="answer with this HTTP status instead")
    body: str | None = Field(None, description="the body sent with `status` (default: the protocol's error)")
    delayMs: int | None = Field(None, ge=0, description="wait this long before answering or the first event")
    dropAfter: int | None = Field(None, ge=0, description="streams: drop the connection after N events")
    errorAfter: int | None = Field(None, ge=0, description="streams: an error event after N events, then close")
    error: ErrorReply | None = Field(None, description="the error event of errorAfter (default Internal)")

    @field_validator("error", mode="before")
    @classmethod
    def _error(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value


class TaskMatch(_Model):
    """A follow-up on a live task: the call names a task in this state, created by `from`."""

    state: StateName | list[StateName] | None = None
    from_: str | None = Field(None, alias="from", description="name of the interaction that created the task")

    @field_validator("state")
    @classmethod
    def _state(cls, value: Any) -> Any:
        if value is None:
            return None
        values = value if isinstance(value, list) else [value]
        return [TaskState.parse(v).value for v in values]


class Match(_Model):
    """Request matchers; every given matcher must hold. Predicates are checked by the engine."""

    operation: str | list[str] | None = Field(
        None, description="SendMessage (default for message calls), GetTask, CancelTask, ListTasks…"
    )
    text: Any = Field(None, description="predicate on all text parts of the message, joined by newlines")
    parts: Any = Field(None, description="predicate on the message's parts, e.g. {none: {mediaType: text/x-diff}}")
    where: dict[str, Any] = Field(default_factory=dict, description="path → predicate on params")
    headers: dict[str, Any] = Field(default_factory=dict, description="header name → predicate")
    task: TaskMatch | None = None


class Interaction(_Model):
    """A matcher and the reply it selects, usable `times` times (unlimited when unset)."""

    name: str
    match: Match = Field(default_factory=Match)
    reply: Reply | None = None
    fault: Fault | None = None
    times: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _has_answer(self) -> Interaction:
        if self.reply is None and (self.fault is None or self.fault.status is None):
            raise ValueError("an interaction needs a `reply` (or a `fault` with a `status`)")
        return self


class Skill(_Model):
    id: str
    name: str
    description: str
    tags: list[str] = Field(default_factory=list)
    examples: list[str] | None = None
    inputModes: list[str] | None = None
    outputModes: list[str] | None = None


class Capabilities(_Model):
    streaming: bool = False
    pushNotifications: bool = False
    extendedAgentCard: bool = False
    extensions: list[dict[str, Any]] | None = None


class Agent(_Model):
    """Facts for the agent card; interface URLs are filled in by the server."""

    name: str
    description: str
    version: str = "1.0.0"
    provider: dict[str, Any] | None = None
    documentationUrl: str | None = None
    iconUrl: str | None = None
    capabilities: Capabilities = Field(default_factory=Capabilities)
    defaultInputModes: list[str] = Field(default_factory=lambda: ["text/plain"], min_length=1)
    defaultOutputModes: list[str] = Field(default_factory=lambda: ["text/plain"], min_length=1)
    skills: list[Skill] = Field(min_length=1)
    bindings: list[Literal["JSONRPC", "HTTP+JSON"]] = Field(
        default_factory=lambda: ["JSONRPC", "HTTP+JSON"], min_length=1,
        description="interfaces in the card, in preference order",
    )
    tenant: str | None = None
    securitySchemes: dict[str, Any] | None = None
    securityRequirements: list[dict[str, Any]] | None = None
    extendedCard: dict[str, Any] | None = Field(
        None, description="card fields that GetExtendedAgentCard adds or replaces"
    )
    v03Card: bool = Field(
        False, description="also publish the A2A v0.3 card fields (url, preferredTransport, protocolVersion, …)"
    )


class Duration(_Model):
    ms: int = Field(ge=0)


class Clock(_Model):
    start: datetime | None = Field(None, description="virtual start time; unset = now (freezegun-aware)")
    tick: Duration = Field(default_factory=lambda: Duration(ms=250), description="added per timestamp")
    pace: str = Field("recorded", pattern=r"^(recorded|instant|scale=\d+(\.\d+)?)$",
                      description="streams: gaps as scripted, none, or scaled (scale=0.5)")
    paceCapMs: int | None = Field(None, ge=0, description="streams: no gap longer than this")


class Ids(_Model):
    seed: str | None = Field(None, description="seed of the uuid5 id factory; unset = the agent name")


class AgentexAgent(_Model):
    """An Agentex agent: answers at `/agents/{id}/rpc` and `/agents/name/{name}/rpc`."""

    id: str
    name: str
    description: str = ""
    acp_type: Literal["sync", "async", "agentic"] = "sync"
    status: str = "Ready"


class Cassette(_Model):
    """A cassette file: its agent(s), its clock and ids, and its interactions in priority order."""

    version: Literal[1]
    protocol: Literal["a2a", "agentex"] = "a2a"
    agent: Agent | None = Field(None, description="A2A: the agent card's facts")
    agents: list[AgentexAgent] = Field(default_factory=list, description="Agentex: the agents served")
    clock: Clock = Field(default_factory=Clock)
    ids: Ids = Field(default_factory=Ids)
    interactions: list[Interaction] = Field(default_factory=list)

    @property
    def name(self) -> str:
        """The agent's name (A2A) or the first agent's (Agentex): the default id seed."""
        return self.agent.name if self.agent is not None else self.agents[0].name

    @model_validator(mode="after")
    def _agents_for_protocol(self) -> Cassette:
        if self.protocol == "a2a" and self.agent is None:
            raise ValueError("an A2A cassette needs `agent:` (the card's facts)")
        if self.protocol == "agentex" and not self.agents:
            raise ValueError("an Agentex cassette needs `agents:` (id, name, acp_type)")
        steps = [step for i in self.interactions if i.reply and i.reply.task for step in i.reply.task.steps]
        if self.protocol == "agentex" and any(i.reply and i.reply.message is not None for i in self.interactions):
            raise ValueError("an Agentex reply is a task script: write the agent's messages as `say` steps")
        if self.protocol == "a2a":
            if any(step.say is not None for step in steps):
                raise ValueError("`say` steps are Agentex messages; an A2A task speaks through `state` messages")
            agentex_only = {str(s.state) for s in steps if s.task_state in AGENTEX_STATES}
            if agentex_only:
                raise ValueError(f"states {sorted(agentex_only)} are Agentex's; A2A has no such TaskState")
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> Cassette:
        seen: set[str] = set()
        for interaction in self.interactions:
            if interaction.name in seen:
                raise ValueError(f"two interactions are named {interaction.name!r}")
            seen.add(interaction.name)
        return self
