"""Rules about interaction names, which JSON Schema cannot state (it does not compare one value
with another): the loader's alone, listed in the schema's description instead.

Each rule reads the names as written, so the loader also checks them on a cassette that has
other problems (the models' rules run only where every field is valid): all are reported at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator, StringConstraints

from mockagent.cassette.rules import Found
from mockagent.cassette.suggestions import suggestion

_CONTROL = "\\x00-\\x1f\\x7f-\\x9f"  # Unicode's Cc: C0, DEL and C1
_CONTROLS = re.compile(f"[{_CONTROL}]")


def control_character(name: str) -> str | None:
    """Why `name` cannot be a name (the control character it holds, and where); None if it can.
    Names go into URLs, logs, the journal and error messages, where a control character (a
    newline, an escape) would forge a line or break the name."""
    found = _CONTROLS.search(name)
    if found is None:
        return None
    return (
        f"a name holds no control characters; this one has {found.group()!r} "
        f"at character {found.start() + 1}"
    )


def _plain(value: Any) -> Any:
    """A name with a control character is refused, saying which one."""
    if isinstance(value, str) and (why := control_character(value)) is not None:
        raise ValueError(why)
    return value


Name = Annotated[str, StringConstraints(pattern=f"^[^{_CONTROL}]*$"), BeforeValidator(_plain)]
"""An agent's or an interaction's name: any text but control characters."""


def twins(names: list[Any]) -> Found:
    """A problem for each interaction whose name an earlier one has."""
    seen: set[str] = set()
    found: Found = []
    for i, name in enumerate(names):
        if not isinstance(name, str):
            continue
        if name in seen:
            found.append((("interactions", i, "name"), f"two interactions are named {name!r}"))
        seen.add(name)
    return found


def unknown_origins(names: list[Any], origins: list[Any]) -> Found:
    """A problem for each follow-up whose `from` (by interaction, None for none) names no
    interaction."""
    known = list(dict.fromkeys(name for name in names if isinstance(name, str)))
    found: Found = []
    for i, origin in enumerate(origins):
        if isinstance(origin, str) and origin not in known:
            found.append(
                (
                    ("interactions", i, "match", "task", "from"),
                    f"names {origin!r}, which is no interaction of this cassette; "
                    + suggestion(origin, known),
                )
            )
    return found


def written_problems(data: dict[str, Any]) -> Found:
    """Both rules over a cassette's plain data (a mapping as read from the file)."""
    items = data.get("interactions")
    if not isinstance(items, list):
        return []
    items = [item if isinstance(item, dict) else {} for item in items]
    names = [item.get("name") for item in items]
    origins = [_at(item, "match", "task", "from") for item in items]
    return twins(names) + unknown_origins(names, origins)


def _at(value: Any, *path: str) -> Any:
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


@dataclass(frozen=True)
class UniqueNames:
    """No two interactions share a name."""

    def violations(self, cassette: Any) -> Found:
        return twins([interaction.name for interaction in cassette.interactions])

    def schema(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class KnownOrigins:
    """A follow-up's `from` names an interaction of the cassette."""

    def violations(self, cassette: Any) -> Found:
        interactions = cassette.interactions
        origins = [i.match.task.from_ if i.match.task is not None else None for i in interactions]
        return unknown_origins([interaction.name for interaction in interactions], origins)

    def schema(self) -> dict[str, Any]:
        return {}
