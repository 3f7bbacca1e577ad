"""The words a cassette may use where only some are meant: operations, error names, task states.

Each is a fixed set, so the loader refuses any other word with a suggestion (difflib's closest
match) and the JSON Schema lists the same set (`enum`), which editors offer as completions.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic.json_schema import WithJsonSchema

from mockagent.cassette.states import AGENTEX_STATES, STATE_SPELLINGS, TaskState
from mockagent.errors import ERROR_KINDS
from mockagent.vocabulary import OPERATIONS

ALL_OPERATIONS = sorted(OPERATIONS["a2a"] | OPERATIONS["agentex"])

ERROR_NAMES = list(ERROR_KINDS)
"""The neutral error names a `reply.error` or `fault.error` may use."""

MAX_LISTED = 20

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

STATE_NAMES = ["TASK_STATE_" + state.name for state in TaskState]
"""How a state is listed in messages (every spelling in STATE_SPELLINGS is accepted)."""
AGENTEX_STATE_SPELLINGS = [
    word for word, state in STATE_SPELLINGS.items() if state in AGENTEX_STATES
]


def _key(word: str) -> str:
    """What words are compared by: case aside, and without the prefix every A2A state has
    (with it, TASK_STATE_DONE looks like TASK_STATE_WORKING)."""
    return word.lower().removeprefix("task_state_")


def suggestion(value: Any, choices: Collection[str], listed: Sequence[str] | None = None) -> str:
    """`did you mean 'steps'?` for the choice closest to `value` (case aside), else
    `use one of …` (the `listed` choices, or all of them)."""
    keys: dict[str, list[str]] = {}
    for choice in choices:
        keys.setdefault(_key(choice), []).append(choice)
    close = difflib.get_close_matches(_key(str(value)), list(keys), n=1, cutoff=0.75)
    if close:  # of the spellings of that word, the one most like what was written
        best = max(
            keys[close[0]],
            key=lambda choice: difflib.SequenceMatcher(None, str(value), choice).ratio(),
        )
        return f"did you mean {best!r}?"
    listed = listed if listed is not None else sorted(choices)
    if len(listed) > MAX_LISTED:  # a cassette's interaction names, say: too many to read
        return f"use one of {', '.join(listed[:MAX_LISTED])}, …"
    return f"use one of {', '.join(listed)}"


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
