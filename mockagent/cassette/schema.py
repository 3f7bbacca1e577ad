"""The cassette JSON Schema, generated from the models (and their rules) that the loader uses."""

from __future__ import annotations

import json

from mockagent.cassette import predicates
from mockagent.cassette.models import Cassette

NOT_IN_SCHEMA = (
    "interaction names are unique",
    "`match.task.from` names an interaction of the cassette",
    "a `regex` predicate compiles (as a Python regular expression)",
    "every value in a reply or the card is JSON: no NaN or infinite number, no unquoted date "
    "(YAML's .nan, .inf, 2026-01-01)",
)
"""What the loader checks beyond the schema: JSON Schema cannot compare one value with another,
and its regular expressions are not Python's."""


def json_schema() -> str:
    """The cassette JSON Schema, pretty-printed, as `mockagent schema` prints it."""
    schema = predicates.link(Cassette.model_json_schema(by_alias=True))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "mockagent cassette, version 1"
    schema["description"] = (
        "A cassette for mockagent. Checked on load, beyond this schema: "
        + "; ".join(NOT_IN_SCHEMA)
        + "."
    )
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
