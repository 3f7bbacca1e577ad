"""A cassette's validation errors as problems that point at the fix, one per mistake.

pydantic reports every problem it meets, in its own order and words. The report lists each
mistake once: an unknown key comes first (a typo also makes the field it meant "missing", which
says less and is left out), with the known key it most likely meant.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from mockagent.cassette.base import BOUNDS
from mockagent.cassette.rules import Loc
from mockagent.cassette.suggestions import suggestion


def in_data(data: Any, loc: Loc, error_type: str) -> Loc:
    """The part of a pydantic error location that names fields as written.

    pydantic adds union-member tags (`str`, `list[str]`) and validator names to locations; they
    are left out, being no part of the data. A missing field keeps its own name.
    """
    kept: list[str | int] = []
    for i, part in enumerate(loc):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        elif not (error_type == "missing" and i == len(loc) - 1):
            continue
        kept.append(part)
    return tuple(kept)


def every_problem(
    root: type[BaseModel], data: Any, errors: list[ErrorDetails]
) -> list[tuple[Loc, str]]:
    """Where each problem is, and its message: unknown keys first, then pydantic's order."""
    found: dict[Loc, str] = {}  # location → message, in pydantic's order; unknown keys first
    unknown: dict[Loc, str] = {}
    for error in errors:
        if error["type"] == "default_factory_not_called":
            continue  # pydantic's own: a default made from a field that failed, reported there
        loc = in_data(data, error["loc"], error["type"])
        if error["type"] == "extra_forbidden":
            unknown.setdefault(loc, _unknown_field(root, loc))
        else:
            found.setdefault(loc, _message(error))
    for loc, message in unknown.items():  # the field a typo meant is not missing: it is misspelt
        meant = message.partition("did you mean ")[2].strip("'?")
        if meant and found.get(loc[:-1] + (meant,)) == "Field required":
            del found[loc[:-1] + (meant,)]
    # A value that fits no member of a union gets an error per member; the member that took
    # it furthest (an error deeper in the value) is the one the user meant.
    above = {loc[:end] for loc in found for end in range(len(loc))}
    found = {loc: message for loc, message in found.items() if loc not in above}
    problems = {**unknown, **{loc: message for loc, message in found.items() if loc not in unknown}}
    return list(problems.items())


def _message(error: ErrorDetails) -> str:
    """pydantic's message, or ours where it would not say why there is a bound."""
    limit = error.get("ctx", {}).get("le")
    if error["type"] == "less_than_equal" and limit in BOUNDS:
        return f"must be at most {limit} ({BOUNDS[limit]})"
    return error["msg"].removeprefix("Value error, ")


def _unknown_field(root: type[BaseModel], loc: Loc) -> str:
    model = _model_at(root, loc[:-1])
    if model is None:
        return "unknown field"
    known = [info.alias or name for name, info in model.model_fields.items()]
    return f"unknown field; {suggestion(loc[-1], known, known)}"


def _model_at(root: Any, loc: Loc) -> type[BaseModel] | None:
    """The model whose fields are at `loc` below `root`, following the field types."""
    kinds = [root]
    for part in loc:
        kinds = [inner for kind in kinds for inner in _step(kind, part)]
    models = [kind for kind in kinds for kind in _members(kind) if _is_model(kind)]
    return models[0] if models else None


def _members(kind: Any) -> list[Any]:
    """The types a value of `kind` may be: the members of a union, Annotated unwrapped."""
    origin = typing.get_origin(kind)
    if origin is typing.Annotated:
        return _members(typing.get_args(kind)[0])
    if origin in (typing.Union, types.UnionType):
        return [member for arg in typing.get_args(kind) for member in _members(arg)]
    return [kind]


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _step(kind: Any, part: str | int) -> list[Any]:
    """The types found one step below a value of `kind`, at key or index `part`."""
    out = []
    for member in _members(kind):
        origin, args = typing.get_origin(member), typing.get_args(member)
        if _is_model(member) and isinstance(part, str):
            out += [
                info.annotation
                for name, info in member.model_fields.items()
                if (info.alias or name) == part
            ]
        elif origin is list and isinstance(part, int) and args:
            out.append(args[0])
        elif origin is dict and isinstance(part, str) and len(args) == 2:
            out.append(args[1])
    return out
