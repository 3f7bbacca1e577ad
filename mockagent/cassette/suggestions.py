"""`did you mean 'steps'?`: the suggestion every refused word gets, in a cassette, a marker option,
a config key or a flag. A leaf (difflib only), so that any layer may suggest.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from typing import Any

MAX_LISTED = 20


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
