"""Rules between fields, written once: the models check them on load, the JSON Schema states them.

A model lists its rules in `rules`. Paths are field names as written in the file; `*` stands for
every item of a list. `violations(model)` yields (location, message) for a model whose fields
are valid; `schema()` is the same rule in JSON Schema, which the model's schema gets under
`allOf`. A field is *given* when it is there and not null.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

Loc = tuple[str | int, ...]
Found = list[tuple[Loc, str]]
"""Where a rule does not hold, and why; empty when it holds (a list: most are, and cheaply)."""


class Rule(Protocol):
    def violations(self, model: BaseModel) -> Found: ...

    def schema(self) -> dict[str, Any]: ...


def refuse(title: str, found: Iterable[tuple[Loc, str]], value: Any = None) -> None:
    """Raise what pydantic raises for bad fields, one error per (location, message), so the
    locations reach the loader's report below wherever pydantic called the check from."""
    errors = [
        InitErrorDetails(type=PydanticCustomError("rule", message), loc=loc, input=value)
        for loc, message in found
    ]
    if errors:
        raise ValidationError.from_exception_data(title, errors)


def attribute(model: BaseModel, name: str) -> Any:
    """A field's value by the name the file writes it with (its alias, if any)."""
    value = getattr(model, name, _ALIASED)
    return getattr(model, _field_names(type(model))[name]) if value is _ALIASED else value


_ALIASED: Any = object()


@functools.cache
def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """Alias → field name, for the fields that have one (`from` → `from_`)."""
    return {info.alias: name for name, info in model.model_fields.items() if info.alias}


def values_at(value: Any, path: tuple[str, ...]) -> list[tuple[Loc, Any]]:
    """Every value at `path` below `value`, with its location; None where a field is unset.

    Level by level, not recursively: a big cassette has tens of thousands of steps to visit.
    """
    level: list[tuple[Loc, Any]] = [((), value)]
    for part in path:
        if part == "*":
            level = [
                (loc + (i,), item)
                for loc, items in level
                if isinstance(items, list | tuple)
                for i, item in enumerate(items)
            ]
        else:
            level = [
                (loc + (part,), attribute(item, part))
                for loc, item in level
                if isinstance(item, BaseModel)
            ]
    return level


def given(name: str) -> dict[str, Any]:
    """JSON Schema: the field `name` is there and not null."""
    return {"required": [name], "properties": {name: {"not": {"type": "null"}}}}


