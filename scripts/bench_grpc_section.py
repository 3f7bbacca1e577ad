"""The gRPC part of bench/README.md: its targets, its rows in the Targets table and its own
section between markers, so that `scripts/bench --grpc-only` can replace just that part."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import bench_grpc
import bench_targets as targets
from bench_choice import BEGIN as SERVERS_BEGIN
from bench_choice import splice
from bench_grpc import GrpcTarget
from bench_report import SCENARIOS, Row, cell, ratio_row
from bench_wrk import CONNS, Result

BEGIN, END = "<!-- grpc: begin -->", "<!-- grpc: end -->"
LABELS = {
    "grpc-mockagent": "mockagent serve",
    "grpc-mockagent-w2": "mockagent --workers 2",
    "grpc-a2a-sdk": "a2a-sdk gRPC server",
    "grpc-floor": "grpc.aio, canned answers",
}
TITLES = {s: t.replace(" (SSE)", "") for s, t in SCENARIOS.items()}
TARGET = 4
"""Issue 18's per-call target (≥ 4× the a2a-sdk server, one process and `--workers 2`), applied
by issue 20 to the a2a-sdk server's own gRPC transport."""


def mockagent(cassette: Path, workers: int = 0) -> GrpcTarget:
    """`mockagent serve --grpc-port` (the HTTP bench's command line plus a gRPC port)."""
    base = targets.mockagent(cassette, workers)
    port = targets.free_port()
    return GrpcTarget(
        f"grpc-{base.name}",
        f"{base.label} --grpc-port",
        [*base.command, "--grpc-port", str(port)],
        base.port,
        helpers=base.helpers,
        grpc_port=port,
    )


def a2a_sdk() -> GrpcTarget:
    """scripts/bench_a2a_grpc_stub.py: the a2a-sdk's own gRPC serving path."""
    return _script("grpc-a2a-sdk", "a2a-sdk gRPC server", "bench_a2a_grpc_stub.py")


def floor() -> GrpcTarget:
    """scripts/bench_grpc_floor.py: what grpcio's Python server costs per call, no more."""
    return _script("grpc-floor", "grpc.aio, canned answers", "bench_grpc_floor.py")


def _script(name: str, label: str, script: str) -> GrpcTarget:
    """A server script of scripts/ run as `python SCRIPT PORT`, serving gRPC on PORT."""
    port = targets.free_port()
    command = [targets.PY, str(targets.ROOT / "scripts" / script), str(port)]
    return GrpcTarget(name, label, command, port, grpc_port=port)


def measure(
    cassette: Path, workers: bool, count: int, seconds: float, log: Callable[[str], None]
) -> tuple[dict[tuple[str, str, int], Result], list[str]]:
    """Start the targets, check and time them; (best results, notes). Every server is stopped
    before it returns."""
    notes: list[str] = []
    why = bench_grpc.available()
    if why:
        return {}, [f"gRPC rows are n/a: {why}."]
    makers: dict[str, Callable[[], GrpcTarget]] = {"grpc-mockagent": lambda: mockagent(cassette)}
    if workers:
        makers["grpc-mockagent-w2"] = lambda: mockagent(cassette, workers=2)
    makers["grpc-a2a-sdk"] = a2a_sdk
    makers["grpc-floor"] = floor
    running: dict[str, GrpcTarget] = {}
    try:
        log("gRPC: starting targets")
        for name, make in makers.items():
            target = None
            try:
                target = make()
                running[name] = target.start()  # type: ignore[assignment]
            except (RuntimeError, OSError) as exc:
                if target is not None:
                    target.stop()
                notes.append(f"{LABELS[name]} (gRPC) did not start: {exc}")
        cells = bench_grpc.prepare(running, notes)
        log(f"gRPC: {count} round(s) of {seconds:g} s per cell")
        best = bench_grpc.rounds(running, cells, count, seconds, log)
    finally:
        for target in running.values():
            target.stop()
    for name, label in LABELS.items():
        errors = sum(r.errors for k, r in best.items() if k[0] == name)
        if errors:
            notes.append(
                f"{label} over gRPC: {errors} failed calls in its best runs (non-OK grpc-status "
                "counted from missing response bytes, or HTTP/2 errors); those ratios are n/a."
            )
    return best, notes


