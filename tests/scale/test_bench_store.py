"""scripts/bench's shared-store part (scripts/bench_store.py): what it counts per call on a real
redis-server, its rows and its README section."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    return importlib.import_module("bench_store")


def test_a_call_is_counted_in_round_trips_commands_and_cpu(bench, redis_url):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        # one round trip of three commands, one of them a script running two more
        script = client.script_load(
            "redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])"
        )

        def call() -> None:
            client.pipeline(transaction=False).set("a", 1).evalsha(script, 1, "b").execute()

        cost = bench._measure(client, call, 200)
    finally:
        client.close()
    assert cost.round_trips == pytest.approx(1, abs=0.02)
    assert cost.commands == pytest.approx(4, abs=0.02)  # SET, EVALSHA, INCR, GET; not INFO
    assert set(cost.by_command) == {"set", "evalsha", "incr", "get"}
    assert cost.cpu_us > 0


def test_the_targets_compare_two_workers_on_redis_with_one_process_in_memory(bench):
    from bench_wrk import Result

    best = {
        ("mockagent", "direct", 16): Result(5000, 1, 2, 15000, 0, 0),
        ("mockagent-w2", "direct", 16): Result(4000, 1, 2, 12000, 0, 0),
    }
    rows = {row.name: row for row in bench.ratio_rows(best)}
    row = rows["SendMessage, direct reply: --workers 2 on Redis ÷ one in-memory process (16 conns)"]
    assert (row.value, row.target, row.ok) == ("0.80× (4,000 vs 5,000 req/s)", "≥ 1×", False)
    assert len(rows) == 4 and rows[
        "GetTask: --workers 2 on Redis ÷ one in-memory process (16 conns)"
    ].value.startswith("n/a")


def test_its_section_goes_before_the_throughput_once(bench):
    readme = "# bench\n\n## Targets\n\n| a |\n\n## Throughput\n\nrows\n"
    once = bench.place(readme, "today")
    assert bench.place(once, "later") == bench.place(readme, "later")
    assert once.index("## Shared store (issue 28)") < once.index("## Throughput")
    assert "Last run alone: today." in once