def below(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema: `leaf` holds for every value at `path` (absent ones pass)."""
    for part in reversed(path):
        leaf = {"items": leaf} if part == "*" else {"properties": {part: leaf}}
    return leaf


@dataclass(frozen=True)
class ExactlyOne:
    """Exactly one of `fields` is given."""

    fields: tuple[str, ...]
    message: str

    def violations(self, model: BaseModel) -> Found:
        given = 0
        for name in self.fields:
            given += attribute(model, name) is not None
        return [] if given == 1 else [((), self.message)]

    def schema(self) -> dict[str, Any]:
        return {"oneOf": [given(name) for name in self.fields]}


@dataclass(frozen=True)
class Needs:
    """`field` (when given, or when it equals `when`) needs `other` given."""

    field: str
    other: str
    message: str
    when: Any = None

    def violations(self, model: BaseModel) -> Found:
        value = attribute(model, self.field)
        active = value is not None if self.when is None else value == self.when
        if active and attribute(model, self.other) is None:
            return [((self.field,), self.message)]
        return []

    def schema(self) -> dict[str, Any]:
        condition = (
            given(self.field)
            if self.when is None
            else {"required": [self.field], "properties": {self.field: {"const": self.when}}}
        )
        return {"if": condition, "then": given(self.other)}


@dataclass(frozen=True)
class AnyGiven:
    """At least one of `paths` (each a path of fields) is given."""

    paths: tuple[tuple[str, ...], ...]
    message: str

    def violations(self, model: BaseModel) -> Found:
        if any(value is not None for path in self.paths for _, value in values_at(model, path)):
            return []
        return [((), self.message)]

    def schema(self) -> dict[str, Any]:
        def chain(path: tuple[str, ...]) -> dict[str, Any]:
            inner = given(path[-1])
            for name in reversed(path[:-1]):  # each field on the way is an object, not null
                inner = {"required": [name], "properties": {name: {"type": "object", **inner}}}
            return inner

        return {"anyOf": [chain(path) for path in self.paths]}


@dataclass(frozen=True)
class Given:
    """The top-level field `field` is given (and, when `nonempty`, not an empty list)."""

    field: str
    message: str
    nonempty: bool = False

    def violations(self, model: BaseModel) -> Found:
        value = attribute(model, self.field)
        if value is None or (self.nonempty and not value):
            return [((self.field,), self.message)]
        return []

    def schema(self) -> dict[str, Any]:
        schema = given(self.field)
        if self.nonempty:
            schema["properties"][self.field]["minItems"] = 1
        return schema


@dataclass(frozen=True)
class Absent:
    """No value at `path` is given."""

    path: tuple[str, ...]
    message: str

    def violations(self, model: BaseModel) -> Found:
        found = values_at(model, self.path)
        return [(loc, self.message) for loc, value in found if value is not None]

    def schema(self) -> dict[str, Any]:
        return below(self.path, {"type": "null"})


@dataclass(frozen=True)
class NoneOf:
    """No value at `path` (a word, or a list of words) is one of `values`; the file writes
    them as `written` (the schema's words)."""

    path: tuple[str, ...]
    values: Collection[str]
    written: list[str]
    message: Callable[[str], str]

    def violations(self, model: BaseModel) -> Found:
        found = []
        for loc, value in values_at(model, self.path):
            for i, item in enumerate(value) if isinstance(value, list) else [(None, value)]:
                if item in self.values:
                    found.append((loc if i is None else loc + (i,), self.message(item)))
        return found

    def schema(self) -> dict[str, Any]:
        refused = {"not": {"enum": self.written}}
        return below(self.path, {**refused, "items": refused})


@dataclass(frozen=True)
class When:
    """`then` holds where `field` (a name, or a path of names) equals `value` (also when
    absent, if that is its `default`), `otherwise` elsewhere."""

    field: str | tuple[str, ...]
    value: Any
    default: Any
    then: tuple[Rule, ...]
    otherwise: tuple[Rule, ...]

    def violations(self, model: BaseModel) -> Found:
        path = (self.field,) if isinstance(self.field, str) else self.field
        [(_, value)] = values_at(model, path) or [((), None)]
        rules = self.then if value == self.value else self.otherwise
        return [found for rule in rules for found in rule.violations(model)]

    def schema(self) -> dict[str, Any]:
        path = (self.field,) if isinstance(self.field, str) else self.field
        condition: dict[str, Any] = {"properties": {path[-1]: {"const": self.value}}}
        if self.default != self.value:
            condition["required"] = [path[-1]]
        for name in reversed(path[:-1]):  # each field on the way is there, an object
            condition = {"required": [name], "properties": {name: {"type": "object", **condition}}}
        return {
            "if": condition,
            "then": {"allOf": [r.schema() for r in self.then]},
            "else": {"allOf": [r.schema() for r in self.otherwise]},
        }


def check(model: BaseModel) -> None:
    """Raise a ValidationError for every rule of `model` that does not hold."""
    rules: tuple[Rule, ...] = getattr(model, "rules", ())
    if rules:  # most models have none, and there are many of them
        refuse(type(model).__name__, [found for rule in rules for found in rule.violations(model)])


def add_to_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """The rules of `model` in its JSON Schema (`json_schema_extra` of the models' config)."""
    stated = [rule.schema() for rule in getattr(model, "rules", ())]
    stated = [s for s in stated if s]  # {}: a rule JSON Schema cannot state
    if stated:
        schema["allOf"] = stated
