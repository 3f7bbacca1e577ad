"""The injected clock (virtual timestamps, monotonic elapsed time) and the seeded id factory."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta, timezone

from freezegun import freeze_time

from mockagent.engine.clock import Clock, format_timestamp
from mockagent.engine.ids import IdFactory

START = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)
TCK_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def test_format_timestamp_is_utc_with_milliseconds_and_z() -> None:
    assert format_timestamp(START) == "2026-10-06T09:00:00.000Z"
    assert format_timestamp(START + timedelta(microseconds=250_999)) == "2026-10-06T09:00:00.250Z"
    plus_two = timezone(timedelta(hours=2))
    assert (
        format_timestamp(datetime(2026, 10, 6, 11, 0, 1, 5000, tzinfo=plus_two))
        == "2026-10-06T09:00:01.005Z"
    )
    assert TCK_TIMESTAMP.match(format_timestamp(START))


def test_stamp_moves_the_clock_by_one_tick() -> None:
    clock = Clock(START, tick_ms=250)
    assert [clock.stamp() for _ in range(5)] == [
        "2026-10-06T09:00:00.000Z",
        "2026-10-06T09:00:00.250Z",
        "2026-10-06T09:00:00.500Z",
        "2026-10-06T09:00:00.750Z",
        "2026-10-06T09:00:01.000Z",
    ]
    assert clock.now() == START + timedelta(milliseconds=1250)


def test_now_does_not_move_the_clock() -> None:
    clock = Clock(START, tick_ms=100)
    assert clock.now() == clock.now() == START


def test_a_naive_start_is_utc() -> None:
    assert Clock(datetime(2026, 10, 6, 9, 0), tick_ms=0).stamp() == "2026-10-06T09:00:00.000Z"


def test_an_unset_start_is_now_under_freezegun() -> None:
    with freeze_time("2031-02-03 04:05:06.789"):
        clock = Clock(None, tick_ms=250)
    assert clock.stamp() == "2031-02-03T04:05:06.789Z"
    assert clock.stamp() == "2031-02-03T04:05:07.039Z"


def test_move_changes_timestamps_only() -> None:
    with freeze_time("2030-01-01"):
        clock = Clock(START, tick_ms=250)
        clock.move(1500)
        assert clock.elapsed_ms() == 0
        assert clock.stamp() == "2026-10-06T09:00:01.500Z"


def test_advance_changes_elapsed_time_but_not_timestamps() -> None:
    with freeze_time("2030-01-01"):
        clock = Clock(START, tick_ms=250)
        clock.advance(1500)
        assert clock.elapsed_ms() == 1500
        assert clock.stamp() == "2026-10-06T09:00:00.000Z"  # steps stamp their own scripted gaps


def test_elapsed_time_follows_the_monotonic_clock() -> None:
    with freeze_time("2030-01-01") as frozen:
        clock = Clock(START, tick_ms=250)
        assert clock.elapsed_ms() == 0
        frozen.tick(timedelta(milliseconds=750))
        assert clock.elapsed_ms() == 750
        clock.advance(250)
        assert clock.elapsed_ms() == 1000
        assert clock.now() == START  # waiting moves no timestamp


def test_ids_are_deterministic_per_seed() -> None:
    first, again = IdFactory("code-reviewer"), IdFactory("code-reviewer")
    ids = [first.new() for _ in range(5)]
    assert ids == [again.new() for _ in range(5)]
    assert len(set(ids)) == 5
    assert all(uuid.UUID(i).version == 5 for i in ids)


def test_ids_differ_between_seeds() -> None:
    a, b = IdFactory("alpha"), IdFactory("beta")
    assert {a.new() for _ in range(3)}.isdisjoint({b.new() for _ in range(3)})


def test_ids_are_uuid5_of_the_seed_namespace_and_counter() -> None:
    namespace = uuid.uuid5(uuid.NAMESPACE_URL, "mockagent:seed")
    factory = IdFactory("seed")
    assert [factory.new(), factory.new()] == [
        str(uuid.uuid5(namespace, "1")),
        str(uuid.uuid5(namespace, "2")),
    ]
