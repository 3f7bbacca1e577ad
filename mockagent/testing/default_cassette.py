"""Which cassette a test gets when its marker names none, and the agent it meets when that cassette
is not there yet.

As pytest-recording does, a test's cassette is named after the test:
`<test file's directory>/cassettes/<module>/<test>.yaml`, where the folder (`cassettes/{module}`) is
the `cassette_dir` setting. In record mode `none` with no file there, the test meets an agent with
no interactions, built from the `agent=` setting (the card facts a cassette's `agent:` holds) or a
default card, for a test that adds its interactions in Python.

Imports nothing heavy at module level (the plugin imports it in every pytest session).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockagent.cassette.store import LoadedCassette

DEFAULT_DIR = "cassettes/{module}"
"""Where a test's own cassette goes, relative to the test file's directory."""

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

# Characters a file name keeps: a parametrized id such as `test_x[a/b: c]` becomes `test_x[a-b-c]`.
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\[\]=+,-]+")


def file_name(test_name: str, class_name: str | None = None) -> str:
    """A test's cassette file name: `test_x.yaml`, `TestY.test_x.yaml`, and for a parametrized test
    its id with every character a file system might refuse (`/`, `:`, spaces…) replaced by `-`."""
    name = f"{class_name}.{test_name}" if class_name else test_name
    safe = _UNSAFE.sub("-", name).strip("-.") or "test"
    return safe[:200] + ".yaml"  # file systems stop at 255 bytes


def default_path(
    test_file: Path, test_name: str, class_name: str | None = None, cassette_dir: Any = None
) -> Path:
    """`<test file's directory>/<cassette_dir>/<test>.yaml`; `{module}` in `cassette_dir` is the
    test module's name, and an absolute `cassette_dir` is used as it is."""
    folder = str(cassette_dir if cassette_dir is not None else DEFAULT_DIR)
    return (
        test_file.parent
        / folder.replace("{module}", test_file.stem)
        / file_name(test_name, class_name)
    )


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

    from mockagent.cassette.models import Cassette
    from mockagent.cassette.problems import every_problem
    from mockagent.cassette.store import LoadedCassette, describe
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
