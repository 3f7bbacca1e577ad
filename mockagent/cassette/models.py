"""The cassette format, version 1, as pydantic models; the JSON Schema is generated from these.

Protocol objects inside a cassette (message parts, artifacts, skills' extra fields) are written in
A2A v1.0 ProtoJSON (camelCase, flat parts) and kept as plain JSON (see `content`); everything that
is mockagent's own structure is a model with `extra="forbid"`, so a typo is an error that names
the field. The models are strict (no `"3"` for 3, no `1` for true), as JSON Schema is, and the
rules between fields (`rules`) are checked on load and stated in the schema alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from mockagent.cassette.base import MAX_COUNT, Count, ErrorStatus, Millis, Model, Positive
from mockagent.cassette.choices import (
    AGENTEX_STATE_SPELLINGS,
    ERROR_NAMES,
    ErrorName,
    Operation,
    StateName,
)
from mockagent.cassette.content import ArtifactContent, Finite, MessageContent
from mockagent.cassette.header import (
    Agent,
    AgentexAgent,
    Capabilities,
    Clock,
    Duration,
    History,
    Ids,
    Skill,
)
from mockagent.cassette.names import KnownOrigins, Name, UniqueNames
from mockagent.cassette.predicates import (
    HeaderPredicates,
    Predicates,
    StrictPredicate,
    TextPredicate,
)
from mockagent.cassette.rules import (
    Absent,
    AnyGiven,
    ExactlyOne,
    Given,
    Needs,
    NoneOf,
    When,
)
from mockagent.cassette.states import (
    AGENTEX_STATES,
    ALIASES,
    TERMINAL_STATES,
    TaskState,
)
from mockagent.cassette.webhooks import Webhooks
from mockagent.vocabulary import OPERATIONS

# The header's models, the states and the base are found here too, where they always were.
__all__ = [
    "AGENTEX_STATES",
    "ALIASES",
    "TERMINAL_STATES",
    "After",
    "Agent",
    "AgentexAgent",
    "Capabilities",
    "Cassette",
    "Clock",
    "Count",
    "Duration",
    "ErrorReply",
    "Fault",
    "History",
    "Ids",
    "Interaction",
    "Match",
    "Model",
    "Opening",
    "Reply",
    "Skill",
    "Step",
    "TaskMatch",
    "TaskReply",
    "TaskState",
    "Webhooks",
]


class After(Model):
    """When a step becomes visible, counted from the previous step."""

    polls: Count | None = Field(None, description="GetTask calls on the task to wait for")
    ms: Millis | None = Field(
        None, description="milliseconds on the cassette clock (at most a day: 86400000)"
    )
    subscribers: Count | None = Field(
        None,
        description=(
            "streams: wait until this many subscriptions have opened on the task (recorded: a "
            "subscription opened here while the task was streamed)"
        ),
    )
    finds: Count | None = Field(
        None,
        description=(
            "Agentex: get-or-create calls (task/create of its name) to wait for; only such a "
            "call shows the step, never a poll, the clock or a blocking call"
        ),
    )
    strict: bool = Field(
        False,
        description=(
            "with `polls`: only those polls show the step, even in a CreateTask script (which "
            "otherwise plays through its polls gates as it creates the task), never a blocking "
            "call, the clock or a stream; recorded where a poll showed an Agentex task that no "
            "turn had run on change"
        ),
    )

    rules = (Needs("strict", "polls", "`strict` belongs to a `polls` gate", when=True),)


_ARTIFACT_ONLY = "`append` and `lastChunk` belong to an `artifact` step"


class Step(Model):
    """One step of a task script: a status change, an artifact update or (Agentex) a message."""

    state: StateName | None = None
    message: MessageContent | None = Field(None, description="status message")
    statusReason: str | None = Field(
        None,
        description=(
            "Agentex: the task's `status_reason` from this state on (a field, not a message: "
            "it never joins the history); unset, it is the `message` text"
        ),
    )
    artifact: ArtifactContent | None = None
    say: Annotated[str | dict[str, Any], Finite] | None = Field(
        None, description="Agentex: an agent message (TaskMessageContent, or a string for text)"
    )
    deltas: Annotated[list[Any], Finite] | None = Field(
        None, description="Agentex: streamed as these deltas (text pieces or delta objects) first"
    )
    start: bool = Field(
        True,
        description=(
            "Agentex streams: false when the message went out without a `start` update "
            "(its `full`, or its first delta, opens it)"
        ),
    )
    append: bool = False
    lastChunk: bool = False
    after: After | None = None

    rules = (
        ExactlyOne(("state", "artifact", "say"), "a step has one of `state`, `artifact` or `say`"),
        Needs("deltas", "say", "`deltas` belong to a `say` step"),
        Needs("message", "state", "`message` belongs to a `state` step"),
        Needs("statusReason", "state", "`statusReason` belongs to a `state` step"),
        Needs("start", "say", "`start: false` belongs to a `say` step", when=False),
        Needs("append", "artifact", _ARTIFACT_ONLY, when=True),
        Needs("lastChunk", "artifact", _ARTIFACT_ONLY, when=True),
    )

    @field_validator("say", mode="before")
    @classmethod
    def _say(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"type": "text", "author": "agent", "content": value, "format": "plain"}
        if isinstance(value, dict):
            return {"author": "agent", **value}
        return value

    @property
    def task_state(self) -> TaskState | None:
        return None if self.state is None else TaskState(self.state)


Opening = Literal["task", "task-as-is", "update"]
"""How a stream answering a message opens (`TaskReply.first`)."""


class TaskReply(Model):
    """A task script: the steps run in order, gated by their `after`."""

    steps: list[Step] = Field(min_length=1)
    metadata: Annotated[dict[str, Any], Finite] | None = None
    first: Opening | None = Field(
        None,
        description=(
            "A2A streams: what opens a SendStreamingMessage stream. `task` (unset): a Task "
            "showing the first step; `task-as-is`: a Task as it was when the call came, "
            "before any step; `update`: no Task, the first step's update opens the stream"
        ),
    )
    firstSteps: int | None = Field(
        None,
        ge=1,
        le=MAX_COUNT,
        description=(
            "A2A streams opened by a Task (`first: task`): how many steps that Task shows "
            "together, with no update of their own (unset: 1)"
        ),
    )


class ErrorReply(Model):
    """A protocol error by neutral name (`TaskNotFound`) and an optional message."""

    name: ErrorName
    message: str | None = None
    details: Annotated[list[dict[str, Any]], Finite] | None = Field(
        None,
        description=(
            "every detail the error carries (google.rpc detail objects: JSON-RPC `data`, "
            "REST `details`), in place of mockagent's own ErrorInfo; a recording writes "
            "them when the agent's differ from that. `[{type: …}]` is a v0.3 agent's own REST "
            "error type: sent as it is over v0.3 REST, in the kind's ErrorInfo `metadata` "
            "over v1.0"
        ),
    )
    status: ErrorStatus | None = Field(
        None,
        description=(
            "REST: the HTTP status of the error answer (unset: the error's own, 404 for "
            "TaskNotFound…); a recording writes the agent's where it differs"
        ),
    )


def _error_name(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


@dataclass(frozen=True, eq=False)  # hashed by identity: `Error | None` hashes its metadata
class _OrWritten:
    """In the JSON Schema, `shorthand` is another way to write the field's value."""

    shorthand: dict[str, Any]

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        return {"anyOf": [self.shorthand, handler(core_schema)]}


