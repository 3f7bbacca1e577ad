"""The bench's measurements that need no load generator, as report rows beside their targets.

Each section is guarded on its own: a checkout caught mid-edit (or a measurement that breaks)
costs its rows an "n/a" with the reason, not the whole bench.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bench_inproc
import bench_large
import bench_lint
import bench_pacing
import bench_slow
import bench_targets as targets
import bench_yaml
from bench_report import Row

from mockagent.engine.store.eviction import TASK_CAP


def cost_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    cost = bench_inproc.cost_growth(targets.CACHE, (10, 1000, 10_000), 0.1 if quick else 0.4)
    for n, row in cost.items():
        log(f"  cost {n:>6}: " + ", ".join(f"{k} {v:,.1f} µs" for k, v in row.items()))
    growth = cost[10_000]["mean"] / cost[10]["mean"]
    rows = [
        Row(
            f"match cost, {n:,} interactions (start/middle/end)",
            " / ".join(f"{cost[n][p]:,.0f}" for p in ("start", "middle", "end")) + " µs per call",
            "",
            None,
        )
        for n in cost
    ]
    rows.append(
        Row(
            "match cost growth, 10,000 ÷ 10 interactions (mean of start/middle/end)",
            f"{growth:,.1f}×",
            "≤ 1.2×",
            growth <= 1.2,
        )
    )
    return rows


def startup_rows(cassette: Path, quick: bool, log: Callable[[str], None]) -> list[Row]:
    up = bench_inproc.startup(cassette, 5 if quick else 20)
    log(f"  start-up: {up}")
    return [
        Row(
            "fixture start to first answered call (median)",
            f"{up['start_ms']:.1f} ms",
            "≤ 20 ms",
            up["start_ms"] <= 20,
        ),
        Row("fixture stop (median)", f"{up['stop_ms']:.1f} ms", "≤ 20 ms", up["stop_ms"] <= 20),
    ]


def plugin_import_ms(runs: int) -> tuple[float, list[str]]:
    """The cost of importing the pytest plugin after pytest, as `-X importtime` reports it, in a
    fresh interpreter each run (median); and the heavy modules that import pulled in."""
    probe = (
        "import sys, pytest; import mockagent.testing.plugin; "
        "print(','.join(m for m in ('flask', 'pydantic', 'yaml', 'werkzeug', 'httpx') "
        "if m in sys.modules))"
    )
    times, heavy = [], ""
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", probe],
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(
            ln
            for ln in done.stderr.splitlines()
            if ln.rstrip().endswith("| mockagent.testing.plugin")
        )
        times.append(
            int(line.split("|")[1]) / 1000
        )  # cumulative µs, the plugin and what it imports
        heavy = done.stdout.strip()
    return statistics.median(times), [m for m in heavy.split(",") if m]


PLUGIN_WALL = (
    "import time, pytest; start = time.perf_counter(); import mockagent.testing.plugin; "
    "print((time.perf_counter() - start) * 1000)"
)
"""The entry point's import as pytest pays it: in an interpreter that has pytest already (pytest
imports itself, then its plugins), timed by the clock in the process, so the interpreter's own
start (some 20 ms) and pytest's import are left out, without -X importtime's overhead."""


def plugin_import_wall_ms(runs: int) -> float:
    """The pytest entry point's import, best of `runs` fresh interpreters (wall clock): the
    best is the import's cost with the least of the machine's other work in it."""
    return min(
        float(
            subprocess.run(
                [sys.executable, "-c", PLUGIN_WALL], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(runs)
    )


def import_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    ms, heavy = plugin_import_ms(5 if quick else 15)
    runs = 5 if quick else 20
    wall = plugin_import_wall_ms(runs)
    log(
        f"  plugin import: {ms:.1f} ms (wall, best of {runs}: {wall:.1f}), heavy: {heavy or 'none'}"
    )
    return [
        Row(
            "import of the pytest plugin, after pytest (median, fresh interpreter)",
            f"{ms:.1f} ms" + (f" (loads {', '.join(heavy)})" if heavy else ""),
            "≤ 15 ms, no Flask",
            ms <= 15 and not heavy,
        ),
        Row(
            f"import of the pytest entry point mockagent.testing.plugin, wall clock after "
            f"pytest (best of {runs} fresh interpreters)",
            f"{wall:.1f} ms",
            "≤ 15 ms",
            wall <= 15,
        ),
    ]


def exit_ms(command: list[str]) -> float:
    """From the "mockagent stopped" line to the process's exit, after one call and a SIGTERM."""
    proc = subprocess.Popen(
        [targets.MOCKAGENT, *command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    url = next(
        line.split(" on ")[1].split()[0]
        for line in proc.stdout
        if line.startswith("mockagent ready")
    )
    targets.post(
        url + ("/code-reviewer/" if command[0] == "serve" else "/"), targets.BODIES["direct"]
    )
    proc.send_signal(signal.SIGTERM)
    stopped = next((time.monotonic() for line in proc.stdout if "mockagent stopped" in line), None)
    proc.wait(10)
    if stopped is None:
        raise RuntimeError(f"{command[0]} did not say it stopped")
    return (time.monotonic() - stopped) * 1000


def exit_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    kit = str(targets.ROOT / "cassettes" / "kit")
    cassette = str(targets.CACHE / "exit-record.yaml")
    runs = 3 if quick else 7
    serve = statistics.median(exit_ms(["serve", kit]) for _ in range(runs))
    record = statistics.median(
        exit_ms(["record", "--upstream", "http://127.0.0.1:9", "--cassette", cassette])
        for _ in range(runs)
    )
    log(f"  exit after stop: serve {serve:.0f} ms, record {record:.0f} ms")
    return [
        Row(
            "serve: exit after it printed that it stopped (median)",
            f"{serve:.0f} ms",
            "≤ 300 ms",
            serve <= 300,
        ),
        Row(
            "record: exit after it printed that it stopped (median)",
            f"{record:.0f} ms",
            "≤ 300 ms",
            record <= 300,
        ),
    ]


def memory_rows(log: Callable[[str], None], notes: list[str]) -> list[Row]:
    """Load time and RSS, probed in a fresh interpreter so the bench's own imports do not count."""
    cassette = bench_inproc.generate_cassette(
        targets.CACHE / "mem-10000.yaml", 10_000, live_tasks=True
    )
    probes = []
    for _ in range(
        3
    ):  # three fresh processes: one load is at the mercy of the machine's other work
        probe = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("bench_inproc.py")),
                "memory",
                str(cassette),
                "10000",
            ],
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            raise RuntimeError((probe.stderr.strip().splitlines() or ["no output"])[-1])
        probes.append(json.loads(probe.stdout.splitlines()[-1]))
    mem = {**probes[-1], "load_s": statistics.median(p["load_s"] for p in probes)}
    notes += mem["notes"]
    log(f"  memory: {mem}")
    return [
        Row(
            "load 10,000-interaction cassette (load_cassette + Engine, median of 3)",
            f"{mem['load_s']:.2f} s",
            "< 1 s",
            mem["load_s"] < 1,
        ),
        Row(
            "RSS, 10,000 interactions + 10,000 live tasks",
            f"{mem['rss_tasks_mb']:.0f} MB "
            f"(after imports {mem['rss_imports_mb']:.0f}, loaded {mem['rss_loaded_mb']:.0f})",
            "< 200 MB",
            mem["rss_tasks_mb"] < 200,
        ),
    ]


