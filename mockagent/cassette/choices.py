"""The words a cassette may use where only some are meant: operations, error names, task states.

Each is a fixed set, so the loader refuses any other word with a suggestion (difflib's closest
match) and the JSON Schema lists the same set (`enum`), which editors offer as completions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic.json_schema import WithJsonSchema

from mockagent.cassette.states import AGENTEX_STATES, STATE_SPELLINGS, TaskState
from mockagent.cassette.suggestions import suggestion
from mockagent.errors import ERROR_KINDS
from mockagent.vocabulary import OPERATIONS

ALL_OPERATIONS = sorted(OPERATIONS["a2a"] | OPERATIONS["agentex"])

ERROR_NAMES = list(ERROR_KINDS)
"""The neutral error names a `reply.error` or `fault.error` may use."""

STATE_NAMES = ["TASK_STATE_" + state.name for state in TaskState]
"""How a state is listed in messages (every spelling in STATE_SPELLINGS is accepted)."""
AGENTEX_STATE_SPELLINGS = [
    word for word, state in STATE_SPELLINGS.items() if state in AGENTEX_STATES
]


def known(what: str, choices: Sequence[str], listed: Sequence[str] | None = None) -> Any:
    """A validator that takes only `choices`, and refuses another naming the closest."""

    def check(value: str) -> str:
        if value not in choices:
            raise ValueError(f"unknown {what} {value!r}; {suggestion(value, choices, listed)}")
        return value

    return AfterValidator(check)


def listing(choices: Sequence[str]) -> WithJsonSchema:
    """The JSON Schema of a string that is one of `choices`."""
    return WithJsonSchema({"type": "string", "enum": list(choices)})


def _state_value(value: str) -> str:
    return STATE_SPELLINGS[value].value  # known: checked just before


Operation = Annotated[str, known("operation", ALL_OPERATIONS), listing(ALL_OPERATIONS)]
ErrorName = Annotated[str, known("error", ERROR_NAMES), listing(ERROR_NAMES)]
StateName = Annotated[
    str,
    known("task state", list(STATE_SPELLINGS), STATE_NAMES),
    AfterValidator(_state_value),
    listing(list(STATE_SPELLINGS)),
]
"""A task state as written (`TASK_STATE_WORKING`, `working`…), kept as the TaskState's value."""
