"""Protocol content inside a cassette: messages, parts, artifacts, and the JSON in replies.

They stay plain JSON (A2A v1.0 ProtoJSON: camelCase, flat parts), checked as far as a client can
read them: each field mockagent or a client reads has its type (a `raw` part is base64), and
every value is JSON (no NaN or infinite number, no YAML date). Each check has its JSON Schema
beside it, saying the same (all but the JSON one, which JSON Schema cannot name: an editor sees a
YAML date as a string; `schema.NOT_IN_SCHEMA` says it).
"""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import date
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator
from pydantic.json_schema import WithJsonSchema

from mockagent.cassette.rules import Found, Loc, refuse

PART_KINDS = ("text", "raw", "url", "data")
BASE64 = r"^([A-Za-z0-9+/_-]{4})*([A-Za-z0-9+/_-]{2}(==)?|[A-Za-z0-9+/_-]{3}=?)?$"
"""Base64, standard or URL-safe, padded or not: what ProtoJSON reads as bytes."""

_STRING: dict[str, Any] = {"type": "string"}
_STRINGS: dict[str, Any] = {"type": "array", "items": _STRING}
_OBJECT: dict[str, Any] = {"type": "object"}
PART_FIELDS: dict[str, dict[str, Any]] = {
    "text": _STRING,
    "raw": {"type": "string", "pattern": BASE64, "description": "the bytes, in base64"},
    "url": _STRING,
    "mediaType": _STRING,
    "filename": _STRING,
    "metadata": _OBJECT,
}
MESSAGE_FIELDS: dict[str, dict[str, Any]] = {
    "messageId": _STRING,
    "contextId": _STRING,
    "taskId": _STRING,
    "role": _STRING,
    "metadata": _OBJECT,
    "extensions": _STRINGS,
    "referenceTaskIds": _STRINGS,
}
ARTIFACT_FIELDS: dict[str, dict[str, Any]] = {
    "artifactId": _STRING,
    "name": _STRING,
    "description": _STRING,
    "metadata": _OBJECT,
    "extensions": _STRINGS,
}
_WORDS = {"string": "a string", "object": "a mapping", "array": "a list of strings"}


def _typed(value: dict[str, Any], fields: dict[str, dict[str, Any]], loc: Loc) -> Found:
    """The fields of `value` that are not of the type `fields` gives them."""
    found: Found = []
    for name, schema in fields.items():
        if name not in value:
            continue
        item, kind = value[name], schema["type"]
        fits = (
            isinstance(item, str)
            if kind == "string"
            else isinstance(item, dict)
            if kind == "object"
            else isinstance(item, list) and all(isinstance(each, str) for each in item)
        )
        if not fits:
            found.append((loc + (name,), f"`{name}` takes {_WORDS[kind]}; got {item!r}"))
        elif "pattern" in schema and not re.fullmatch(schema["pattern"][1:-1], item):
            found.append((loc + (name,), f"`{name}` takes base64 (as aGVsbG8=); got {item!r}"))
    return found


_HUGE = "[0-9]{309}"
"""Digits enough for an integer past a double's range (1.8e308), which no client reads."""


def not_json(value: Any, loc: Loc = ()) -> Found:
    """Where `value` holds what JSON has not, or what no JSON reader holds: a NaN or infinite
    number (YAML's .nan, .inf), an integer past a double's range, a date (YAML's unquoted
    2026-01-01), bytes (!!binary), a set (!!set)."""
    try:  # C's pass first: nearly all content is JSON, and is then walked no further
        if not re.search(_HUGE, json.dumps(value, allow_nan=False, check_circular=False)):
            return []  # (a run of digits that long may be a huge number, or only text)
    except (ValueError, TypeError, RecursionError):  # a NaN, or a YAML date: walk to find it
        pass
    found: Found = []
    seen: set[int] = set()  # a container met again (a YAML alias, a Python cycle) is walked once
    stack: list[tuple[Loc, Any]] = [(loc, value)]
    while stack:  # a stack of its own: content may nest deeper than recursion goes
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            written = ".nan" if math.isnan(item) else "-.inf" if item < 0 else ".inf"
            found.append((where, f"{written} is no JSON number (JSON has no NaN or Infinity)"))
        elif isinstance(item, int) and abs(item) > sys.float_info.max:
            found.append((where, "a number past 1.8e308 is no JSON number a client can read"))
        elif isinstance(item, date):
            written = item.isoformat()
            found.append((where, f"YAML reads {written} as a date, which JSON has not: quote it"))
        elif not isinstance(item, dict | list | str | int | float | None):
            found.append((where, f"a {type(item).__name__} is no JSON value"))
        elif isinstance(item, dict | list) and id(item) in seen:
            continue
        elif isinstance(item, dict):
            seen.add(id(item))
            stack.extend(reversed([(where + (key,), each) for key, each in item.items()]))
        elif isinstance(item, list):
            seen.add(id(item))
            stack.extend(reversed([(where + (i,), each) for i, each in enumerate(item)]))
    return found