GROWTH_CALLS = 200_000
GROWTH_CAP = 5_000
"""The --task-cap of the first memory growth row: low enough that the kept tasks are at their cap
by the first mark (20,000 calls), so the row measures what grows past the caps, if anything."""
PLATEAU_MARKS = (330_000, 600_000)
"""The second row keeps the default --task-cap (100,000): one call in three makes a task, so the
cap is reached at 300,000 calls; from there on RSS must stay flat."""


def _growth(cassette: Path, cap: int, marks: tuple[int, ...]) -> dict:
    """`bench_inproc.growth` in a fresh process: RSS (MB) after each of `marks` calls."""
    probe = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("bench_inproc.py")), "growth"]
        + [str(cassette), str(cap)]
        + [str(mark) for mark in marks],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise RuntimeError((probe.stderr.strip().splitlines() or ["no output"])[-1])
    return json.loads(probe.stdout.splitlines()[-1])


def _growth_row(found: dict, what: str, quick: bool) -> Row:
    (early, early_mb), (late, late_mb) = sorted((int(k), v) for k, v in found["rss_mb"].items())
    grew = late_mb - early_mb
    return Row(
        f"RSS growth, {early:,} → {late:,} calls (direct reply, blocking task, GetTask; "
        f"in-process WSGI, journal 10,000, {what})",
        f"+{grew:.1f} MB ({early_mb:.0f} → {late_mb:.0f} MB; {found['tasks_kept']:,} tasks "
        f"kept, {found['journal_dropped']:,} calls dropped from the journal)",
        "≤ 20 MB",
        None if quick else grew <= 20,  # --quick runs a tenth of the calls: not the target
    )


