"""The agent a client meets when its cassette is not there yet: an A2A agent with no interactions,
its card made of a default one under the card facts given (a cassette's `agent:`).

The pytest side serves it to a test in record mode `none` whose own cassette is not written yet;
the recording proxy replays through it what a test `expect()`s before the cassette exists.
Imports nothing heavy at module level.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockagent.cassette.loader import LoadedCassette

DEFAULT_AGENT: dict[str, Any] = {
    "name": "mockagent",
    "description": "An agent with no cassette: its interactions are added by the test.",
    "skills": [{"id": "mock", "name": "Mock", "description": "Answers what the test tells it to."}],
    # On, so that every fault an expect() names can fire: a client streams (and a `dropAfter`
    # cuts its stream) only when the card says the agent streams.
    "capabilities": {"streaming": True, "pushNotifications": True},
}
"""The card facts of an agent without a cassette, under whatever `agent=` gives (its
`capabilities` key by key)."""


def card_facts(agent: dict[str, Any]) -> dict[str, Any]:
    """DEFAULT_AGENT under `agent`; a `capabilities` dict overrides the default's key by key, so
    naming one capability keeps the others on."""
    facts = {**DEFAULT_AGENT, **agent}
    capabilities = agent.get("capabilities")
    if isinstance(capabilities, dict):
        facts["capabilities"] = {**DEFAULT_AGENT["capabilities"], **capabilities}
    return facts


def agent_without_cassette(path: Path, agent: dict[str, Any] | None) -> LoadedCassette:
    """An A2A agent with no interactions for a cassette not at `path` (yet), its card made of
    DEFAULT_AGENT overridden by `agent`; validated by the cassette model as a cassette's `agent:`
    is, so a wrong field fails the same way. Raises CassetteError."""
    from pydantic import ValidationError

    from mockagent.cassette.loader import LoadedCassette, describe
    from mockagent.cassette.models import Cassette
    from mockagent.cassette.problems import every_problem
    from mockagent.errors import CassetteError, Problem

    if agent is not None and not isinstance(agent, dict):
        raise CassetteError(
            f"agent= takes the card facts a cassette's `agent:` holds (a dict), got {agent!r}",
            path=str(path),
        )
    data = {"version": 1, "agent": card_facts(agent or {}), "interactions": []}
    try:
        cassette = Cassette.model_validate(data)
    except ValidationError as exc:
        found = every_problem(Cassette, data, exc.errors())
        problems = [Problem(f"agent= option: {describe([], *each)}") for each in found]
        raise CassetteError.of(problems) from None
    return LoadedCassette(cassette=cassette, path=str(path), missing=True)
