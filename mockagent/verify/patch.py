"""Edits that turn a YAML node's value into another in the text it was read from, touching only
what changed: a scalar is rewritten in place (in its own quoting style where it can be), a key or
a block sequence's item that comes or goes is a line added or taken out, and everything else
(comments, flow or block style, key order, blank lines) stays as written.

`verify --update` uses them so that a re-recorded interaction changes only the lines the live
agent moved. `Unpatchable` says a change cannot be made this way (an alias, say): the caller then
writes the interaction anew.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

import yaml

from mockagent.cassette.loader import dump_cassette


class Unpatchable(Exception):
    """The text cannot be edited in place into the new value."""


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] with `text`."""

    start: int
    end: int
    text: str


def apply(source: str, edits: list[Edit]) -> str:
    """`source` with every edit made (edits never overlap)."""
    out = source
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.text + out[edit.end :]
    return out


def edits(source: str, node: yaml.Node, old: Any, new: Any) -> list[Edit]:
    """The edits of `source` that make `node` (whose value is `old`) read `new`."""
    if _same(old, new):
        return []
    if isinstance(node, yaml.ScalarNode):
        if isinstance(new, (dict, list)):
            return [Edit(node.start_mark.index, node.end_mark.index, flow(new))]
        return [Edit(node.start_mark.index, content_end(source, node), scalar(new, node.style))]
    if isinstance(node, yaml.MappingNode) and isinstance(old, dict) and isinstance(new, dict):
        return _mapping(source, node, old, new)
    if isinstance(node, yaml.SequenceNode) and isinstance(old, list) and isinstance(new, list):
        return _sequence(source, node, old, new)
    return [Edit(node.start_mark.index, content_end(source, node), flow(new))]


def _same(old: Any, new: Any) -> bool:
    return type(old) is type(new) and old == new


def _mapping(
    source: str, node: yaml.MappingNode, old: dict[str, Any], new: dict[str, Any]
) -> list[Edit]:
    pairs = {key.value: (key, value) for key, value in node.value}
    if len(pairs) != len(node.value) or set(pairs) != set(old):
        raise Unpatchable("a mapping with keys the text does not show one by one (a merge key)")
    if node.flow_style and set(old) != set(new):
        return [Edit(node.start_mark.index, node.end_mark.index, flow(new))]
    out: list[Edit] = []
    for key, (_, value) in pairs.items():
        if key in new:
            out += edits(source, value, old[key], new[key])
        elif key == node.value[0][0].value:  # its line may hold the `- ` of an item
            raise Unpatchable("the first key of a block mapping goes")
        else:  # the key's lines go
            out.append(_lines(source, pairs[key][0].start_mark.index, content_end(source, value)))
    column = node.value[0][0].start_mark.column
    end = _line_end(source, content_end(source, node))
    places: dict[int, str] = {}  # where -> the added keys' lines
    order = list(new)
    for n, key in enumerate(order):
        if key in old:
            continue
        # before the next key the text has (not the first: its line may hold an item's `- `)
        after = [pairs[k][0] for k in order[n + 1 :] if k in pairs and k != node.value[0][0].value]
        at = _line_start(source, after[0].start_mark.index) if after else end
        places[at] = places.get(at, "") + f"{' ' * column}{key}: {flow(new[key])}\n"
    out += [_insert(source, at, text) for at, text in places.items()]
    return out


