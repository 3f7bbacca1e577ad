"""Keys written twice in one YAML mapping, which PyYAML takes silently (the last one wins).

`yaml_reader` notes them while it builds the data; `duplicate_keys` then says where each is, for
the loader's report ("duplicate key 'reply' (first at line 6)").
"""

from __future__ import annotations

import yaml

Loc = tuple[str | int, ...]
Duplicate = tuple[yaml.Node, yaml.Node, yaml.Node]
"""A key written twice in one mapping: the mapping, the key's first node and its second."""


def twice(node: yaml.MappingNode) -> list[Duplicate]:
    """The keys of `node` written again after their first time."""
    first: dict[str, yaml.Node] = {}
    found: list[Duplicate] = []
    for key, _ in node.value:
        if key.value in first:
            found.append((node, first[key.value], key))
        first.setdefault(key.value, key)
    return found


def duplicate_keys(root: yaml.Node, duplicates: list[Duplicate]) -> list[tuple[Loc, int, str]]:
    """Where each of `duplicates` is below `root` (the mapping's location), the line of the
    second key and the message saying where the first one is."""
    wanted = {id(mapping) for mapping, _, _ in duplicates}
    places: dict[int, Loc] = {}
    seen: set[int] = set()  # an aliased node is walked once, at its first place
    stack: list[tuple[yaml.Node, Loc]] = [(root, ())]
    while stack and len(places) < len(wanted):
        node, loc = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in wanted:
            places[id(node)] = loc
        if isinstance(node, yaml.MappingNode):
            stack.extend((value, loc + (key.value,)) for key, value in node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, loc + (i,)) for i, item in enumerate(node.value))
    return [
        (
            places.get(id(mapping), ()),
            second.start_mark.line + 1,
            f"duplicate key {second.value!r} (first at line {first.start_mark.line + 1})",
        )
        for mapping, first, second in duplicates
    ]
