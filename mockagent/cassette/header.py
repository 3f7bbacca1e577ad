"""The parts of a cassette around its interactions: the agent(s) it serves, its clock, its ids."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BeforeValidator, Field, Strict
from pydantic.json_schema import WithJsonSchema

from mockagent.cassette.base import BLANK, Millis, Model
from mockagent.cassette.content import Finite
from mockagent.cassette.names import Name

Binding = Literal["JSONRPC", "HTTP+JSON", "GRPC"]
"""The A2A bindings a card lists; GRPC only while gRPC is served (`serve --grpc-port`)."""


class Skill(Model):
    """A skill of the card; only `id` is needed."""

    id: str
    name: Annotated[str, BLANK] = Field(
        default_factory=lambda skill: skill["id"], description="unset: the skill's `id`"
    )
    description: Annotated[str, BLANK] = Field(
        default_factory=lambda skill: skill["name"], description="unset: the skill's `name`"
    )
    tags: list[str] = Field(default_factory=list)
    examples: list[str] | None = None
    inputModes: list[str] | None = None
    outputModes: list[str] | None = None


class Capabilities(Model):
    streaming: bool = False
    pushNotifications: bool = False
    extendedAgentCard: bool = False
    extensions: Annotated[list[dict[str, Any]], Finite] | None = None


ErrorTable = Literal["1.0.1", "1.0.0"]
"""The A2A specification whose error table an agent answers with (gRPC codes, REST statuses)."""

StatusMessageJoins = Literal["when-replaced", "when-set", "never"]
StatusAfterAnswer = Literal["archived", "kept"]


class History(Model):
    """How the agent keeps its status messages in a task's history (agents differ, within what
    the A2A specification allows). The defaults are a2a-sdk's task manager, and mockagent's."""

    statusMessage: StatusMessageJoins = Field(
        "when-replaced",
        description=(
            "when a status message joins the history: when the next status replaces it, or "
            "as soon as it is set (the same message then stands in the status and in history), "
            "or never (the history holds the user's messages and what the agent said, and a "
            "replaced status message is gone)"
        ),
    )
    afterAnswer: StatusAfterAnswer = Field(
        "archived",
        description=(
            "a user's message on the task: the status message is `archived` (it leaves the "
            "status, in history before the user's message) or `kept` as the status until the "
            "next status step"
        ),
    )


class V03Wire(Model):
    """How the agent speaks A2A v0.3 where agents differ, within what v0.3 allows. The defaults
    are mockagent's own v0.3 rendering; a recording writes what the agent did otherwise."""

    interruptedFinal: bool = Field(
        True,
        description=(
            "message/stream: the status update that stops at INPUT_REQUIRED or AUTH_REQUIRED "
            "says `final: true`; false: `final: false` (JSON-RPC) or no `final` (REST), as "
            "a2a-sdk 1.x's v0.3 compat does (final at terminal states only)"
        ),
    )
    errorData: Literal["omitted", "null"] = Field(
        "omitted",
        description="JSON-RPC: an error answer without details has no `data`, or `data: null`",
    )
    restErrors: Literal["type", "status"] = Field(
        "type",
        description=(
            "REST: errors as `{message, type}` (a2a-sdk 0.3), or `status`: the "
            "`google.rpc.Status` body of v1.0 (a2a-sdk 1.x's v0.3 compat)"
        ),
    )


def _default_skills(agent: dict[str, Any]) -> list[Skill]:
    """A card lists one skill at least (A2A): an agent that names none does what it is named."""
    name = agent.get("name", "agent")
    description = agent.get("description", name)
    return [Skill(id="default", name=name, description=description, tags=["default"])]


