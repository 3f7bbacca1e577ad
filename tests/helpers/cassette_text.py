"""Cassette text for tests: a valid header, interactions appended to it, and line lookups.

Cassettes are written as YAML text on purpose: the loader's line numbers and error messages are
part of what is tested, and a test reads best when its cassette is right there in the test.
"""

from __future__ import annotations

import textwrap

HEADER = """\
version: 1
agent:
  name: tester
  description: A test agent.
  skills:
    - {id: s, name: S, description: A skill.}
clock:
  start: 2026-10-06T09:00:00Z
  tick: {ms: 250}
ids:
  seed: unit
"""
"""A valid cassette without interactions; `cassette()` appends the interactions."""


def cassette(interactions: str = "", header: str = HEADER) -> str:
    """Cassette text: HEADER plus `interactions:` with the given (dedented) YAML list items."""
    body = textwrap.dedent(interactions).strip("\n")
    if not body:
        return header + "interactions: []\n"
    return header + "interactions:\n" + textwrap.indent(body, "  ") + "\n"


def line_of(text: str, needle: str) -> int:
    """1-based number of the only line of `text` that contains `needle`."""
    found = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(found) == 1, f"{needle!r} is on lines {found}"
    return found[0]
