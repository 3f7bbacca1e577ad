"""Rules about interaction names, which JSON Schema cannot state (it does not compare one value
with another): the loader's alone, listed in the schema's description instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent.cassette.rules import Found
from mockagent.cassette.vocabulary import suggestion


@dataclass(frozen=True)
class UniqueNames:
    """No two interactions share a name."""

    def violations(self, cassette: Any) -> Found:
        seen: set[str] = set()
        found: Found = []
        for i, interaction in enumerate(cassette.interactions):
            if interaction.name in seen:
                message = f"two interactions are named {interaction.name!r}"
                found.append((("interactions", i, "name"), message))
            seen.add(interaction.name)
        return found

    def schema(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class KnownOrigins:
    """A follow-up's `from` names an interaction of the cassette."""

    def violations(self, cassette: Any) -> Found:
        names = [interaction.name for interaction in cassette.interactions]
        known = set(names)
        found: Found = []
        for i, interaction in enumerate(cassette.interactions):
            task = interaction.match.task
            if task is not None and task.from_ is not None and task.from_ not in known:
                found.append(
                    (
                        ("interactions", i, "match", "task", "from"),
                        f"names {task.from_!r}, which is no interaction of this cassette; "
                        + suggestion(task.from_, names),
                    )
                )
        return found

    def schema(self) -> dict[str, Any]:
        return {}
