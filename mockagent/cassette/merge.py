"""Merging the interactions of two recordings of one cassette, so neither loses a call.

Two writers of one cassette (two `pytest -n` workers, two `mockagent record`), or a recording
and the `.partial` a killed one left, each hold a list of interactions. An interaction is the
same in both when it is equal in every field (a copy of what was there), unless its writer made
that call itself (two writers each made it); otherwise both are kept, and a name clash is
settled by renaming the newcomer (`name-2`…), its follow-ups (`match.task.from`) following it.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any

Interactions = list[dict[str, Any]]


def merge_interactions(
    base: Interactions, new: Interactions, fresh: Collection[int] = ()
) -> tuple[Interactions, dict[str, str]]:
    """`base`, then every interaction of `new` that `base` does not hold already; returns the
    merged list and the renames of `new`'s interactions (old name → new name). An interaction
    whose id is in `fresh` is a call its writer made: one equal to it in `base` is another call
    of the same request (two writers made it), so it is kept, renamed, and both calls replay."""
    merged = list(base)
    taken = {item.get("name") for item in base} | {item.get("name") for item in new}
    names = {item.get("name") for item in base}
    by_name = _by_name(base)
    renames: dict[str, str] = {}
    for item in new:
        made = id(item) in fresh
        item = _following(item, renames)
        if not made and item in by_name.get(item.get("name"), ()):  # the same call, there already
            continue
        name = item.get("name")
        if isinstance(name, str) and name in names:
            renamed = _free_name(name, taken)
            renames[name] = renamed
            item = {**item, "name": renamed}
        names.add(item.get("name"))
        merged.append(item)
    return merged, renames


def with_origins(items: Interactions, names: set[str]) -> Interactions:
    """The interactions of `items` named in `names`, and those they follow up on (their
    `match.task.from`, and so on), so that every `from` still names one; in their order."""
    by_name = {item.get("name"): item for item in items}
    wanted = set(names)
    todo = list(names)
    while todo:
        origin = origin_of(by_name.get(todo.pop()) or {})
        if origin is not None and origin not in wanted:
            wanted.add(origin)
            todo.append(origin)
    return [item for item in items if item.get("name") in wanted]


def _by_name(items: Interactions) -> dict[Any, Interactions]:
    """The interactions by name: an equal one has the same name, so only those are compared."""
    found: dict[Any, Interactions] = {}
    for item in items:
        found.setdefault(item.get("name"), []).append(item)
    return found


def origin_of(item: dict[str, Any]) -> str | None:
    """The interaction `item` follows up on (its `match.task.from`), if any."""
    task = (item.get("match") or {}).get("task") if isinstance(item.get("match"), dict) else None
    origin = task.get("from") if isinstance(task, dict) else None
    return origin if isinstance(origin, str) else None


def _following(item: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    """`item` with its `match.task.from` renamed, if its origin was."""
    origin = origin_of(item)
    if origin is None or origin not in renames:
        return item
    item = copy.deepcopy(item)
    item["match"]["task"]["from"] = renames[origin]
    return item


def _free_name(name: str, taken: set[Any]) -> str:
    n = 2
    while f"{name}-{n}" in taken:
        n += 1
    taken.add(f"{name}-{n}")
    return f"{name}-{n}"