def _sequence(source: str, node: yaml.SequenceNode, old: list[Any], new: list[Any]) -> list[Edit]:
    if len(old) != len(node.value):
        raise Unpatchable("a sequence the text does not show item by item")
    if len(old) == len(new) and node.flow_style:
        return [
            e for n, v, w in zip(node.value, old, new, strict=True) for e in edits(source, n, v, w)
        ]
    if len(old) == len(new):
        return [e for k, item in enumerate(new) for e in _item(source, node, old, item, k)]
    if node.flow_style or not node.value or not new:  # a block sequence cannot be empty
        return [Edit(node.start_mark.index, content_end(source, node), flow(new))]
    keys = [json.dumps(item, sort_keys=True, default=str) for item in old]
    matcher = difflib.SequenceMatcher(
        None, keys, [json.dumps(i, sort_keys=True, default=str) for i in new], autojunk=False
    )
    out: list[Edit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                out += _item(source, node, old, new[j1 + k], i1 + k)
            continue
        for k in range(i1, i2):  # the old items' lines go; the new ones come in their place
            item = node.value[k]
            out.append(_lines(source, item.start_mark.index, content_end(source, item)))
        if j2 > j1:
            at = (
                _line_end(source, content_end(source, node.value[i1 - 1]))
                if i1 > 0
                else _line_start(source, node.value[0].start_mark.index)
            )
            items = "".join(_like_items(source, node, old, item, i1) for item in new[j1:j2])
            out.append(_insert(source, at, items))
    return out


def _like_items(source: str, node: yaml.SequenceNode, old: list[Any], new: Any, near: int) -> str:
    """Block-sequence item `new` written like the item nearest to `near` that has the same
    first key and no comment (its text edited into `new`: flow or block style, quoting and
    indentation as the cassette writes them); as mockagent writes items when none fits."""
    order = sorted(range(len(old)), key=lambda k: (abs(k - near + 0.5), k))
    for k in order:
        item = node.value[k]
        start = _line_start(source, item.start_mark.index)
        end = _line_end(source, content_end(source, item))
        text = source[start:end]
        if _first_key(old[k]) != _first_key(new) or "#" in text:
            continue
        try:
            made = edits(source, item, old[k], new)
        except Unpatchable:
            continue
        if any(e.start < start or e.end > end for e in made):
            continue
        shifted = [Edit(e.start - start, e.end - start, e.text) for e in made]
        written = apply(text, shifted)
        written += "" if written.endswith("\n") else "\n"
        try:
            if yaml.safe_load(written) == [new]:
                return written
        except yaml.YAMLError:
            continue
    return block([new], node.start_mark.column)


def _item(source: str, node: yaml.SequenceNode, old: list[Any], new: Any, k: int) -> list[Edit]:
    """The edits of a block sequence's item `k`; one whose first key changes (that key stands
    on the `- ` line) is written anew in its place, like the items beside it."""
    item = node.value[k]
    if _first_key(old[k]) == _first_key(new) or _same(old[k], new):
        return edits(source, item, old[k], new)
    start = _line_start(source, item.start_mark.index)
    end = _line_end(source, content_end(source, item))
    return [Edit(start, end, _like_items(source, node, old, new, k))]


def _first_key(value: Any) -> Any:
    return next(iter(value), None) if isinstance(value, dict) else type(value)


def content_end(source: str, node: yaml.Node) -> int:
    """Where the text of `node` ends: a block collection's end mark lies past the comments and
    blank lines that follow it, which belong to what comes next, and a block scalar's past the
    newline that ends its last line."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return content_end(source, node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return content_end(source, node.value[-1])
    end: int = node.end_mark.index
    while end > node.start_mark.index and source[end - 1] == "\n":
        end -= 1
    return end


def _line_start(source: str, index: int) -> int:
    return source.rfind("\n", 0, index) + 1


def _line_end(source: str, index: int) -> int:
    """Just past the newline of the line `index` is on (the line's end at the end of text)."""
    newline = source.find("\n", index)
    return len(source) if newline < 0 else newline + 1


def _insert(source: str, at: int, lines: str) -> Edit:
    """Insert whole lines at `at` (the end of a text without a last newline gets one first)."""
    return Edit(at, at, lines if at == 0 or source[at - 1] == "\n" else "\n" + lines)


def _lines(source: str, start: int, end: int) -> Edit:
    """Take out the whole lines from the one `start` is on to the one `end` is on."""
    return Edit(_line_start(source, start), _line_end(source, end), "")


def scalar(value: Any, style: str | None = None) -> str:
    """A scalar as YAML, in `style` (plain, `'` or `"`) where that style can hold it; a block
    style (`|`, `>`) becomes double-quoted, which fits any place a scalar stands."""
    style = style if style in ("'", '"') else None
    node = yaml.ScalarNode(_tag(value), _text(value), style=style)
    out = yaml.serialize(node, Dumper=yaml.SafeDumper, width=1_000_000, allow_unicode=True)
    text = out.removesuffix("...\n").rstrip("\n")
    if "\n" in text:  # the emitter chose a block or folded style after all
        text = json.dumps(value, ensure_ascii=False)
    return text


def _tag(value: Any) -> str:
    kinds = {bool: "bool", int: "int", float: "float", type(None): "null"}
    return f"tag:yaml.org,2002:{kinds.get(type(value), 'str')}"


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def flow(value: Any) -> str:
    """A value as one line of flow-style YAML."""
    if not isinstance(value, (dict, list)):
        return scalar(value)
    out = yaml.safe_dump(
        unshared(value),
        default_flow_style=True,
        width=1_000_000,
        allow_unicode=True,
        sort_keys=False,
    )
    return out.rstrip("\n")


def unshared(value: Any) -> Any:
    """`value` rebuilt, so that no dict or list stands in two places (YAML would write the
    second as an alias of the first)."""
    if isinstance(value, dict):
        return {k: unshared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unshared(v) for v in value]
    return value


def block(items: list[Any], column: int) -> str:
    """Block-sequence items as mockagent writes them, their `- ` at `column`."""
    text = dump_cassette({"items": unshared(items)}).split("\n", 1)[1]
    return "".join(" " * column + line if line.strip() else line for line in text.splitlines(True))
