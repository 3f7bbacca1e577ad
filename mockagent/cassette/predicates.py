"""The shape of matcher predicates, checked on load; the engine compiles them (engine.matchers).

A predicate is a plain value (equals) or a mapping of keywords that must all hold. In `where`, a
mapping without any keyword is a plain value too (params hold mappings); one that mixes keywords
and other keys is a mistake. `text`, `parts` and `headers` never hold a mapping, so there every
key of a mapping must be a keyword. Over lists, `any`/`all`/`none` take a predicate or a mapping
of field paths to predicates. What a `text` or a `where` path can never match is
`text_match`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic.json_schema import WithJsonSchema

from mockagent.cassette.content import not_json
from mockagent.cassette.regexes import regex_problem
from mockagent.cassette.rules import Loc, refuse
from mockagent.cassette.suggestions import suggestion
from mockagent.cassette.text_match import (
    ARGUMENTS,
    OVER_LISTS,
    PATH,
    STRING_ARGUMENTS,
    path_problems,
    text_problems,
)

Found = Iterator[tuple[Loc, str]]


def problems(spec: Any, strict: bool, loc: Loc = ()) -> Found:
    """What is wrong with a predicate, as (location below it, message)."""
    if not isinstance(spec, dict) or not spec:
        return
    unknown = [key for key in spec if key not in ARGUMENTS]
    if len(unknown) == len(spec) and not strict:
        return  # a plain mapping: equals
    for key in unknown:
        yield loc + (key,), f"unknown predicate; {suggestion(key, ARGUMENTS)}"
    for key, arg in spec.items():
        yield from _argument(ARGUMENTS.get(key), arg, loc + (key,))


def _argument(kind: str | None, arg: Any, loc: Loc) -> Found:
    if kind == "bool" and not isinstance(arg, bool):
        yield loc, f"`{loc[-1]}` takes true or false"
    elif kind == "list" and not isinstance(arg, list):
        yield loc, "`in` takes a list of values"
    elif kind == "regex":
        problem = regex_problem(str(arg))
        if problem is not None:
            yield loc, problem
    elif kind == "predicate":
        yield from problems(arg, False, loc)
    elif kind == "element":
        if isinstance(arg, dict) and arg and all(key in ARGUMENTS for key in arg):
            yield from problems(arg, False, loc)
        elif isinstance(arg, dict):  # field path → predicate, per item
            for path, sub in arg.items():
                yield from problems(sub, False, loc + (path,))
        else:
            yield from problems(arg, False, loc)


def _checked(strict: bool) -> Any:
    def check(spec: Any) -> Any:
        refuse("predicate", problems(spec, strict), spec)
        return spec

    return check


def _text_checked(spec: Any) -> Any:
    found = list(problems(spec, True))
    refuse("predicate", found or text_problems(spec), spec)
    return spec


def _headers_checked(specs: dict[str, Any]) -> dict[str, Any]:
    """Each header's predicate is strict, and can hold for a string (a header's value)."""
    found: list[tuple[Loc, str]] = []
    for key, spec in specs.items():
        if spec is None:
            found.append(((key,), "a header takes a string; for a header left out: {absent: true}"))
        else:  # the shape first: what text_problems reads is a well-formed predicate
            found += list(problems(spec, True, (key,))) or text_problems(spec, (key,), "a header")
    refuse("predicates", found, specs)
    return specs


def _where_checked(specs: dict[str, Any]) -> dict[str, Any]:
    """Each path names keys and indexes; each predicate is loose (params hold mappings), and
    JSON, as the params are (a YAML date or .nan never equals anything in them)."""
    found = [each for key, spec in specs.items() for each in problems(spec, False, (key,))]
    refuse("predicates", [*found, *path_problems(specs), *not_json(specs)], specs)
    return specs


# JSON Schema: placeholders that `link` swaps for references to DEFINITIONS (pydantic refuses a
# reference to a definition it does not know).
_KEY = "x-mockagent-predicate"
_LOOSE, _STRICT, _TEXT = {_KEY: "loose"}, {_KEY: "strict"}, {_KEY: "text"}
_NOT_OBJECT = {"not": {"type": "object"}}
_KEYWORDS_ONLY = {"type": "object", "minProperties": 1, "propertyNames": {"enum": list(ARGUMENTS)}}
_ARGUMENT_SCHEMAS = {
    "value": {},
    "regex": {},
    "bool": {"type": "boolean"},
    "list": {"type": "array"},
    "predicate": {"$ref": "#/$defs/Predicate"},
    "element": {"$ref": "#/$defs/PredicateOverItems"},
}
DEFINITIONS: dict[str, Any] = {
    "PredicateKeywords": {
        **_KEYWORDS_ONLY,
        "properties": {
            key: _ARGUMENT_SCHEMAS[kind]
            for key, kind in ARGUMENTS.items()
            if _ARGUMENT_SCHEMAS[kind]
        },
    },
    "Predicate": {
        "description": "a plain value (equals) or {keyword: argument, …}",
        "anyOf": [
            _NOT_OBJECT,
            {"type": "object", "propertyNames": {"not": {"enum": list(ARGUMENTS)}}},
            {"$ref": "#/$defs/PredicateKeywords"},
        ],
    },
    "StrictPredicate": {
        "description": "a plain value (equals) or {keyword: argument, …}",
        "anyOf": [
            _NOT_OBJECT,
            {"type": "object", "maxProperties": 0},
            {"$ref": "#/$defs/PredicateKeywords"},
        ],
    },
    "TextPredicate": {
        "description": "a string (equals), or {keyword: argument, …} that a string can meet",
        "anyOf": [{"type": "string"}, {"type": "null"}, {"$ref": "#/$defs/TextKeywords"}],
    },
    "TextKeywords": {
        "type": "object",
        "minProperties": 1,
        "propertyNames": {"enum": [key for key in ARGUMENTS if key not in OVER_LISTS]},
        "properties": {
            **{key: {"type": "string"} for key in STRING_ARGUMENTS},
            "in": {"type": "array", "items": {"type": "string"}},
            "not": {"$ref": "#/$defs/TextPredicate"},
            "exists": {"type": "boolean"},
            "absent": {"type": "boolean"},
        },
    },
    "PredicateOverItems": {
        "description": "a predicate, or {field.path: predicate, …} per item",
        "anyOf": [
            _NOT_OBJECT,
            {"$ref": "#/$defs/PredicateKeywords"},
            {
                "type": "object",
                "not": _KEYWORDS_ONLY,
                "additionalProperties": {"$ref": "#/$defs/Predicate"},
            },
        ],
    },
}

StrictPredicate = Annotated[Any, AfterValidator(_checked(True)), WithJsonSchema(_STRICT)]
"""`parts`: a mapping is keywords only."""
TextPredicate = Annotated[Any, AfterValidator(_text_checked), WithJsonSchema(_TEXT)]
"""`text`: a string, or keywords only, each of which can hold for a string."""
HeaderPredicates = Annotated[
    dict[str, Any],
    AfterValidator(_headers_checked),
    WithJsonSchema({"type": "object", "additionalProperties": {**_TEXT, "not": {"type": "null"}}}),
]
"""`headers`: name → a predicate on a string, as `text` (null: none)."""
Predicates = Annotated[
    dict[str, Any],
    AfterValidator(_where_checked),
    WithJsonSchema(
        {"type": "object", "propertyNames": {"pattern": PATH}, "additionalProperties": _LOOSE}
    ),
]
"""`where`: path → a predicate (a mapping without keywords is a plain value)."""


def link(schema: Any) -> Any:
    """`schema` with the placeholders made references to DEFINITIONS (added to its `$defs`)."""

    def swap(node: Any) -> Any:
        if isinstance(node, dict) and _KEY in node:  # it may have a description or default too
            kind = node[_KEY]
            rest = {key: value for key, value in node.items() if key != _KEY}
            name = {"loose": "Predicate", "strict": "StrictPredicate", "text": "TextPredicate"}[
                kind
            ]
            return {"$ref": f"#/$defs/{name}", **rest}
        if isinstance(node, dict):
            return {key: swap(value) for key, value in node.items()}
        return [swap(item) for item in node] if isinstance(node, list) else node

    linked = swap(schema)
    linked.setdefault("$defs", {}).update(DEFINITIONS)
    return linked
