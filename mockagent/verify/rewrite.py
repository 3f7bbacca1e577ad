"""Writing a `verify --update` into the cassette's text: each re-recorded interaction edited in
place where it can be (`patch`: only the lines whose values changed, comments and style
kept), else its lines replaced by the interaction written anew; a follow-up's moved state changed
on its own line. A cassette whose interactions are not written as `- name: …` blocks is written
anew instead, without its comments.
"""

from __future__ import annotations

from typing import Any

import yaml

from mockagent.cassette.loader import LoadedCassette, dump_cassette, schema_comment
from mockagent.cassette.yaml_reader import parse
from mockagent.errors import CassetteError
from mockagent.proxy.session import ITEM, with_notes
from mockagent.verify.patch import Edit, Unpatchable, apply, edits


def rewrite(
    loaded: LoadedCassette,
    new: dict[int, dict[str, Any]],
    notes: dict[str, str],
    states: dict[int, tuple[int, str, str]] | None = None,
) -> str:
    """The cassette's text with interaction `i` made `new[i]`, and in line `n` of interaction
    `j` the state `old` changed to `state` for each `states[j] = (n, old, state)`; everything
    else as it was (see `rewrite_edits`)."""
    return apply(loaded.source, rewrite_edits(loaded, new, notes, states))


def rewrite_edits(
    loaded: LoadedCassette,
    new: dict[int, dict[str, Any]],
    notes: dict[str, str],
    states: dict[int, tuple[int, str, str]] | None = None,
) -> list[Edit]:
    """The edits of the cassette's text that `rewrite` makes. An interaction is edited in
    place where it can be (only the lines whose values changed), else its lines are replaced
    by the new interaction written anew."""
    source = loaded.source
    lines = source.splitlines(keepends=True)
    starts = [0]  # where each line begins in `source`
    for text in lines:
        starts.append(starts[-1] + len(text))
    states = states or {}
    # an interaction holding an anchor or alias is refused (`_not_shared`): the others are
    # edited in place, their lines standing in one place only
    data, root = parse(source, loaded.path)
    changes: list[Edit] = []
    for index in sorted({*new, *states}):
        if index in new:
            _not_shared(loaded, lines, index)
        if index not in new:
            line, old, state = states[index]
            changes.append(Edit(starts[line], starts[line + 1], lines[line].replace(old, state)))
            continue
        in_place = _in_place(source, root, index, data["interactions"][index], new[index])
        if in_place is not None:
            changes += in_place
            continue
        span = lines_of(loaded, lines, index)
        if span is None:  # not a block this can cut out: write the whole cassette anew
            for i, interaction in new.items():
                data["interactions"][i] = interaction
            for i, (_, _, state) in states.items():
                data["interactions"][i]["match"]["task"]["state"] = state
            anew = schema_comment(loaded.path) + with_notes(dump_cassette(data), notes)
            return [Edit(0, len(source), anew)]
        first, end, indent = span
        text = "\n" + dump_cassette({"interactions": [new[index]]})
        block = with_notes(text, notes).split("\n", 2)[2]  # after `interactions:`
        indented = "".join(
            " " * indent + line if line.strip() else line for line in block.splitlines(True)
        )
        changes.append(Edit(starts[first], starts[end], indented))
    return changes


def _not_shared(loaded: LoadedCassette, lines: list[str], index: int) -> None:
    """CassetteError naming the anchor when interaction `index`'s lines hold a YAML anchor or
    alias: its value stands in several places, and rewriting it here would leave an alias
    without its anchor (or change what other interactions say)."""
    span = lines_of(loaded, lines, index)
    if span is None:
        return
    for token in yaml.scan(loaded.source, Loader=yaml.SafeLoader):
        if not isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):
            continue
        line = token.start_mark.line
        if span[0] <= line < span[1]:
            mark = "&" if isinstance(token, yaml.AnchorToken) else "*"
            name = loaded.cassette.interactions[index].name
            raise CassetteError(
                f"interaction {name} drifted, but its YAML anchor `{mark}{token.value}` is a "
                "value shared between interactions: an anchored value cannot be updated in "
                "place; the cassette was not changed (update it by hand, or write it out "
                "without the anchor)",
                path=loaded.path,
                line=line + 1,
            )


def _in_place(source: str, root: Any, index: int, written: Any, new: Any) -> list[Edit] | None:
    """The edits that make interaction `index` (`written`) read `new` in place, or None when it
    must be written anew: a new fault comes with its `# recorded:` note, and the edited text
    must read `new` (an interaction holding an anchor or alias never gets here: `_not_shared`)."""
    if root is None or new.get("fault") != written.get("fault"):
        return None
    found = [v for k, v in root.value if k.value == "interactions"]
    if len(found) != 1 or not isinstance(found[0], yaml.SequenceNode):
        return None
    try:
        made = edits(source, found[0].value[index], written, new)
        after = parse(apply(source, made), "")[0]["interactions"][index]
    except (Unpatchable, CassetteError):
        return None
    return made if after == new else None  # an edit that reads otherwise: written anew instead


def lines_of(loaded: LoadedCassette, lines: list[str], index: int) -> tuple[int, int, int] | None:
    """(first, end, indent) of interaction `index`'s lines: from its `- name:` line to its last
    line indented deeper (comments and blank lines after it belong to what follows)."""
    line = loaded.line_of(("interactions", index))
    found = ITEM.match(lines[line - 1].rstrip("\n")) if line else None
    if line is None or found is None:
        return None
    indent = len(found[1])
    end = line
    for k in range(line, len(lines)):
        text = lines[k]
        if not text.strip():
            continue
        if len(text) - len(text.lstrip(" ")) <= indent:
            break
        end = k + 1
    return line - 1, end, indent
