"""Protocol content inside a cassette: messages, parts, artifacts.

They stay plain JSON (A2A v1.0 ProtoJSON: camelCase, flat parts), checked only as far as
mockagent relies on them. Each check has its JSON Schema beside it, saying the same.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic.json_schema import WithJsonSchema

PART_KINDS = ("text", "raw", "url", "data")
PART_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "a part: exactly one of text, raw, url, data (and mediaType, filename…)",
    "oneOf": [{"required": [kind]} for kind in PART_KINDS],
}
PARTS_SCHEMA: dict[str, Any] = {"type": "array", "minItems": 1, "items": PART_SCHEMA}


def check_part(part: Any, where: str) -> None:
    """A part is a mapping with exactly one of PART_KINDS."""
    if not isinstance(part, dict):
        raise ValueError(f"{where}: a part is a mapping such as {{text: hello}}")
    if sum(kind in part for kind in PART_KINDS) != 1:
        raise ValueError(f"{where}: a part has exactly one of {', '.join(PART_KINDS)}")


def check_parts(value: dict[str, Any], owner: str) -> None:
    """`value` (a message or an artifact, named by `owner`) has a non-empty list of good parts."""
    parts = value.get("parts")
    if not isinstance(parts, list) or not parts:
        raise ValueError(
            f"{owner} needs a non-empty `parts` list"
            + (" (or write it as a string)" if owner == "a message" else "")
        )
    for i, part in enumerate(parts):
        check_part(part, f"parts[{i}]")


def _message(value: Any) -> Any:
    """`"text"` is shorthand for one text part; a mapping must carry `parts`."""
    if isinstance(value, str):
        return {"parts": [{"text": value}]}
    if isinstance(value, dict):
        check_parts(value, "a message")
        return value
    raise ValueError("a message is a string or a mapping with `parts`")


def _artifact(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError("an artifact is a mapping with `artifactId` and `parts`")
    if not isinstance(value.get("artifactId"), str):
        raise ValueError("an artifact needs an `artifactId`")
    check_parts(value, "an artifact")
    return value


MESSAGE_SCHEMA: dict[str, Any] = {
    "description": "a string (one text part) or {parts: [...], metadata: {...}}",
    "anyOf": [
        {"type": "string"},
        {"type": "object", "required": ["parts"], "properties": {"parts": PARTS_SCHEMA}},
    ],
}
ARTIFACT_SCHEMA: dict[str, Any] = {
    "description": "A2A Artifact (artifactId, parts, name…)",
    "type": "object",
    "required": ["artifactId", "parts"],
    "properties": {"artifactId": {"type": "string"}, "parts": PARTS_SCHEMA},
}

MessageContent = Annotated[
    dict[str, Any], BeforeValidator(_message), WithJsonSchema(MESSAGE_SCHEMA)
]
"""A message as written: a string or a mapping with parts; kept as the mapping."""
ArtifactContent = Annotated[
    dict[str, Any], BeforeValidator(_artifact), WithJsonSchema(ARTIFACT_SCHEMA)
]
