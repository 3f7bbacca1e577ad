"""What every model of the cassette format shares: strict fields, no unknown ones, and rules
between fields that are checked on load and stated in the JSON Schema alike."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from mockagent.cassette import rules
from mockagent.cassette.rules import Rule


class Model(BaseModel):
    """A part of the cassette format: strict, closed to unknown fields, checked by its `rules`."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, json_schema_extra=rules.add_to_schema
    )
    rules: ClassVar[tuple[Rule, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _blanks_unset(cls, data: Any) -> Any:
        """A field marked `BLANK` and left blank (`description:`, null) takes its default."""
        blanks = _blank_fields(cls)
        if blanks and isinstance(data, dict) and any(data.get(name, 0) is None for name in blanks):
            return {
                key: value for key, value in data.items() if not (key in blanks and value is None)
            }
        return data

    @model_validator(mode="after")
    def _rules(self) -> Any:
        rules.check(self)
        return self


@dataclass(frozen=True)
class _Blank:
    """In the JSON Schema, null is also a value of the field (it means: the default)."""

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        return {"anyOf": [handler(core_schema), {"type": "null"}]}


BLANK = _Blank()
"""Marks a field (`Annotated[str, BLANK]`) whose blank value is the same as leaving it out."""


@functools.cache
def _blank_fields(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(
        info.alias or name for name, info in model.model_fields.items() if BLANK in info.metadata
    )


def _whole(value: Any) -> Any:
    """3.0 is 3, as JSON Schema's `integer` has it (strict pydantic refuses any float)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


MAX_COUNT = 1_000_000_000
"""The most any count may be (polls, events, uses): more than any test makes, and a number every
store, JSON reader and C integer holds exactly."""
MAX_MS = 86_400_000
"""The longest time a cassette may name (a gate, a delay, a tick, a cap), in milliseconds: a day.
The clock and the timers hold any number of them (timestamps stop at the year 9999)."""
MAX_SCALE = 1000
"""The largest pace factor (`scale=F`): a day's gap played a thousand times slower still fits
every timer."""
BOUNDS = {
    MAX_COUNT: "a billion, more than any test makes",
    MAX_MS: "a day in milliseconds, the longest wait the clock and timers take",
}
"""What each upper bound is, for the message that names it."""

# The bounds go inside, before the validator: set on a field around a validator, pydantic checks
# them but writes them into the JSON Schema as `ge`/`le`, which no validator knows.
Count = Annotated[int, Field(ge=0, le=MAX_COUNT), BeforeValidator(_whole)]
"""A whole number, 0 to a billion."""
Positive = Annotated[int, Field(ge=1, le=MAX_COUNT), BeforeValidator(_whole)]
"""A whole number, 1 to a billion."""
Millis = Annotated[int, Field(ge=0, le=MAX_MS), BeforeValidator(_whole)]
"""Milliseconds, 0 to a day."""
ErrorStatus = Annotated[int, Field(ge=400, le=599), BeforeValidator(_whole)]
"""An HTTP status that is an error, 400 to 599."""
