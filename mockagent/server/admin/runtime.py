"""Interactions added, removed and verified while the server runs (the admin API's
`/_mockagent/interactions…` and `/_mockagent/cassette`, and the fixture's `expect`). Framework
free, as `mockagent.server.admin.control` is: the admin API translates HTTP, the fixture calls these
as they are. A refused change raises `ControlError` with the status the table below gives it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockagent import errors
from mockagent.dialects.http import parse_json
from mockagent.engine.interactions import LineOf, as_items, parse_body
from mockagent.engine.replay import Engine
from mockagent.server.admin.control import ControlError, call_view, engines, interaction_summary

if TYPE_CHECKING:
    from mockagent.server.mounts import Mounts

STATUS: dict[type[errors.MockagentError], int] = {
    errors.UnknownInteraction: 404,
    errors.DuplicateInteraction: 409,
    errors.InteractionFollowed: 409,
    errors.SharedInteractions: 409,
    errors.UnplayableInteraction: 422,
    errors.CassetteError: 400,
}
"""The HTTP status of each refusal (the first class an error is an instance of)."""

FOLLOW_UPS = "(a task and the follow-ups that continue it go in one body: a list is added at once)"
"""Said after a refused task whose gate only a follow-up opens."""

BODY = "body"
"""What errors in a request body's interactions name as their file."""


def refusal(exc: errors.MockagentError) -> ControlError:
    """The admin API's error for a refused change."""
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 400)
    if not isinstance(exc, errors.UnplayableInteraction):
        return ControlError(status, str(exc))
    findings = [
        {
            "interaction": finding.interaction,
            "code": finding.code,
            "message": finding.message,
            "line": finding.line,
            "shadowedBy": finding.shadowed_by,
        }
        for finding in exc.findings
    ]
    waits = any(finding.awaits_follow_up for finding in exc.findings)
    message = f"{exc}\n{FOLLOW_UPS}" if waits else str(exc)
    return ControlError(status, message, {"findings": findings})


def one_agent(mounts: Mounts, agent: str | None) -> tuple[str, Engine]:
    """The agent a change is for: the one named, or the only one; 400 when a folder's agent is
    not named."""
    if agent is None:
        agents = list(mounts.agents)
        if len(agents) != 1:
            raise ControlError(
                400, f"name the agent with ?agent=NAME; agents: {', '.join(map(repr, agents))}"
            )
        agent = agents[0]
    return engines(mounts, agent)[0]


def having(mounts: Mounts, interaction: str, agent: str | None) -> tuple[str, Engine]:
    """The agent named (which may lack it: its engine then lists what it has), or without a name
    the one agent that has an interaction `interaction`; 404 when none has it, 400 when several
    do."""
    if agent is not None:
        return engines(mounts, agent)[0]
    found = [
        (name, engine)
        for name, engine in engines(mounts)
        if any(i.name == interaction for i in list(engine.interactions))
    ]
    if not found:
        raise ControlError(404, f"no interaction named {interaction!r} in any agent")
    if len(found) > 1:
        names = ", ".join(repr(name) for name, _ in found)
        raise ControlError(400, f"agents {names} each have {interaction!r}: add ?agent=NAME")
    return found[0]


def body_items(raw: bytes, mimetype: str) -> tuple[list[Any], LineOf | None]:
    """The interactions in a request body: JSON (by its content type), else YAML (which
    reads JSON too); the lines of a YAML body, for errors."""
    if not raw.strip():
        raise ControlError(400, "the body is empty: give an interaction or a list of them")
    try:
        if mimetype == "application/json" or mimetype.endswith("+json"):
            try:
                return as_items(parse_json(raw))[0], None
            except ValueError as exc:
                raise ControlError(400, f"the body is not JSON: {exc}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ControlError(400, "the body is not UTF-8 text") from None
        return parse_body(text, BODY)
    except errors.CassetteError as exc:
        raise ControlError(400, str(exc)) from None


def add(
    mounts: Mounts, items: list[Any], agent: str | None = None, line_of: LineOf | None = None
) -> dict[str, Any]:
    """Add `items` (interactions as a cassette writes them) to one agent: tried before its
    own, after those added before."""
    name, engine = one_agent(mounts, agent)
    try:
        added = engine.add_interactions(items, BODY if line_of else "", line_of)
    except errors.MockagentError as exc:
        raise refusal(exc) from None
    return {
        "agent": name,
        "added": [interaction.name for interaction in added],
        "interactions": len(engine.interactions),
    }


def remove(mounts: Mounts, interaction: str, agent: str | None = None) -> dict[str, Any]:
    """Remove one agent's interaction `interaction` (until a reset brings back the cassette's).
    Without `agent`, the one agent that has it."""
    name, engine = having(mounts, interaction, agent)
    try:
        engine.remove_interaction(interaction)
    except errors.MockagentError as exc:
        raise refusal(exc) from None
    return {"agent": name, "removed": interaction, "interactions": len(engine.interactions)}


def interaction_view(mounts: Mounts, interaction: str, agent: str | None = None) -> dict[str, Any]:
    """One interaction: its summary (as `GET /_mockagent/interactions` lists it), as written
    (`definition`) and the calls it answered (as `GET /_mockagent/calls` lists them). Without
    `agent`, the one agent that has it."""
    name, engine = having(mounts, interaction, agent)
    try:
        used = engine.interaction(interaction)
    except errors.UnknownInteraction as exc:  # removed meanwhile
        raise refusal(exc) from None
    written = used.interaction.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return {
        **interaction_summary(name, engine, used),
        "definition": written,
        "calls": [call_view(name, entry) for entry in used.calls],
    }


def cassette_text(mounts: Mounts, agent: str | None = None) -> str:
    """One agent's cassette as it is now, as YAML (`$schema` line first)."""
    return one_agent(mounts, agent)[1].cassette_text()
