"""What `lint` accepts, `serve` plays: times and counts past what the clock and the timers hold are
load errors naming the field and the bound; the clock itself never overflows."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from mockagent.cassette import load_cassette
from mockagent.engine.clock import Clock, format_timestamp
from mockagent.engine.player import Pace
from mockagent.errors import CassetteError
from mockagent.lint.run import lint_file
from tests.helpers.cassette_text import HEADER, cassette, line_of

HUGE = 10**18

GATED = """
- name: run
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
        - state: TASK_STATE_COMPLETED
          after: {{ms: {ms}, polls: {polls}}}
  times: {times}
  fault: {{delayMs: {delay}, dropAfter: {drop}}}
"""


def _gated(ms: int = 1, polls: int = 1, times: int = 1, delay: int = 1, drop: int = 1) -> str:
    return GATED.format(ms=ms, polls=polls, times=times, delay=delay, drop=drop)


def _header(start: str = "2026-10-06T09:00:00Z", tick: int = 250, pace: str = "recorded") -> str:
    return (
        HEADER.replace("2026-10-06T09:00:00Z", start)
        .replace("tick: {ms: 250}", f"tick: {{ms: {tick}}}")
        .replace("clock:\n", f"clock:\n  pace: {pace}\n")
    )


def _problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "bounds.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    assert [f.message for f in lint_file(path)] == [p.message for p in info.value.problems]
    return str(info.value).splitlines()


DAY = "must be at most 86400000 (a day in milliseconds, the longest wait the clock and timers take)"
BILLION = "must be at most 1000000000 (a billion, more than any test makes)"


@pytest.mark.parametrize(
    ("text", "needle", "field", "says"),
    [
        (cassette(_gated(ms=HUGE)), "after:", "reply.task.steps[1].after.ms", DAY),
        (cassette(_gated(delay=HUGE)), "fault:", "fault.delayMs", DAY),
        (cassette("", _header(tick=HUGE)), "tick:", "clock.tick.ms", DAY),
        (cassette(_gated(polls=HUGE)), "after:", "reply.task.steps[1].after.polls", BILLION),
        (cassette(_gated(times=HUGE)), "times:", "times", BILLION),
        (cassette(_gated(drop=HUGE)), "fault:", "fault.dropAfter", BILLION),
        (
            cassette("", _header(start="9999-12-31T23:59:59Z")),
            "start:",
            "clock.start",
            "the year must be from 1000 to 8999, which leaves the clock a thousand years to "
            "move on",
        ),
        (
            cassette("", _header(pace="scale=99999")),
            "pace:",
            "clock.pace",
            "a pace is recorded, instant or scale=F (F from 0 to 1000, as 0.5)",
        ),
    ],
)
def test_a_value_the_clock_or_timers_cannot_hold_is_a_load_error(
    tmp_path: Path, text: str, needle: str, field: str, says: str
) -> None:
    [problem] = _problems(tmp_path, text)
    prefix = "" if field.startswith("clock") else "interaction 'run' (#1): "
    assert problem == f"{tmp_path / 'bounds.yaml'}:{line_of(text, needle)}: {prefix}{field}: {says}"


def test_every_value_at_its_bound_loads(tmp_path: Path) -> None:
    day, billion = 86_400_000, 1_000_000_000
    text = cassette(
        _gated(ms=day, polls=billion, times=billion, delay=day, drop=billion),
        _header(start="8999-12-31T23:59:59.999-23:59", tick=day, pace="scale=1000"),
    )
    path = tmp_path / "edge.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_cassette(path).cassette.clock.tick.ms == day


def test_the_clock_stops_at_the_last_moment_a_timestamp_holds() -> None:
    for zone in (UTC, timezone(timedelta(hours=23, minutes=59)), timezone(-timedelta(hours=23))):
        clock = Clock(datetime(8999, 12, 31, 23, 59, 59, tzinfo=zone), tick_ms=86_400_000)
        for _ in range(400_000):  # a day a stamp: past the year 9999
            clock.stamp()
        clock.move(86_400_000)
        clock.restore(1e18, 0.0, 0.0)  # a shared store's state too
        assert clock.stamp() <= "9999-12-31T23:59:59.999Z"
        assert format_timestamp(clock.now()) <= "9999-12-31T23:59:59.999Z"
    assert Clock(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)).stamp() == (
        "9999-12-31T23:59:59.000Z"
    )


def test_a_clock_waits_no_longer_than_a_timer_can() -> None:
    waited = []

    class Condition:
        def wait(self, timeout: float | None) -> None:
            waited.append(timeout)

    clock = Clock(tick_ms=1)
    clock.wait(Condition(), 1e18)  # type: ignore[arg-type]  # a paced gap a day times a thousand
    clock.wait(Condition(), None)  # type: ignore[arg-type]
    assert waited[0] is not None and 60 < waited[0] <= threading.TIMEOUT_MAX  # looks again
    assert waited[1] is None


@pytest.mark.parametrize("text", ["scale=1001", "scale=inf", "scale=1e12", "scale=nan"])
def test_a_pace_no_timer_can_wait_for_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="scale=F with F from 0 to 1000"):
        Pace.parse(text)
    assert Pace.parse("scale=1000").factor == 1000