def _part(part: Any, loc: Loc) -> Found:
    """A part is a mapping with exactly one of PART_KINDS, its fields of their types."""
    if not isinstance(part, dict):
        return [(loc, "a part is a mapping such as {text: hello}")]
    if sum(kind in part for kind in PART_KINDS) != 1:
        return [(loc, f"a part has exactly one of {', '.join(PART_KINDS)}")]
    return _typed(part, PART_FIELDS, loc)


def _content(value: dict[str, Any], owner: str, fields: dict[str, dict[str, Any]]) -> None:
    """`value` (a message or an artifact, named by `owner`) has a non-empty list of good parts,
    fields of their types and only finite numbers; refused with every problem otherwise."""
    parts = value.get("parts")
    if not isinstance(parts, list) or not parts:
        raise ValueError(
            f"{owner} needs a non-empty `parts` list"
            + (" (or write it as a string)" if owner == "a message" else "")
        )
    found = [problem for i, part in enumerate(parts) for problem in _part(part, ("parts", i))]
    refuse(owner, [*found, *_typed(value, fields, ()), *not_json(value)], value)


def _message(value: Any) -> Any:
    """`"text"` is shorthand for one text part; a mapping must carry `parts`."""
    if isinstance(value, str):
        return {"parts": [{"text": value}]}
    if isinstance(value, dict):
        _content(value, "a message", MESSAGE_FIELDS)
        return value
    raise ValueError("a message is a string or a mapping with `parts`")


def _artifact(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError("an artifact is a mapping with `artifactId` and `parts`")
    if not isinstance(value.get("artifactId"), str):
        raise ValueError("an artifact needs an `artifactId`")
    _content(value, "an artifact", ARTIFACT_FIELDS)
    return value


def _finite(value: Any) -> Any:
    refuse("JSON", not_json(value), value)
    return value


PART_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "a part: exactly one of text, raw, url, data (and mediaType, filename…)",
    "properties": PART_FIELDS,
    "oneOf": [{"required": [kind]} for kind in PART_KINDS],
}
PARTS_SCHEMA: dict[str, Any] = {"type": "array", "minItems": 1, "items": PART_SCHEMA}
MESSAGE_SCHEMA: dict[str, Any] = {
    "description": "a string (one text part) or {parts: [...], metadata: {...}}",
    "anyOf": [
        {"type": "string"},
        {
            "type": "object",
            "required": ["parts"],
            "properties": {"parts": PARTS_SCHEMA, **MESSAGE_FIELDS},
        },
    ],
}
ARTIFACT_SCHEMA: dict[str, Any] = {
    "description": "A2A Artifact (artifactId, parts, name…)",
    "type": "object",
    "required": ["artifactId", "parts"],
    "properties": {"parts": PARTS_SCHEMA, **ARTIFACT_FIELDS},
}

MessageContent = Annotated[
    dict[str, Any], BeforeValidator(_message), WithJsonSchema(MESSAGE_SCHEMA)
]
"""A message as written: a string or a mapping with parts; kept as the mapping."""
ArtifactContent = Annotated[
    dict[str, Any], BeforeValidator(_artifact), WithJsonSchema(ARTIFACT_SCHEMA)
]
"""An artifact: a mapping with `artifactId` and parts."""
Finite = AfterValidator(_finite)
"""Refuses what JSON has not anywhere in the value (`Annotated[dict[str, Any], Finite]`)."""
