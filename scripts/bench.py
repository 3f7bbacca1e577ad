"""mockagent's benchmark (not a test): replay throughput against other servers, matching cost by
cassette size, fixture start/stop, cassette load time, memory and stream pacing, the same four
calls over gRPC (scripts/bench_grpc.py), what a shared Redis store costs per call
(scripts/bench_store.py), and the same app on each candidate production server
(scripts/bench_servers.py).

Run through `scripts/bench` (it prepares .venv, wrk and the npm packages). Writes bench/README.md,
bench/chart.png and bench/servers.png, and prints every measurement beside its target as it goes.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time

import bench_choice
import bench_grpc
import bench_grpc_section
import bench_local
import bench_report
import bench_servers
import bench_slow
import bench_store
import bench_targets as targets
import bench_wrk
from bench_report import Row

OUT = targets.ROOT / "bench"
CASSETTE = OUT / "cassettes" / "bench.yaml"


def log(text: str) -> None:
    print(text, flush=True)


def start_all(labels: dict[str, str], notes: list[str]) -> dict[str, targets.Target]:
    """Start every target, mockagent first: its answers become the canned bytes of Flask and
    mountebank."""
    running: dict[str, targets.Target] = {}
    single = running["mockagent"] = targets.mockagent(CASSETTE).start()
    task_text = bench_wrk.check("task", single.url, targets.BODIES["task"])
    task_id = json.loads(task_text)["result"]["task"]["id"]
    stream = bench_wrk.check("stream", single.url, targets.BODIES["stream"])
    canned = {
        "direct": bench_wrk.check("direct", single.url, targets.BODIES["direct"]),
        "task": task_text,
        "get": bench_wrk.check("get", single.url, targets.get_task_body(task_id), task_id),
        "stream": [ln[len("data: ") :] for ln in stream.splitlines() if ln.startswith("data: ")],
    }
    canned_path = targets.CACHE / "canned.json"
    canned_path.write_text(json.dumps(canned))
    options = targets.serve_options()
    makers = {
        "flask": lambda: targets.flask(canned_path, targets.serve_threads()),
        "a2a-sdk": targets.a2a_sdk,
        "mountebank": lambda: targets.mountebank(canned),
        "aimock": targets.aimock,
    }
    if {"--workers", "--store"} <= options:
        makers = {"mockagent-w2": lambda: targets.mockagent(CASSETTE, workers=2), **makers}
    else:
        labels["mockagent-w2"] = ""
        notes.append(
            "`mockagent serve --workers` is not available in this checkout: its rows are n/a."
        )
    for name, make in makers.items():
        target = None
        try:
            target = make()
            running[name] = target.start()
        except (RuntimeError, OSError) as exc:
            if target is not None:
                target.stop()
            notes.append(f"{labels[name]} did not start: {exc}")
    return running


TARGETS = {"p50": 0.5, "a2a-sdk": 4, "w2 ÷ a2a-sdk": 4}
"""Issue 18's: one process ≥ 4× the a2a-sdk server on every call with a c=1 p50 ≤ 0.5 ms, and
`--workers 2` on a shared store ≥ 4× it. The other ratios are shown for information."""


def http_rows(best: dict, workers: bool) -> list[Row]:
    rows = []
    missing = "n/a (not measured)" if workers else "n/a (not available)"
    for s, title in bench_report.SCENARIOS.items():
        get = lambda n, c=16, s=s: best.get((n, s, c))  # noqa: E731
        one = get("mockagent", 1)
        p50 = TARGETS["p50"]
        rows.append(
            Row(
                f"{title}: mockagent p50 at 1 conn",
                f"{one.p50_ms:.3f} ms" if one else "n/a",
                f"≤ {p50:g} ms",
                (one.p50_ms <= p50 and not one.errors) if one else None,
            )
        )
        for other, label, minimum in (
            ("a2a-sdk", "a2a-sdk", TARGETS["a2a-sdk"]),
            ("flask", "bare Flask", None),
        ):
            rows.append(
                bench_report.ratio_row(
                    f"{title}: mockagent ÷ {label} (16 conns)",
                    get("mockagent"),
                    get(other),
                    minimum,
                )
            )
        for other, minimum in (
            ("a2a-sdk", TARGETS["w2 ÷ a2a-sdk"]),
            ("mountebank", None),
            ("aimock", None),
        ):
            rows.append(
                bench_report.ratio_row(
                    f"{title}: --workers 2 ÷ {other} (16 conns)",
                    get("mockagent-w2"),
                    get(other),
                    minimum,
                    missing,
                )
            )
    return rows + bench_store.ratio_rows(best)


def servers(args: argparse.Namespace) -> str:
    """The server comparison (scripts/bench_servers.py): writes bench/servers.png and returns
    its README section."""
    seconds = args.server_seconds or (1 if args.quick else 2)
    rounds = args.server_rounds or (1 if args.quick else 2)
    started, load_before = time.monotonic(), bench_report.loadavg()
    notes: list[str] = []
    best, checks = bench_servers.measure(CASSETTE, rounds, seconds, log, notes)
    labels = bench_servers.labels()
    title = "The same mockagent app on each server (wrk, same machine)"
    bench_report.chart(OUT / "servers.png", labels, best, title)
    settings = (
        f"wrk -t1, {rounds} round(s) × {seconds:g} s per cell, 1 and 16 connections; "
        f"run {time.strftime('%Y-%m-%d %H:%M %Z')} in {time.monotonic() - started:.0f} s, "
        f"load average {load_before} before, {bench_report.loadavg()} after"
    )
    try:  # the 1-minute load averages, before and after ("?" where /proc has none)
        busy = max(float(load.split()[0]) for load in (load_before, bench_report.loadavg()))
    except ValueError:
        busy = 0.0
    if busy > (os.cpu_count() or 1):
        notes.append(
            f"The machine was busy (1-minute load average up to {busy:g} on {os.cpu_count()} "
            "CPUs): other work took CPU from every server alike, so close ratios (under about "
            "1.5×) may be noise; rerun on an idle machine before reading much into them."
        )
    section = bench_choice.section(labels, best, checks, settings, notes)
    for line in bench_choice.verdict(labels, best, checks):
        log(f"servers: {line}")
    return section.replace(f"{targets.ROOT}/", "")


def grpc(seconds: float, count: int, workers: bool) -> tuple[list[Row], str]:
    """The gRPC part (scripts/bench_grpc.py): its Targets rows and its README section."""
    started, load_before = time.monotonic(), bench_report.loadavg()
    best, notes = bench_grpc_section.measure(CASSETTE, workers, count, seconds, log)
    why = bench_grpc.available()
    found = bench_grpc_section.rows(best, workers, why)
    settings = (
        f"{bench_grpc_section.settings_line(count, seconds, started)}, load average "
        f"{load_before} before, {bench_report.loadavg()} after"
        if why is None
        else "not run"
    )
    for row in found:
        log(f"| {row.name} | {row.value} | {row.target} | {row.verdict} |")
    section = bench_grpc_section.section(best, found, settings, notes)
    return found, section.replace(f"{targets.ROOT}/", "")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM ends the bench as Ctrl-C does: the finally stops every server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="1 round of 1 s per cell, fewer repeats"
    )
    parser.add_argument(
        "--seconds", type=int, help="seconds per wrk or h2load cell (default 3; quick 1)"
    )
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3; quick 1)")
    parser.add_argument(
        "--http-only",
        action="store_true",
        help="only the load runs (HTTP and gRPC targets, servers)",
    )
    parser.add_argument(
        "--server-seconds",
        type=int,
        help="seconds per wrk cell, server comparison (default 2; quick 1)",
    )
    parser.add_argument("--server-rounds", type=int, help="its rounds (default 2; quick 1)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--servers-only",
        action="store_true",
        help="only the server comparison: replaces its section of bench/README.md",
    )
    which.add_argument(
        "--grpc-only",
        action="store_true",
        help="only the gRPC part: replaces its section and rows in bench/README.md",
    )
    which.add_argument(
        "--store-only",
        action="store_true",
        help="only the shared store's rows (issue 28): replaces them in bench/README.md",
    )
    which.add_argument(
        "--no-servers",
        action="store_true",
        help="leave the server comparison out (bench/README.md keeps the last one)",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    targets.CACHE.mkdir(exist_ok=True)
    OUT.mkdir(exist_ok=True)
    readme = OUT / "README.md"
    old = readme.read_text() if readme.exists() else ""
    if args.servers_only:
        readme.write_text(bench_choice.splice(old, servers(args)))
        log("wrote the server comparison in bench/README.md and bench/servers.png")
        return
    seconds, rounds = (
        args.seconds or (1 if args.quick else 3),
        args.rounds or (1 if args.quick else 3),
    )
    if args.grpc_only:
        workers = {"--workers", "--store"} <= targets.serve_options()
        found, part = grpc(seconds, rounds, workers)
        text = bench_grpc_section.place(old, part)
        readme.write_text(bench_grpc_section.replace_rows(text, found))
        log("wrote the gRPC section and rows in bench/README.md")
        return
    if args.store_only:
        found, run, notes = bench_store.measure(CASSETTE, rounds, seconds, log)
        readme.write_text(bench_store.place(bench_grpc_section.replace_rows(old, found), run))
        for row in found:
            log(f"| {row.name} | {row.value} | {row.target} | {row.verdict} |")
        for note in notes:
            log(f"note: {note}")
        log("wrote the shared store's rows in bench/README.md")
        return
    started = time.monotonic()
    load_before = (
        bench_report.loadavg()
    )  # other work on the machine skews every number: say how much
    labels = {
        "mockagent": "mockagent serve",
        "mockagent-w2": "mockagent --workers 2",
        "flask": "bare Flask",
        "a2a-sdk": "a2a-sdk server",
        "mountebank": "mountebank",
        "aimock": "aimock A2AMock",
    }
    notes: list[str] = []
    rows: list[Row] = []
    if not args.http_only:
        log("in-process: cost growth, start-up, load, memory, pacing")
        rows, inproc_notes = bench_local.rows(CASSETTE, args.quick, log)
        notes += inproc_notes
    running: dict[str, targets.Target] = {}
    loaded: dict[str, bench_store.Cost] = {}
    try:
        log("HTTP: starting targets")
        running = start_all(labels, notes)
        scripts = bench_wrk.prepare(running, notes)
        log(f"HTTP: {rounds} round(s) of {seconds:g} s per cell")
        best = bench_wrk.rounds(running, scripts, rounds, seconds, log)
        if "mockagent-w2" in running:
            loaded = bench_store.loaded_costs(running["mockagent-w2"], scripts, seconds, log)
    finally:
        for target in running.values():
            target.stop()
    grpc_rows, grpc_section = grpc(seconds, rounds, bool(labels["mockagent-w2"]))
    section = bench_choice.previous(old) if args.no_servers else servers(args)
    store_rows = []
    if labels["mockagent-w2"]:
        log("store: Redis cost per call, one worker")
        store_rows = bench_store.cost_rows(bench_store.costs(CASSETTE, log), loaded)
    rows = http_rows(best, bool(labels["mockagent-w2"])) + store_rows + grpc_rows + rows
    for name, label in labels.items():
        if not label:
            continue
        errors = sum(r.errors for k, r in best.items() if k[0] == name)
        if errors:
            notes.append(
                f"{label}: {errors} non-2xx or socket errors in its best runs "
                "(those ratios are n/a)."
            )
    elapsed = time.monotonic() - started
    settings = (
        f"wrk -t1, {rounds} round(s) × {seconds:g} s per cell, 1 and 16 connections; "
        f"bench took {elapsed:.0f} s"
    )
    facts = bench_report.machine_facts() | {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "load average (1/5/15 min)": f"{load_before} before, {bench_report.loadavg()} after",
    }
    text = bench_report.markdown(facts, settings, labels, best, rows, notes)
    # No paths of this machine in a committed file: error texts name files relative to the
    # repository.
    text = text.replace(f"{targets.ROOT}/", "")
    text = bench_choice.splice(text, section) if section else text
    text = bench_grpc_section.place(text, grpc_section)
    text = bench_slow.place(text)
    text = bench_store.place(text)
    history = bench_choice.previous(old, bench_choice.HISTORY)
    readme.write_text(bench_choice.splice(text, history, bench_choice.HISTORY) if history else text)
    bench_report.chart(OUT / "chart.png", {k: v for k, v in labels.items() if v}, best)
    log("\n| measurement | value | target | result |")
    for r in rows:
        log(f"| {r.name} | {r.value} | {r.target} | {r.verdict} |")
    for note in notes:
        log(f"note: {note}")
    log(f"wrote bench/README.md and bench/chart.png in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
