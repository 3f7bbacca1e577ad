"""Why a recorded interaction got its fault, kept as a `# recorded:` comment above the fault in
the cassette's text (YAML data has no place for it), and read back when the cassette is
written anew."""

from __future__ import annotations

import re

import yaml

ITEM = re.compile(r"^( *)- name: (.*)$")  # an interaction starts (at the first one's indent)
NOTE = "# recorded: "


def with_notes(text: str, notes: dict[str, str]) -> str:
    """The YAML text of a cassette with each note as a `# recorded:` comment above the `fault:`
    of the interaction it names (the interactions are the last top-level key)."""
    head, found, body = text.partition("\ninteractions:\n")
    if not notes or not found:
        return text
    out: list[str] = []
    indent, note = 0, None
    for line in body.split("\n"):
        item = ITEM.match(line)
        if item and (not out or len(item.group(1)) == indent):  # an interaction starts
            indent = len(item.group(1))
            name = yaml.safe_load(item.group(2))
            note = notes.get(name) if isinstance(name, str) else None
        elif note and line.startswith(" " * (indent + 2) + "fault:"):
            out.append(" " * (indent + 2) + NOTE + note)
            note = None
        out.append(line)
    return head + found + "\n".join(out)


def notes_of(text: str) -> dict[str, str]:
    """The notes `with_notes` wrote into a cassette's text, by interaction (new_episodes keeps
    them when it writes the cassette anew)."""
    notes: dict[str, str] = {}
    name, indent = None, None
    for line in text.partition("\ninteractions:\n")[2].split("\n"):
        item = ITEM.match(line)
        if item and indent in (None, len(item.group(1))):
            indent, name = len(item.group(1)), yaml.safe_load(item.group(2))
        elif isinstance(name, str) and line.lstrip().startswith(NOTE):
            notes[name] = line.lstrip()[len(NOTE) :]
    return notes