def rows(best: dict, workers: bool, why: str | None = None) -> list[Row]:
    """Per call: mockagent ÷ the a2a-sdk gRPC server at 16 connections, one process and
    `--workers 2`, each against TARGET; and, for information, `--workers 2` ÷ one process and
    one process ÷ the floor."""
    missing = f"n/a ({why})" if why else "n/a (not measured)"
    found = []
    for s, title in TITLES.items():
        sdk = best.get(("grpc-a2a-sdk", s, 16))
        found.append(
            ratio_row(
                f"{title} over gRPC: mockagent ÷ a2a-sdk gRPC (16 conns)",
                best.get(("grpc-mockagent", s, 16)),
                sdk,
                TARGET,
                missing,
            )
        )
        found.append(
            ratio_row(
                f"{title} over gRPC: --workers 2 ÷ a2a-sdk gRPC (16 conns)",
                best.get(("grpc-mockagent-w2", s, 16)),
                sdk,
                TARGET,
                missing if workers else "n/a (not available)",
            )
        )
        found.append(
            ratio_row(
                f"{title} over gRPC: --workers 2 on Redis ÷ one in-memory process (16 conns)",
                best.get(("grpc-mockagent-w2", s, 16)),
                best.get(("grpc-mockagent", s, 16)),
                None,  # issue 28's targets are the HTTP rows'; over gRPC, for information
                missing if workers else "n/a (not available)",
            )
        )
        found.append(
            ratio_row(
                f"{title} over gRPC: mockagent ÷ grpc.aio canned answers (16 conns)",
                best.get(("grpc-mockagent", s, 16)),
                best.get(("grpc-floor", s, 16)),
                None,
                missing,
            )
        )
    return found


def section(best: dict, found: list[Row], settings: str, notes: list[str]) -> str:
    """The whole section, markers included: the rows again (a --grpc-only run's verdicts) and
    the throughput table."""
    names = list(LABELS)
    lines = [
        BEGIN,
        "## gRPC",
        "",
        "The same four calls over the A2A gRPC binding (`lf.a2a.v1.A2AService`, plaintext "
        "HTTP/2): `mockagent serve --grpc-port` against the bench's a2a-sdk stub agent on the "
        "SDK's own gRPC transport (`GrpcHandler` on `grpc.aio`). Driven by h2load (one thread, "
        "one stream per connection) with the serialized requests; each call checked once with "
        "grpcio before timing (grpc-status OK and the right answer). h2load only sees HTTP "
        "statuses, so a run whose responses lack more than "
        f"{bench_grpc.MISSING_BYTES:.0%} of the checked answer's bytes counts the missing calls "
        f"as errors. Settings: {settings}.",
        "",
        "The last column is the floor: a `grpc.aio` server whose handlers answer with prebuilt "
        "bytes (scripts/bench_grpc_floor.py), no engine and no conversion. It is what grpcio's "
        "Python server costs per call here, and it bounds every Python gRPC server: where the "
        "a2a-sdk's answer is close to it (GetTask), no ratio to the a2a-sdk can reach the "
        "target in one process; that would take a server outside Python.",
        "",
        "| measurement | value | target | result |",
        "|---|---|---|---|",
    ]
    lines += [f"| {r.name} | {r.value} | {r.target} | {r.verdict} |" for r in found]
    lines += [
        "",
        "Calls/s (p50/p99 latency in ms), best of the rounds.",
        "",
        "| call | conns | " + " | ".join(LABELS[n] for n in names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for scenario, title in TITLES.items():
        for conns in CONNS:
            cells = [cell(best.get((n, scenario, conns))) for n in names]
            lines.append(f"| {title} | {conns} | " + " | ".join(cells) + " |")
    lines += [""] + [f"- {note}" for note in notes] + ([""] if notes else []) + [END]
    return "\n".join(lines)


def replace_rows(readme: str, found: list[Row]) -> str:
    """`readme` with its Targets table's gRPC rows replaced by `found`: each row by name, rows
    it lacks after the table's last row (an earlier README without gRPC)."""
    lines = readme.split("\n")
    start = lines.index("## Targets") if "## Targets" in lines else None
    if start is None:
        return readme
    end = start + 1
    while end < len(lines) and not lines[end].startswith("|"):
        end += 1  # the table's header
    while end < len(lines) and lines[end].startswith("|"):
        end += 1  # one past the table's last row
    for row in found:
        text = f"| {row.name} | {row.value} | {row.target} | {row.verdict} |"
        at = next((i for i in range(start, end) if lines[i].startswith(f"| {row.name} |")), None)
        if at is None:
            lines.insert(end, text)
            end += 1
        else:
            lines[at] = text
    return "\n".join(lines)


def settings_line(count: int, seconds: float, started: float) -> str:
    return (
        f"{bench_grpc.h2load_version()}, {count} round(s) × {seconds:g} s per cell, "
        f"{' and '.join(map(str, CONNS))} connections; run {time.strftime('%Y-%m-%d %H:%M %Z')} "
        f"in {time.monotonic() - started:.0f} s"
    )


def place(readme: str, part: str) -> str:
    """`readme` with the gRPC section `part` in its place: replacing the last one, else before
    the server comparison (as a full run puts it), else at the end."""
    if BEGIN in readme:
        return splice(readme, part, (BEGIN, END))
    servers = readme.find(SERVERS_BEGIN)
    if servers < 0:
        return splice(readme, part, (BEGIN, END))
    return readme[:servers] + part + "\n\n" + readme[servers:]
