"""Matchers on a text that could never hold, and `where` paths that name nothing.

A call's text is a string (its text parts joined): a number, a date or a boolean never equals
it, and `any`/`all`/`none`, which range over lists, never hold on it. A `where` path is keys
joined by dots with list indexes in brackets; the engine would skip what else it finds there,
and match something the user did not write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any

from mockagent.cassette.rules import Loc

Found = Iterator[tuple[Loc, str]]

ARGUMENTS: dict[str, str] = {
    "equals": "value",
    "contains": "value",
    "startswith": "value",
    "endswith": "value",
    "regex": "regex",
    "exists": "bool",
    "absent": "bool",
    "subset": "value",
    "in": "list",
    "not": "predicate",
    "any": "element",
    "all": "element",
    "none": "element",
}
"""Predicate keyword → what its argument is (engine.matchers.PREDICATES has the same keys)."""

OVER_LISTS = ("any", "all", "none")
STRING_ARGUMENTS = ("equals", "contains", "subset")
"""The keywords whose argument a string must equal or contain: on `text`, a string."""
PATH = r"^[^.\[\]]+(\.[^.\[\]]+|\[[0-9]+\])*$"
"""A `where` path: keys joined by dots, list indexes in brackets (`message.parts[0].text`)."""


def text_problems(spec: Any, loc: Loc = (), what: str = "text") -> Found:
    """What in a predicate on a string (`what`: the text, a header) could never match it: a
    value of another type, a keyword over lists. Only where the predicate's own shape is right."""
    if isinstance(spec, dict) and spec and all(key in ARGUMENTS for key in spec):
        for key, arg in spec.items():
            if key in OVER_LISTS:
                yield (
                    loc + (key,),
                    (
                        f"`{key}` applies to lists, and {_A.get(what, what)} is a string; for one "
                        f"of several {_SEVERAL.get(what, 'values')} use `in: [...]` or "
                        "`regex: '^(hi|hello)$'`"
                    ),
                )
            elif key in STRING_ARGUMENTS:
                yield from _a_string(arg, loc + (key,), what)
            elif key == "in" and isinstance(arg, list):
                for i, item in enumerate(arg):
                    yield from _a_string(item, loc + (key, i), what)
            elif key == "not":
                yield from text_problems(arg, loc + (key,), what)
    elif spec is not None:  # null: no matcher (or, under `not`, one that always holds)
        yield from _a_string(spec, loc, what)


_A = {"text": "a text"}
_SEVERAL = {"text": "texts"}


def _a_string(value: Any, loc: Loc, what: str) -> Found:
    if isinstance(value, str):
        return
    if isinstance(value, bool):
        yield (
            loc,
            (
                f"{what} takes a string, and YAML reads an unquoted yes, no, on, off, true or "
                "false as a boolean: quote it"
            ),
        )
    elif isinstance(value, int | float | date):
        shown = value.isoformat() if isinstance(value, date) else str(value)
        yield loc, f"{what} takes a string; quote it: '{shown}'"
    elif value == {}:
        yield loc, f"an empty mapping matches no {what}; give a string or {{keyword: argument}}"
    else:
        yield loc, f"{what} takes a string, or a predicate such as {{contains: …}}"


def path_problems(paths: Iterable[str]) -> Found:
    """The `where` paths that name nothing: empty, a dot doubled or at an end, a bracket open."""
    for path in paths:
        if not re.fullmatch(PATH, path):
            yield (
                (path,),
                (
                    f"bad path {path!r}: keys joined by dots, list indexes in brackets, as "
                    "message.parts[0].text"
                ),
            )
