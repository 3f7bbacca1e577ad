"""Interactions added to a served agent (admin API, `MockAgent.expect`), checked as a cassette is.

An added interaction is validated by the cassette's own model: the cassette as it now is, with
the new interactions after its own, goes through `Cassette.model_validate`, so every field rule,
every rule between fields (an Agentex cassette takes no `message:` reply) and every rule between
interactions (unique names, a follow-up's `from`) holds for it as it would in the file, in the
same words. Errors name the added interaction by its place among those added, and a YAML body's
line when there is one. (Where it is then tried, and lint's checks there, are
`mockagent.engine.runtime_interactions`'s.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from mockagent import errors
from mockagent.cassette.loader import LoadedCassette, describe, dump_cassette, schema_comment
from mockagent.cassette.models import Cassette, Interaction
from mockagent.cassette.problems import every_problem
from mockagent.cassette.yaml_keys import duplicate_keys
from mockagent.cassette.yaml_reader import (
    Loc,
    deepest_line,
    line_map,
    parse,
    parse_checked,
)
from mockagent.engine.matchers import CompiledMatch

Locate = Callable[[Loc, str], errors.CassetteError]
"""Makes the error for a problem at a location within one interaction (`("match",)`)."""


def compile_interaction(interaction: Interaction, locate: Locate) -> CompiledMatch:
    """The interaction's compiled matcher, after the checks only the engine can make (a regex
    that compiles, an error name it knows); CassetteError from `locate` otherwise."""
    try:
        compiled = CompiledMatch(interaction.match)
    except ValueError as exc:
        raise locate(("match",), str(exc)) from None
    for where, error in (
        ("reply", interaction.reply and interaction.reply.error),
        ("fault", interaction.fault and interaction.fault.error),
    ):
        if error and error.name not in errors.ERROR_KINDS:
            raise locate(
                (where, "error"),
                f"unknown error {error.name!r}; use one of {', '.join(errors.ERROR_KINDS)}",
            )
    return compiled


def as_items(data: Any) -> tuple[list[Any], Callable[[int], Loc]]:
    """The interactions a body gives: one mapping, a list of them, or a cassette fragment with
    `interactions:`; and where the i-th of them is in the body (for its lines)."""
    if isinstance(data, dict) and set(data) == {"interactions"}:
        items = data["interactions"]
        if not isinstance(items, list):
            raise errors.CassetteError(
                f"`interactions:` takes a list of interactions; got {_kind(items)}"
            )
        return items, lambda i: ("interactions", i)
    if isinstance(data, dict) and "interactions" in data:  # a whole cassette, saved elsewhere
        others = ", ".join(f"`{key}:`" for key in data if key != "interactions")
        raise errors.CassetteError(
            f"this is a whole cassette (with {others}): give only its `interactions:`; the "
            "agent's card, clock and ids stay those of the cassette it serves"
        )
    if isinstance(data, list):
        return data, lambda i: (i,)
    if isinstance(data, dict):
        return [data], lambda i: ()
    raise errors.CassetteError(
        "give an interaction (a mapping with `name`, `match`, `reply`), a list of them, "
        f"or `interactions:` with the list; got {_kind(data)}"
    )


def _kind(value: Any) -> str:
    """What a JSON or YAML value is, in the words of those formats."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, int | float | str):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        return f"the {'string' if isinstance(value, str) else 'number'} {shown}"
    return "a mapping" if isinstance(value, dict) else f"a {type(value).__name__}"


LineOf = Callable[[Loc], int | None]
"""The line of a location in the added interactions (`("interactions", i, "match")`)."""


