"""Changing a served agent's interactions: added and removed while it serves, as WireMock's stubs
and pytest-httpserver's expectations are, checked exactly as its cassette was.

The engine keeps its interactions, their compiled matchers and the index over them as three
lists that change together, under its lock. A reset brings back the cassette's own. Use counts
follow their interaction when the others move; an added one starts unused.

A shared store (`--store redis`) keeps use counts by interaction index and task scripts by step
references into the cassette, for every process and host serving it: an interaction added to
one process would not be there for the others, so the engine refuses to change its
interactions then (as the admin API's cassette loads, changes reach only the process that took
the call; here that would make the processes answer the same call differently).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockagent import errors
from mockagent.cassette.models import Cassette, Interaction
from mockagent.cassette.store import LoadedCassette, collector_paused
from mockagent.engine.index import InteractionIndex
from mockagent.engine.interactions import LineOf, exported, followers, validated
from mockagent.engine.journal import Journal, JournalEntry
from mockagent.engine.matchers import CompiledMatch

if TYPE_CHECKING:
    from mockagent.engine.taskstore import TaskStore, Transactions


@dataclass(frozen=True)
class Used:
    """An interaction, how often it was used, and the calls it answered."""

    interaction: Interaction
    uses: int
    calls: list[JournalEntry]
    line: int | None  # in the cassette; None for one added at runtime
    added: bool  # at runtime


class RuntimeInteractions:
    """The engine's interactions as they are now, and the changes made to them while it serves.
    A part of `Engine` (its attributes are the engine's)."""

    loaded: LoadedCassette
    cassette: Cassette
    interactions: list[Interaction]
    origins: list[Any]
    tasks: TaskStore
    locked: Transactions
    _matchers: list[CompiledMatch]
    _index: InteractionIndex

    @property
    def journal(self) -> Journal:  # the engine's
        raise NotImplementedError

    def line_of(self, index: int) -> int | None:
        """The cassette line of interaction `index`; None for one added at runtime."""
        origin = self.origins[index]
        return self.loaded.line_of(("interactions", origin)) if isinstance(origin, int) else None

    def add_interactions(
        self, items: Sequence[Any], source: str = "", line_of: LineOf | None = None
    ) -> list[Interaction]:
        """Add interactions (plain data, as a cassette writes them) after the others; the added.

        They are validated as the cassette was (CassetteError naming the item, the field and,
        with `line_of`, the line in `source`); DuplicateInteraction for a name already there;
        SharedInteractions with a shared store. Nothing is added unless all of them are valid.
        """
        self._refuse_shared()
        written = copy.deepcopy(list(items))  # kept as given, for the agent's cassette text
        with self.locked():
            with collector_paused():
                added = validated(self.cassette, self.interactions, written, source, line_of)
            count = len(self.interactions)
            self._install(
                [*self.interactions, *(interaction for interaction, _ in added)],
                [*self._matchers, *(matcher for _, matcher in added)],
                [*self.origins, *written],
                [*range(count), *(None for _ in added)],
            )
        return [interaction for interaction, _ in added]

    def remove_interaction(self, name: str) -> Interaction:
        """Remove the interaction named `name` (added or the cassette's own, until a reset);
        UnknownInteraction when there is none, InteractionFollowed when a follow-up that stays
        names it as its `from`. Tasks it started play on."""
        self._refuse_shared()
        with self.locked():
            index = self._position(name)
            others = [*self.interactions[:index], *self.interactions[index + 1 :]]
            following = followers(others, name)
            if following:
                raise errors.InteractionFollowed(
                    f"interaction {name!r} is the `from` of {', '.join(map(repr, following))}: "
                    "remove those first"
                )
            kept = [i for i in range(len(self.interactions)) if i != index]
            removed = self.interactions[index]
            self._install(
                others,
                [self._matchers[i] for i in kept],
                [self.origins[i] for i in kept],
                kept,
            )
        return removed

    def interaction(self, name: str) -> Used:
        """The interaction named `name`, how often it was used and the calls it answered;
        UnknownInteraction when there is none."""
        with self.locked():
            index = self._position(name)
            entries = [entry for entry in self.journal.entries if entry.interaction == name]
            return Used(
                self.interactions[index],
                self.tasks.uses[index],
                entries,
                self.line_of(index),
                not isinstance(self.origins[index], int),
            )

    def used(self) -> list[Used]:
        """Every interaction with its use count (no calls: see `interaction(name)`)."""
        with self.locked():
            uses = list(self.tasks.uses)
            return [
                Used(
                    interaction, uses[i], [], self.line_of(i), not isinstance(self.origins[i], int)
                )
                for i, interaction in enumerate(self.interactions)
            ]

    def cassette_text(self) -> str:
        """The agent's cassette as it is now (with what was added, without what was removed),
        as YAML that loads back to the same agent."""
        with self.locked():
            origins = list(self.origins)
        return exported(self.loaded, origins)

    def _position(self, name: str) -> int:
        for index, interaction in enumerate(self.interactions):
            if interaction.name == name:
                return index
        known = ", ".join(repr(interaction.name) for interaction in self.interactions)
        raise errors.UnknownInteraction(
            f"no interaction named {name!r}; the agent has {known or 'none'}"
        )

    def _refuse_shared(self) -> None:
        if self.tasks.shared:
            raise errors.SharedInteractions(
                "this agent's state is in a shared store (--store): every process and host "
                "serving it must answer alike, and an interaction added or removed here would "
                "change only this process; write it into the cassette instead, or serve "
                "without --store"
            )

    def _install(
        self,
        interactions: list[Interaction],
        matchers: list[CompiledMatch],
        origins: list[Any],
        kept: Sequence[int | None],
    ) -> None:
        """Make these the interactions (in the engine's lock): interaction i was at `kept[i]`
        before (None: new), and keeps its use count."""
        self._index = InteractionIndex(matchers)
        self.interactions, self._matchers, self.origins = interactions, matchers, origins
        self.tasks.renumber(kept)