Error = Annotated[
    ErrorReply, BeforeValidator(_error_name), _OrWritten({"type": "string", "enum": ERROR_NAMES})
]
"""An error by name, or `{name, message}`."""


class Reply(Model):
    """Exactly one of `message` (direct reply), `task` (script) or `error`."""

    message: MessageContent | None = None
    task: TaskReply | None = None
    error: Error | None = None

    rules = (
        ExactlyOne(
            ("message", "task", "error"), "a reply has exactly one of `message`, `task`, `error`"
        ),
    )


class Fault(Model):
    """A reply delivered badly, for clients that must survive it."""

    status: ErrorStatus | None = Field(None, description="answer with this HTTP status instead")
    body: str | None = Field(
        None, description="the body sent with `status` (default: the protocol's error)"
    )
    delayMs: Millis | None = Field(
        None,
        description="wait this long (ms, at most a day) before answering or the first event",
    )
    dropAfter: Count | None = Field(None, description="streams: drop the connection after N events")
    closeAfter: Count | None = Field(
        None, description="streams: end the stream cleanly after N events (a subscription too)"
    )
    errorAfter: Count | None = Field(
        None, description="streams: an error event after N events, then close"
    )
    error: Error | None = Field(
        None, description="the error event of errorAfter (default Internal)"
    )