def parse_body(text: str, source: str) -> tuple[list[Any], LineOf]:
    """The interactions in a YAML (or JSON) text, and the lines they are written on; a
    CassetteError naming every key written twice (the data would keep the last one only)."""
    data, node, duplicates = parse_checked(text, source)
    items, place = as_items(data)
    if node is not None and duplicates:
        _refuse_twice(items, duplicate_keys(node, duplicates), len(place(0)), source)
    lines = line_map(node) if node is not None else {}

    def line_of(loc: Loc) -> int | None:
        if len(loc) < 2 or loc[0] != "interactions" or not isinstance(loc[1], int):
            return None
        return deepest_line(lines, (*place(loc[1]), *loc[2:]))

    return items, line_of


def _refuse_twice(
    items: list[Any], found: list[tuple[Loc, int, str]], depth: int, source: str
) -> None:
    """CassetteError for keys written twice: each as the loader says it, by interaction (whose
    index is at `depth - 1` in a body location; none for a body of one interaction)."""
    names = [item.get("name") if isinstance(item, dict) else None for item in items]

    def loc(place: Loc) -> Loc:
        if depth == 0:
            return ("interactions", 0, *place)
        return ("interactions", *place[depth - 1 :]) if len(place) >= depth else ()

    raise errors.CassetteError.of(
        [
            errors.Problem(describe(names, loc(place), message), source, line)
            for place, line, message in sorted(found, key=lambda each: each[1])
        ]
    )


def validated(
    cassette: Cassette,
    current: Sequence[Interaction],
    items: Sequence[Any],
    source: str = "",
    line_of: LineOf | None = None,
) -> list[tuple[Interaction, CompiledMatch]]:
    """`items` (plain data, as a cassette writes interactions) validated after `current`, and
    compiled; CassetteError naming the item and the field as the loader would, or
    DuplicateInteraction for a name `current` has."""
    taken = {interaction.name for interaction in current}
    for item in items:
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str) and name in taken:
            raise errors.DuplicateInteraction(
                f"there is an interaction named {name!r} already: remove it first, "
                "or give this one another name"
            )
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    shift = len(current)

    def problem(loc: Loc, message: str) -> errors.Problem:
        if len(loc) >= 2 and loc[0] == "interactions" and isinstance(loc[1], int):
            loc = ("interactions", loc[1] - shift, *loc[2:])
        line = line_of(loc) if line_of is not None else None
        return errors.Problem(describe(names, loc, message), source, line)

    def locate(loc: Loc, message: str) -> errors.CassetteError:
        return errors.CassetteError.of([problem(loc, message)])

    fields = {name: getattr(cassette, name) for name in Cassette.model_fields}
    data = {**fields, "interactions": [*current, *items]}
    try:
        added = Cassette.model_validate(data).interactions[shift:]
    except ValidationError as exc:
        found = every_problem(Cassette, data, exc.errors())
        raise errors.CassetteError.of([problem(*each) for each in found]) from None

    def within(index: int) -> Locate:
        return lambda loc, message: locate(("interactions", shift + index, *loc), message)

    return [
        (interaction, compile_interaction(interaction, within(i)))
        for i, interaction in enumerate(added)
    ]


def followers(interactions: Sequence[Interaction], name: str) -> list[str]:
    """The follow-ups whose `from` names interaction `name`."""
    return [
        interaction.name
        for interaction in interactions
        if interaction.match.task is not None and interaction.match.task.from_ == name
    ]


def exported(loaded: LoadedCassette, origins: Sequence[Any]) -> str:
    """The cassette text of an agent whose interactions are now `origins`: each an index into
    the cassette (written as its file has it) or the data an interaction was added as. The
    file's other sections stay as they are, and the `$schema` line comes first, so the text
    loads back to the same agent."""
    data: dict[str, Any]
    if loaded.source:
        data = dict(parse(loaded.source, loaded.path)[0])
        own = data.get("interactions") or []
    else:  # built in code: the model's own fields
        data = loaded.cassette.model_dump(mode="json", by_alias=True, exclude_unset=True)
        own = data.get("interactions", [])
    data["interactions"] = [own[o] if isinstance(o, int) else o for o in origins]
    return schema_comment(loaded.path) + dump_cassette(data)
