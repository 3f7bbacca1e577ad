"""The lines `verify --update` changed, one listed per line, read off the edits it made (not
guessed from a diff of the two texts, which pairs look-alike lines of different steps).

    c.yaml:4: message: 'Done: yes' → message: 'Done: no'     line 4, changed
    c.yaml:9: +   - text: "b\\n"                                line 9 of the new text, added
    c.yaml:10: - # last                                        line 10 of the old text, taken out

A changed or added line is numbered as it is in the cassette now, a line taken out as it was.
An added or taken-out line keeps its indentation (it says where in the script it stands).
"""

from __future__ import annotations

import difflib

from mockagent.verify.patch import Edit, apply


def changed_lines(path: str, source: str, changes: list[Edit]) -> list[str]:
    """`PATH:N: …` for each line of `source` that `changes` change, add or take out."""
    out: list[str] = []
    shift = 0  # lines added so far, less lines taken out: new line number - old line number
    for start, end, group in _groups(source, changes):
        before = source[start:end]
        after = apply(before, [Edit(e.start - start, e.end - start, e.text) for e in group])
        first = source.count("\n", 0, start) + 1  # the old number of the group's first line
        old, new = before.splitlines(), after.splitlines()
        out += _listed(path, old, new, first, first + shift)
        shift += len(new) - len(old)
    return out


def _groups(source: str, changes: list[Edit]) -> list[tuple[int, int, list[Edit]]]:
    """The edits grouped by the whole lines they touch, in order: (start, end, edits). Lines
    inserted at a line's start, or whole lines taken out, touch no other line."""
    out: list[tuple[int, int, list[Edit]]] = []
    for edit in sorted(changes, key=lambda e: (e.start, e.end)):
        start, end = _whole_lines(source, edit)
        if out and start < out[-1][1]:
            first, last, group = out.pop()
            start, end, edit_list = first, max(last, end), [*group, edit]
            out.append((start, end, edit_list))
            continue
        out.append((start, end, [edit]))
    return out


def _whole_lines(source: str, edit: Edit) -> tuple[int, int]:
    at_line_start = edit.start == 0 or source[edit.start - 1] == "\n"
    whole = at_line_start and (edit.end == edit.start or source[edit.end - 1] == "\n")
    if whole and (not edit.text or edit.text.endswith("\n")):
        return edit.start, edit.end
    start = source.rfind("\n", 0, edit.start) + 1
    newline = source.find("\n", max(edit.end - 1, edit.start))
    return start, len(source) if newline < 0 else newline + 1


def _listed(path: str, old: list[str], new: list[str], old_first: int, new_first: int) -> list[str]:
    """The changed lines of one group: paired where they stand for each other."""
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        pairs = [k for k in range(paired) if _related(old[i1 + k], new[j1 + k])]
        for k in pairs:
            before, after = old[i1 + k].strip(), new[j1 + k].strip()
            out.append(f"{path}:{new_first + j1 + k}: {before} → {after}")
        gone = [k for k in range(i1, i2) if k - i1 not in pairs]
        came = [k for k in range(j1, j2) if k - j1 not in pairs]
        out += [f"{path}:{old_first + k}: - {old[k].rstrip()}" for k in gone]
        out += [f"{path}:{new_first + k}: + {new[k].rstrip()}" for k in came]
    return out


def _related(old: str, new: str) -> bool:
    """Whether a new line stands for an old one: the same indentation and key (`message:`,
    `- text:`), or both a comment."""
    return _indent(old) == _indent(new) and _key(old) == _key(new)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key(line: str) -> str:
    text = line.strip()
    if text.startswith("#"):
        return "#"
    return text.split(":", 1)[0] if ":" in text else text