class TaskMatch(Model):
    """A follow-up on a live task: the call names a task in this state, created by `from`; or,
    with `known: false`, a call that names no task the replay knows (a made-up id)."""

    state: StateName | list[StateName] | None = None
    from_: str | None = Field(
        None, alias="from", description="name of the interaction that created the task"
    )
    known: bool = Field(
        True, description="false: the call names no task this replay knows (an id made up)"
    )

    @model_validator(mode="after")
    def _unknown_alone(self) -> TaskMatch:
        if not self.known and (self.state is not None or self.from_ is not None):
            raise ValueError("`known: false` names no task: it takes no `state` or `from`")
        return self

    @field_validator("state")
    @classmethod
    def _state(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class Match(Model):
    """Request matchers; every given matcher must hold."""

    operation: Operation | list[Operation] | None = Field(
        None, description="SendMessage (default for message calls), GetTask, CancelTask, ListTasks…"
    )
    text: TextPredicate = Field(
        None, description="predicate on all text parts of the message, joined by newlines"
    )
    parts: StrictPredicate = Field(
        None, description="predicate on the message's parts, e.g. {none: {mediaType: text/x-diff}}"
    )
    where: Predicates = Field(default_factory=dict, description="path → predicate on params")
    headers: HeaderPredicates = Field(default_factory=dict, description="header name → predicate")
    task: TaskMatch | None = None


class Interaction(Model):
    """A matcher and the reply it selects, usable `times` times (unlimited when unset)."""

    name: Name
    match: Match = Field(default_factory=Match)
    reply: Reply | None = None
    fault: Fault | None = None
    times: Positive | None = None

    rules = (
        When(
            ("match", "operation"),
            "SubscribeToTask",
            default=None,
            # a subscription answers with the task as it is: a fault alone may cut it off
            then=(
                AnyGiven((("reply",), ("fault",)), "an interaction needs a `reply` or a `fault`"),
            ),
            otherwise=(
                AnyGiven(
                    (("reply",), ("fault", "status")),
                    "an interaction needs a `reply` (or a `fault` with a `status`)",
                ),
            ),
        ),
    )


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):  # pydantic takes true for 1 here, JSON Schema does not
        raise ValueError("write `version: 1`")
    return value


def _operations_not_of(protocol: str) -> NoneOf:
    """No `match.operation` names an operation only the other protocol has."""
    others = sorted(set().union(*OPERATIONS.values()) - OPERATIONS[protocol])
    known = ", ".join(sorted(OPERATIONS[protocol]))
    return NoneOf(
        ("interactions", "*", "match", "operation"),
        others,
        others,
        lambda word: f"{protocol} has no operation {word!r}; use one of {known}",
    )


class Cassette(Model):
    """A cassette file: its agent(s), its clock and ids, and its interactions in priority order."""

    version: Annotated[Literal[1], BeforeValidator(_not_a_bool)]
    protocol: Literal["a2a", "agentex"] = "a2a"
    agent: Agent | None = Field(None, description="A2A: the agent card's facts")
    agents: list[AgentexAgent] = Field(
        default_factory=list, description="Agentex: the agents served"
    )
    clock: Clock = Field(default_factory=Clock)
    ids: Ids = Field(default_factory=Ids)
    webhooks: Webhooks = Field(
        default_factory=Webhooks,
        description="A2A push notifications: where they may go besides loopback",
    )
    interactions: list[Interaction] = Field(default_factory=list)

    @property
    def name(self) -> str:
        """The agent's name (A2A) or the first agent's (Agentex): the default id seed."""
        return self.agent.name if self.agent is not None else self.agents[0].name

    rules = (
        When(
            "protocol",
            "agentex",
            default="a2a",
            then=(
                Given(
                    "agents",
                    "an Agentex cassette needs `agents:` (id, name, acp_type)",
                    nonempty=True,
                ),
                Absent(
                    ("interactions", "*", "reply", "message"),
                    "an Agentex reply is a task script: write the agent's messages as `say` steps",
                ),
                Absent(
                    ("interactions", "*", "reply", "task", "first"),
                    "`first` says how an A2A stream opens; "
                    "an Agentex stream opens with what the first steps say",
                ),
                _operations_not_of("agentex"),
            ),
            otherwise=(
                Given("agent", "an A2A cassette needs `agent:` (the card's facts)"),
                Absent(
                    ("interactions", "*", "reply", "task", "steps", "*", "say"),
                    "`say` steps are Agentex messages; an A2A task speaks through `state` messages",
                ),
                Absent(
                    ("interactions", "*", "reply", "task", "steps", "*", "statusReason"),
                    "`statusReason` is an Agentex task's; an A2A status speaks through `message`",
                ),
                NoneOf(
                    ("interactions", "*", "reply", "task", "steps", "*", "state"),
                    {state.value for state in AGENTEX_STATES},
                    AGENTEX_STATE_SPELLINGS,
                    lambda value: (
                        f"TASK_STATE_{TaskState(value).name} is Agentex's; "
                        "A2A has no such TaskState"
                    ),
                ),
                _operations_not_of("a2a"),
            ),
        ),
        UniqueNames(),
        KnownOrigins(),
    )
