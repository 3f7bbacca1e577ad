"""The injected clock: virtual timestamps for responses, a monotonic reading for `after: {ms}`."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

_ZERO = timedelta(0)
_LAST = datetime.max  # where timestamps stop: a clock never goes past 9999-12-31T23:59:59.999Z
_ALL_MS = (datetime.max - datetime.min) / timedelta(milliseconds=1)
LONGEST_WAIT_S = 86_400.0
"""The longest a clock waits at once: a waiter whose deadline is further looks again then (a
timer takes no more than threading.TIMEOUT_MAX, and a paced gap may be longer)."""


def format_timestamp(moment: datetime) -> str:
    """RFC 3339 UTC with milliseconds and `Z` (`isoformat()`'s `+00:00` fails strict clients)."""
    if moment.utcoffset() != _ZERO:
        moment = moment.astimezone(UTC)
    # isoformat keeps the year's four digits and cuts microseconds to milliseconds, like the
    # strftime it replaces, at a fraction of its cost (every event of every task is stamped).
    return moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def _span(ms: float) -> timedelta:
    """`ms` as a timedelta, no longer than all a datetime holds (a longer one would overflow)."""
    return timedelta(milliseconds=min(ms, _ALL_MS))


class Clock:
    """Virtual time that starts at the cassette's `clock.start` and moves `tick` per stamp.

    Responses never read the wall clock, so the same calls give the same timestamps. When the
    cassette sets no start, the clock starts at `datetime.now()`, which freezegun controls in tests.
    `elapsed_ms()` drives `after: {ms}` steps while polling: it reads `time.monotonic()` (also
    freezegun-controlled) plus whatever `advance()` added. Timestamps move only by ticks and by
    the scripted gaps of the steps (`move()`), never by waiting, so they never count a gap twice.
    They stop at the last moment a datetime holds (a cassette's start leaves a thousand years
    before it): a clock that ran that far on answers with that moment, never an error.
    """

    def __init__(self, start: datetime | None = None, tick_ms: int = 250) -> None:
        if start is None:
            start = datetime.now(UTC)
        elif start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        self._start = start
        self._start_utc = start.astimezone(UTC).replace(tzinfo=None)  # what stamps count from
        # How far the clock may move: in UTC, and on the start's own wall clock (`now()`).
        self._room = _LAST - max(self._start_utc, start.replace(tzinfo=None))
        self._tick = timedelta(milliseconds=tick_ms)
        self._offset = timedelta(0)
        self._advanced_ms = 0.0
        self._origin = time.monotonic()

    @property
    def start(self) -> datetime:
        """Where virtual time began: the cassette's `clock.start`, or when the clock was made."""
        return self._start

    def now(self) -> datetime:
        """The current virtual time."""
        return self._start + self._offset

    def stamp(self) -> str:
        """A timestamp for one event; the clock then moves on by one tick."""
        # format_timestamp's work, with the zone settled once: every event of every task is stamped.
        text = (self._start_utc + self._offset).isoformat(timespec="milliseconds") + "Z"
        self._offset += self._tick
        if self._offset > self._room:
            self._offset = self._room
        return text

    def move(self, ms: float) -> None:
        """Move virtual time only: a scripted gap shows in timestamps, not in real waiting."""
        self._offset = min(self._offset + _span(ms), self._room)

    def advance(self, ms: float) -> None:
        """Let `ms` pass for `after: {ms}` steps without waiting; the steps stamp their own gaps."""
        self._advanced_ms += ms

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait on `condition` (held) for up to `timeout` seconds; a test clock may skip the
        wait."""
        condition.wait(None if timeout is None else min(timeout, LONGEST_WAIT_S))

    def state(self) -> tuple[float, float, float]:
        """(virtual offset ms, advanced ms, wall time of the origin): what a shared store keeps.
        The origin travels as wall time because monotonic readings mean nothing in another
        process."""
        origin_wall = time.time() - (time.monotonic() - self._origin)
        return self._offset / timedelta(milliseconds=1), self._advanced_ms, origin_wall

    def restore(self, offset_ms: float, advanced_ms: float, origin_wall: float) -> None:
        """Take over a state that `state()` gave, maybe in another process."""
        self._offset = min(_span(offset_ms), self._room)
        self._advanced_ms = advanced_ms
        self._origin = time.monotonic() - (time.time() - origin_wall)

    def elapsed_ms(self) -> float:
        """Milliseconds since the clock was made, for `after: {ms}` while a client polls."""
        return (time.monotonic() - self._origin) * 1000 + self._advanced_ms