class Agent(Model):
    """Facts for the agent card; interface URLs are filled in by the server."""

    name: Name
    description: Annotated[str, BLANK] = Field(
        default_factory=lambda agent: agent.get("name", "agent"),
        description="the card's description; unset: the agent's `name`",
    )
    version: str = "1.0.0"
    provider: Annotated[dict[str, Any], Finite] | None = None
    documentationUrl: str | None = None
    iconUrl: str | None = None
    capabilities: Capabilities = Field(default_factory=Capabilities)
    defaultInputModes: list[str] = Field(default_factory=lambda: ["text/plain"], min_length=1)
    defaultOutputModes: list[str] = Field(default_factory=lambda: ["text/plain"], min_length=1)
    skills: list[Skill] = Field(
        default_factory=_default_skills,
        min_length=1,
        description=(
            "the card's skills, one at least; unset: one skill `{id: default, name: <the "
            "agent's name>, description: <its description>, tags: [default]}`"
        ),
    )
    bindings: list[Binding] = Field(
        default_factory=lambda: list(get_args(Binding)),
        min_length=1,
        description="interfaces in the card, in preference order (GRPC is listed only while "
        "gRPC is served: `mockagent serve --grpc-port`)",
    )
    tenant: str | None = None
    securitySchemes: Annotated[dict[str, Any], Finite] | None = None
    securityRequirements: Annotated[list[dict[str, Any]], Finite] | None = None
    extendedCard: Annotated[dict[str, Any], Finite] | None = Field(
        None, description="card fields that GetExtendedAgentCard adds or replaces"
    )
    v03Card: bool = Field(
        False,
        description="also publish the A2A v0.3 card fields (url, preferredTransport…)",
    )
    history: History | None = Field(
        None, description="how the agent keeps status messages in history (not in the card)"
    )
    v03: V03Wire | None = Field(
        None, description="how the agent speaks A2A v0.3 where agents differ (not in the card)"
    )
    errorTable: ErrorTable = Field(
        "1.0.1",
        description=(
            "the A2A specification whose error table the agent answers with (not in the card): "
            "1.0.1 (a2a-sdk), or 1.0.0, as the TCK (1.0-dev) checks and a2a-java answers: "
            "gRPC UNIMPLEMENTED for PushNotificationNotSupported, UnsupportedOperation and "
            "VersionNotSupported (not FAILED_PRECONDITION), and HTTP 409 for "
            "TaskNotCancelable, 415 for ContentTypeNotSupported, 502 for InvalidAgentResponse "
            "(not 400, 400, 500); JSON-RPC codes are the same"
        ),
    )
    # Signed cards (issue 25): one field, kept apart from the card facts above.
    signed: bool = Field(
        False,
        description="serve the card signed (JWS, EdDSA) with a key derived from the cassette's "
        "id seed; the public key at /.well-known/jwks.json (needs `mockagent-server[signing]`)",
    )


class Duration(Model):
    ms: Millis


def _time(value: Any) -> Any:
    """A YAML timestamp, or a string in RFC 3339 form (not Unix seconds, which pydantic takes)."""
    if isinstance(value, str) and not re.fullmatch(RFC3339, value):
        raise ValueError("a time is written like 2026-10-06T09:00:00Z")
    if value is not None and not isinstance(value, str | datetime):
        raise ValueError("a time is written like 2026-10-06T09:00:00Z")
    return value


_AFTER_YEAR = (
    r"-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
RFC3339 = r"[0-9]{4}" + _AFTER_YEAR
YEARS = (1000, 8999)
"""The years a clock may start in, as written: a thousand years on, timestamps stop at
9999-12-31T23:59:59.999Z, where a datetime and a protobuf Timestamp do."""
_YEAR = r"(1[0-9]{3}|[2-8][0-9]{3})"  # YEARS, for the JSON Schema


def _within(value: datetime) -> datetime:
    """A start the clock can count from for a thousand years (any zone turns it into UTC)."""
    if not YEARS[0] <= value.year <= YEARS[1]:
        raise ValueError(
            f"the year must be from {YEARS[0]} to {YEARS[1]}, which leaves the clock a "
            "thousand years to move on"
        )
    return value


# Not strict: the string is parsed (strict pydantic takes only datetime objects from Python).
Time = Annotated[
    datetime,
    BeforeValidator(_time),
    AfterValidator(_within),
    Strict(False),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": f"^{_YEAR}{_AFTER_YEAR}$"}),
]


PACE = r"^(recorded|instant|scale=([0-9]{1,3}(\.[0-9]+)?|1000(\.0+)?))$"


def _pace(value: Any) -> Any:
    """The pattern's own words would say little: say what a pace is."""
    if isinstance(value, str) and not re.fullmatch(PACE, value):
        raise ValueError("a pace is recorded, instant or scale=F (F from 0 to 1000, as 0.5)")
    return value


class Clock(Model):
    start: Time | None = Field(
        None,
        description=(
            "virtual start time, in the years 1000 to 8999; unset = now (freezegun-aware)"
        ),
    )
    tick: Duration = Field(
        default_factory=lambda: Duration(ms=250),
        description="added per timestamp (ms, at most a day)",
    )
    # [0-9], not \d: pydantic's regex and JSON Schema's differ on what a digit is. The pattern
    # bounds the factor: 0 to 1000 (MAX_SCALE).
    pace: Annotated[str, BeforeValidator(_pace)] = Field(
        "recorded",
        pattern=PACE,
        description="streams: gaps as scripted, none, or scaled (scale=0.5; at most scale=1000)",
    )
    paceCapMs: Millis | None = Field(
        None, description="streams: no gap longer than this (ms, at most a day)"
    )


class Ids(Model):
    seed: str | None = Field(
        None, description="seed of the uuid5 id factory; unset = the agent name"
    )


class AgentexAgent(Model):
    """An Agentex agent: answers at `/agents/{id}/rpc` and `/agents/name/{name}/rpc`."""

    id: Name
    name: Name
    description: Annotated[str, BLANK] = ""
    acp_type: Literal["sync", "async", "agentic"] = "sync"
    status: str = "Ready"
