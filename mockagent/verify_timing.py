"""The one rule `verify` and `verify --update` share for `after: {ms}` gates.

A live agent never takes exactly the time a cassette says: a gate is only wrong when the agent
is far off it, more than `MS_FAR` ms and more than twice (or half) the gate. Then `verify`
reports it as drift, and `--update` writes what the agent took, rounded to two significant
digits (301 is 300, 2512 is 2500; 17 is 20), so that a re-run does not rewrite the jitter.
Within that, the written gate stays. `polls` gates are never verified: they count the recorded
client's polls, and verify polls at its own speed.
"""

from __future__ import annotations

MS_FAR = 1000  # an `ms` gate further off than this (and than twice itself) follows the agent


def far_off(written: int, took: float) -> bool:
    """Whether an agent that took `took` ms is far off a gate of `written` ms."""
    return abs(took - written) > MS_FAR and not written / 2 <= took <= written * 2


def rounded(took: float) -> int:
    """`took` ms to two significant digits: what `--update` writes for a gate."""
    value = round(took)
    if value < 100:
        return round(value, -1)
    scale = 10 ** (len(str(value)) - 2)
    return round(value / scale) * scale
