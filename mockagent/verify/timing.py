"""The one rule `verify` and `verify --update` share for `after: {ms}` gates.

A live agent never takes exactly the time a cassette says: a gate is only wrong when the agent
is far off it, more than `MS_FAR` ms and more than twice (or half) the gate. Then `verify`
reports it as drift, and `--update` writes what the agent took, rounded (301 is 300, 2512 is
2500, 17 is 0), so that a re-run does not rewrite the jitter.
Within that, the written gate stays. A `polls` gate counts the recorded client's polls, and
verify polls faster than any client: an agent that needs more of its polls has not moved. One
that shows the step after fewer polls than the gate waits for has moved it (it answers on polls,
or got faster): `verify` reports it, and `--update` writes the polls it took (one at least).
A2A only: an Agentex gate counts the recorded client's `GET /tasks` and `GET /messages` alike,
which verify does not make as the client did.
"""

from __future__ import annotations

import time

from mockagent.dialects import sse_read

MS_FAR = 1000  # an `ms` gate further off than this (and than twice itself) follows the agent


def far_off(written: int, took: float) -> bool:
    """Whether an agent that took `took` ms is far off a gate of `written` ms."""
    return abs(took - written) > MS_FAR and not written / 2 <= took <= written * 2


def fewer_polls(written: int, took: int) -> bool:
    """Whether an agent that showed a step after `took` polls moved a gate of `written` polls:
    only fewer polls say so (verify polls faster than any client: more say nothing)."""
    return took < written


def rounded(took: float) -> int:
    """`took` ms as `--update` writes a gate: to 50 ms under a second, to 100 ms under ten,
    to two significant digits above (a gate is a pace, not a measurement)."""
    value = round(took)
    if value < 1000:
        return round(value / 50) * 50
    if value < 10_000:
        return round(value, -2)
    scale = 10 ** (len(str(value)) - 2)
    return round(value / scale) * scale


class Arrivals:
    """Told each piece of a stream as it comes: when each of its events (a block with a
    `data:` line; comments are none) was complete, in ms from the first piece's call."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.offsets: list[float] = []
        self._reader = sse_read.Reader()

    def __call__(self, chunk: bytes) -> None:
        now = (time.monotonic() - self.start) * 1000
        self.offsets.extend(now for _ in self._reader.feed(chunk))


def gate_drift(gates: list[int | None], offsets: list[float]) -> list[str]:
    """`event N: …` for each event whose gap from the one before it is far off its step's
    `ms` gate. `gates`: the streamed steps' `ms` (None: no gate), in order; `offsets`: the live
    events' arrivals. The last events line up with the last steps (the first event may show
    several steps at once, or none)."""
    count = min(len(gates), len(offsets)) - 1
    out = []
    for k in range(count, 0, -1):
        event = len(offsets) - k
        was = gates[len(gates) - k]
        took = offsets[event] - offsets[event - 1]
        if was is not None and far_off(was, took):
            out.append(
                f"event {event}: came {round(took)} ms after the one before it live, "
                f"`after: {{ms: {was}}}` in the cassette"
            )
    return out