def growth_rows(cassette: Path, quick: bool, log: Callable[[str], None]) -> list[Row]:
    """RSS after 200,000 calls against RSS after 20,000 with a low task cap; and, at the default
    caps, RSS once the task cap is reached against RSS 270,000 calls later (not with --quick)."""
    calls = GROWTH_CALLS // 10 if quick else GROWTH_CALLS
    found = _growth(cassette, GROWTH_CAP, (calls // 10, calls))
    log(f"  memory growth: {found}")
    out = [_growth_row(found, f"--task-cap {GROWTH_CAP:,}", quick)]
    if not quick:
        found = _growth(cassette, TASK_CAP, PLATEAU_MARKS)
        log(f"  memory growth at the default caps: {found}")
        out.append(_growth_row(found, f"default --task-cap {TASK_CAP:,}", quick))
    return out


def pacing_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    cassette = bench_pacing.generate_cassette(targets.CACHE / "pacing.yaml")
    port = targets.free_port()
    server = targets.Target(
        "pacing",
        "mockagent serve (recorded pace)",
        [targets.MOCKAGENT, "serve", str(cassette), "--port", str(port), "--pace", "recorded"],
        port,
    )
    try:
        server.start()
        pacing = bench_pacing.measure(port, 3 if quick else 10)
    finally:
        server.stop()
    log(f"  pacing: {pacing}")
    return [
        Row(
            "pacing, 50 ms gaps: p99 gap error at the client",
            f"{pacing['p99_error_ms']:.2f} ms "
            f"(max {pacing['max_error_ms']:.2f}, {pacing['gaps']} gaps)",
            "≤ 2.5 ms",
            pacing["p99_error_ms"] <= 2.5,
        ),
        Row(
            "pacing, 50 ms gaps: mean gap",
            f"{pacing['mean_gap_ms']:.2f} ms",
            "50 ± 0.2 ms",
            abs(pacing["mean_gap_ms"] - 50) <= 0.2,
        ),
    ]


def rows(cassette: Path, quick: bool, log: Callable[[str], None]) -> tuple[list[Row], list[str]]:
    """Cost growth, start-up, load time and memory, pacing; with the notes they produced."""
    notes: list[str] = []
    sections: list[tuple[str, Callable[[], list[Row]]]] = [
        ("matching cost growth", lambda: cost_rows(quick, log)),
        ("plugin import", lambda: import_rows(quick, log)),
        ("fixture start-up", lambda: startup_rows(cassette, quick, log)),
        ("exit after stop", lambda: exit_rows(quick, log)),
        ("load time and memory", lambda: memory_rows(log, notes)),
        ("YAML fast constructor", lambda: bench_yaml.rows(quick, log)),
        ("memory growth", lambda: growth_rows(cassette, quick, log)),
        ("memory under large calls", lambda: bench_large.rows(quick, log)),
        ("pacing", lambda: pacing_rows(quick, log)),
        ("slow clients", lambda: bench_slow.rows(quick, log)),
        (
            "lint and load at the cap",
            lambda: bench_lint.rows(targets.CACHE, targets.MOCKAGENT, quick, log),
        ),
    ]
    out: list[Row] = []
    for title, section in sections:
        try:
            out += section()
        except Exception as exc:  # noqa: BLE001 - any failure becomes an n/a row with its reason
            log(f"  {title}: failed: {exc!r}")
            out.append(
                Row(
                    title,
                    f"n/a (failed: {type(exc).__name__}: {str(exc)[:160]})",
                    "see above",
                    None,
                )
            )
    return out, sorted(set(bench_inproc.NOTES) | set(notes))
