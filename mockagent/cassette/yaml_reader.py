"""Reading cassette YAML: the safe loader only (libyaml's parser when there is one), built fast,
with alias bombs and self-containing aliases refused, and a map of every node's line.

It knows nothing of the cassette format: `store` validates what this returns and uses the line
map to point its errors into the file.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import yaml

from mockagent.cassette.yaml_keys import Duplicate, twice
from mockagent.errors import CassetteError

Loc = tuple[str | int, ...]
"""A place in the data: mapping keys and sequence indexes, from the root down."""


MAX_NODES = (
    100_000  # nodes that aliases add on expanding: an alias bomb stops here, not in validation
)


def _check_aliases(root: yaml.Node, path: str) -> None:
    """Refuse a YAML alias that contains itself, or aliases that add more than MAX_NODES nodes
    on expanding: the data is as big as its expansion once validation walks it. A node without
    aliases below it expands to no more than the nodes written, however many there are.

    Depth first with a stack of its own, not recursion: libyaml parses 1,000 levels deep.
    """
    sizes: dict[int, int] = {}  # expanded size of every node done
    open_nodes: set[int] = set()  # the nodes on the path to the current one
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            open_nodes.discard(key)
            if (
                total > MAX_NODES + len(sizes) + 1
            ):  # `sizes` has every node sized so far, those below among them
                raise CassetteError(
                    f"aliases expand the YAML by more than {MAX_NODES} nodes",
                    path=path,
                    line=node.start_mark.line + 1,
                )
            sizes[key] = total
        elif key in open_nodes:
            raise CassetteError(
                "a YAML alias refers to a node that contains it",
                path=path,
                line=node.start_mark.line + 1,
            )
        elif key not in sizes:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend(
                (child, False) for child in reversed(_children(node))
            )  # first child on top


def _children(node: yaml.Node) -> list[yaml.Node]:
    """Every node directly inside `node`, mapping keys included."""
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def line_map(root: yaml.Node) -> dict[Loc, int]:
    """Location → line of every node, walking each aliased node once (its first location)."""
    out: dict[Loc, int] = {}
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, Loc]] = [(root, ())]
    while stack:
        node, loc = stack.pop()
        out.setdefault(loc, node.start_mark.line + 1)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):  # a field's line is its key's line
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    out.setdefault(loc + (key.value,), key.start_mark.line + 1)
                    stack.append((value, loc + (key.value,)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, loc + (i,)) for i, item in enumerate(node.value))
    return out


def deepest_line(lines: dict[Loc, int], loc: Loc) -> int | None:
    """The line of `loc` in `lines`, else of the nearest node above it that the file has."""
    for end in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:end]))
        if line is not None:
            return line
    return None


_LOADER: Any = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
"""libyaml's parser when PyYAML has it (several times faster); the constructor and resolver are
the safe ones either way, so the same tags are refused."""
_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_PLAIN = {
    _STR: yaml.SafeLoader.construct_yaml_str,
    _MAP: yaml.SafeLoader.construct_yaml_map,
    _SEQ: yaml.SafeLoader.construct_yaml_seq,
}


def construct_document(
    loader: Any, root: yaml.Node, duplicates: list[Duplicate] | None = None
) -> Any:
    """What `loader.construct_document(root)` returns, built faster.

    Strings, mappings with string keys and sequences (nearly every node of a cassette) are built
    here; any other node goes to the loader's own (safe) constructor, which so refuses the same
    tags. Containers are filled breadth first, as PyYAML fills them, so a document with several
    bad values reports the same one first; aliases share one object, as there. A key written
    twice in a mapping built here goes to `duplicates` (PyYAML keeps the last one silently).

    Why it is kept: PyYAML's constructor takes 1.5 times as long on a big cassette (the
    YAML fast constructor rows of bench/README.md, scripts/bench_yaml.py).
    """
    if any(loader.yaml_constructors.get(tag) is not fn for tag, fn in _PLAIN.items()):
        return loader.construct_document(root)  # someone registered their own: let them have it
    built: dict[yaml.Node, Any] = loader.constructed_objects  # shared, so aliases stay shared
    pending: deque[Any] = deque()  # containers to fill, and the loader's unfinished ones

    def make(node: yaml.Node) -> Any:
        if node in built:
            return built[node]
        kind = type(node)
        if kind is yaml.ScalarNode and node.tag == _STR:
            value: Any = node.value
        elif (
            kind is yaml.MappingNode
            and node.tag == _MAP
            and all(type(key) is yaml.ScalarNode and key.tag == _STR for key, _ in node.value)
        ):
            value = {}  # no merge (`<<`) or value (`=`) keys, no keys that need constructing
            pending.append((node, value))
        elif kind is yaml.SequenceNode and node.tag == _SEQ:
            value = []
            pending.append((node, value))
        else:
            value = loader.construct_object(node)
            pending.extend(loader.state_generators)  # in the order PyYAML would run them
            loader.state_generators = []
            return value
        built[node] = value
        return value

    data = make(root)
    while pending:
        item = pending.popleft()
        if isinstance(item, tuple):
            node, value = item
            if isinstance(value, dict):
                for key, child in node.value:
                    value[key.value] = make(child)
                if len(value) < len(node.value) and duplicates is not None:  # rare: look closer
                    duplicates.extend(twice(node))
            else:
                value.extend([make(child) for child in node.value])
        else:  # a generator of the loader's: it fills what the loader began
            for _ in item:
                pass
            pending.extend(loader.state_generators)
            loader.state_generators = []
    return data


def parse(text: str, path: str) -> tuple[Any, yaml.Node | None]:
    """Parse with the safe loader only; return the data and the root node."""
    data, node, _ = parse_checked(text, path)
    return data, node


def parse_checked(text: str, path: str) -> tuple[Any, yaml.Node | None, list[Duplicate]]:
    """`parse`, and the keys written twice in a mapping (the data keeps the last of each)."""
    duplicates: list[Duplicate] = []
    try:
        loader = _LOADER(text)  # the pure-Python reader refuses control characters here already
    except yaml.YAMLError as exc:
        raise CassetteError(f"not valid YAML: {exc}", path=path) from None
    try:
        node = loader.get_single_node()
        if node is not None and "&" in text:  # no anchor, no alias: nothing to expand
            _check_aliases(node, path)
        data = construct_document(loader, node, duplicates) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        if problem == "exceeded maximum nesting depth":  # libyaml's limit; PyYAML's is recursion's
            raise CassetteError("the YAML is nested too deeply", path=path, line=line) from None
        raise CassetteError(f"not valid YAML: {problem}", path=path, line=line) from None
    except RecursionError:
        raise CassetteError("the YAML is nested too deeply", path=path) from None
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # PyYAML's own constructors fail this way on explicit tags with bad values (`!!int abc`).
        raise CassetteError(f"not valid YAML: {type(exc).__name__}: {exc}", path=path) from None
    finally:
        loader.dispose()
    return data, node, duplicates


def parse_yaml(text: str, path: str) -> tuple[Any, dict[Loc, int]]:
    """Parse with the safe loader only; return the data and a map of location → line."""
    data, node = parse(text, path)
    return data, line_map(node) if node is not None else {}
