"""Changing a served agent's interactions: added and removed while it serves, as WireMock's stubs
and pytest-httpserver's expectations are, checked exactly as its cassette was.

The engine keeps its interactions, their compiled matchers and the index over them as three
lists that change together, under its lock. A reset brings back the cassette's own. Use counts
follow their interaction when the others move; an added one starts unused.

Added interactions are tried before the cassette's own (what a test adds for itself wins, as
WireMock's newest stub does), in the order they were added (as a cassette's lines are). Each is
checked by `mockagent lint`'s rules where it is added, in the place it takes: one that could
never do what it says (every call it matches taken by an earlier one, a fault the card never
lets fire, a gate nobody opens) is refused with lint's findings about it.

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
from typing import TYPE_CHECKING, Any, TypeVar

from mockagent import errors
from mockagent.cassette.loader import LoadedCassette, Loc, collector_paused
from mockagent.cassette.models import Cassette, Interaction
from mockagent.engine.index import InteractionIndex
from mockagent.engine.interactions import LineOf, exported, followers, validated
from mockagent.engine.journal import Journal, JournalEntry
from mockagent.engine.matchers import CompiledMatch
from mockagent.lint.run import Finding, check

if TYPE_CHECKING:
    from mockagent.engine.store.memory import TaskStore
    from mockagent.engine.store.transactions import Transactions


@dataclass(frozen=True)
class Used:
    """An interaction, how often it was used, and the calls it answered."""

    interaction: Interaction
    uses: int
    calls: list[JournalEntry]  # those the journal still keeps (its last calls)
    line: int | None  # in the cassette; None for one added at runtime
    added: bool  # at runtime
    answered: int = 0  # every call it answered, those the journal dropped included


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
        self,
        items: Sequence[Any],
        source: str = "",
        line_of: LineOf | None = None,
        follow_ups_later: bool = False,
    ) -> list[Interaction]:
        """Add interactions (plain data, as a cassette writes them) after those added before and
        before the cassette's own; the added.

        They are validated as the cassette was (CassetteError naming the item, the field and,
        with `line_of`, the line in `source`) and checked by lint's rules where they go
        (UnplayableInteraction with the findings); DuplicateInteraction for a name already
        there; SharedInteractions with a shared store. Nothing is added unless all of them
        are valid. `follow_ups_later` lets a gate through that only a follow-up still to come
        opens (`unplayable()` tells later whether one did).
        """
        self._refuse_shared()
        written = copy.deepcopy(list(items))  # kept as given, for the agent's cassette text
        with self.locked():
            with collector_paused():
                added = validated(self.cassette, self.interactions, written, source, line_of)
            earlier = [i for i, origin in enumerate(self.origins) if not isinstance(origin, int)]
            own = [i for i, origin in enumerate(self.origins) if isinstance(origin, int)]
            kept = [*earlier, *(None for _ in added), *own]
            interactions = _placed(self.interactions, [i for i, _ in added], kept)
            new = range(len(earlier), len(earlier) + len(added))
            self._refuse_unplayable(interactions, new, source, line_of, follow_ups_later)
            self._install(
                interactions,
                _placed(self._matchers, [matcher for _, matcher in added], kept),
                _placed(self.origins, written, kept),
                kept,
            )
        return [interaction for interaction, _ in added]

    def unplayable(self) -> list[Finding]:
        """lint's findings about the interactions added at runtime, as the agent is now: a gate
        `add_interactions(..., follow_ups_later=True)` let through that no follow-up opens."""
        with self.locked():
            interactions = list(self.interactions)
            added = [i for i, origin in enumerate(self.origins) if not isinstance(origin, int)]
        return check(self.cassette, interactions, only=added)

    def _refuse_unplayable(
        self,
        interactions: list[Interaction],
        new: range,
        source: str,
        line_of: LineOf | None,
        follow_ups_later: bool,
    ) -> None:
        """UnplayableInteraction when lint finds that one of the interactions at `new` could
        never do what it says (the others' findings are the cassette's, and refuse nothing)."""

        def line(loc: Loc) -> int | None:  # lines only for the new ones: `source` is theirs
            if line_of is None or len(loc) < 2 or not isinstance(loc[1], int) or loc[1] not in new:
                return None
            return line_of(("interactions", loc[1] - new.start, *loc[2:]))

        findings = [
            finding
            for finding in check(self.cassette, interactions, source, line, only=new)
            if not (follow_ups_later and finding.awaits_follow_up)
        ]
        if findings:
            raise errors.UnplayableInteraction(findings)

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
                self.journal.answered(name),
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


T = TypeVar("T")


def _placed(old: Sequence[T], new: Sequence[T], kept: Sequence[int | None]) -> list[T]:
    """The items in their new places: `old[k]` for each kept index k, the next of `new` for
    each None."""
    fresh = iter(new)
    return [next(fresh) if k is None else old[k] for k in kept]
