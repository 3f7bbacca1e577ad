"""The server comparison's part of bench/README.md: two tables and a note of who wins on what.

The section sits between two markers, so that `scripts/bench --servers-only` can replace it in a
README written by an earlier full run, and a run that skips the comparison keeps the last one.
"""

from __future__ import annotations

import math
import statistics

from bench_report import SCENARIOS
from bench_servers import (
    BASELINE,
    FRESH,
    FRESH_TIMEOUT_S,
    LATE_MS,
    OPEN_WAIT_S,
    STREAMS,
    StreamsCheck,
)
from bench_wrk import CONNS, Result

BEGIN, END = "<!-- servers: begin -->", "<!-- servers: end -->"
CELLS = [(s, c) for s in SCENARIOS for c in CONNS]
SHORT = {"direct": "direct reply", "task": "blocking task", "get": "GetTask", "stream": "stream"}


def _usable(result: Result | None) -> bool:
    return result is not None and not result.errors


def _cell(result: Result | None, base: Result | None) -> str:
    if result is None:
        return "–"
    text = f"{result.rps:,.0f} ({result.p50_ms:.2f} ms)"
    if result.errors:
        return text + f" ⚠ {result.errors} errors"
    if _usable(base) and base is not result:
        text += f" {result.rps / base.rps:.2f}×"  # type: ignore[union-attr]
    return text


def geomean_ratio(name: str, best: dict) -> float | None:
    """Geometric mean over every call and connection count of `name`'s requests/s ÷ the
    baseline's; None unless both have every cell without errors."""
    ratios = []
    for scenario, conns in CELLS:
        mine, base = best.get((name, scenario, conns)), best.get((BASELINE, scenario, conns))
        if mine is None or base is None or mine.errors or base.errors:
            return None
        ratios.append(mine.rps / base.rps)
    return math.exp(statistics.fmean(math.log(r) for r in ratios))


def verdict(labels: dict[str, str], best: dict, checks: dict[str, StreamsCheck]) -> list[str]:
    """Who wins on what, in this run's figures."""
    lines = []
    candidates = [n for n in labels if n != BASELINE]
    wins: dict[str, list[str]] = {}
    for scenario, conns in CELLS:
        timed = [n for n in candidates if _usable(best.get((n, scenario, conns)))]
        if timed:
            top = max(timed, key=lambda n: best[(n, scenario, conns)].rps)
            wins.setdefault(top, []).append(f"{SHORT[scenario]} c={conns}")
    if wins:
        lines.append(
            "Most requests/s among the candidates: "
            + "; ".join(
                f"{labels[n]} in {len(cells)} of {len(CELLS)} ({', '.join(cells)})"
                for n, cells in sorted(wins.items(), key=lambda kv: -len(kv[1]))
            )
            + "."
        )
    p50s = {
        n: statistics.median(best[(n, s, 1)].p50_ms for s in SCENARIOS)
        for n in candidates
        if all(_usable(best.get((n, s, 1))) for s in SCENARIOS)
    }
    if p50s:
        low = min(p50s, key=p50s.__getitem__)
        lines.append(
            f"Lowest latency at 1 connection (median p50 of the four calls): {labels[low]}, "
            f"{p50s[low]:.2f} ms."
        )
    passed = [n for n in candidates if n in checks and checks[n].ok]
    failed = [n for n in candidates if n in checks and not checks[n].ok]
    if checks:
        text = f"With {STREAMS} paced streams open, every stream started and finished on time "
        text += (
            f"and every fresh call was answered: {', '.join(labels[n] for n in passed) or 'none'}"
        )
        if failed:
            text += "; not: " + ", ".join(
                f"{labels[n]} ({checks[n].opened}/{STREAMS} started, {checks[n].completed} "
                f"finished, {checks[n].answered}/{FRESH} answered)"
                for n in failed
            )
        lines.append(text + ".")
    scores = {n: r for n in candidates if (r := geomean_ratio(n, best)) is not None}
    if scores:
        fastest = max(scores, key=scores.__getitem__)
        lines.append(
            f"Highest throughput over all {len(CELLS)} cells (geometric mean against "
            f"{labels[BASELINE]}): {labels[fastest]}, {scores[fastest]:.2f}×."
        )
    chosen = [n for n in passed if n in scores]
    if chosen:
        pick = max(chosen, key=scores.__getitem__)
        lines.append(
            f"**Choice by this run: {labels[pick]}**: the highest throughput "
            f"({scores[pick]:.2f}×) among the servers that pass the streams check."
        )
    else:
        lines.append("**No candidate both passed the streams check and ran every cell cleanly.**")
    return lines


def section(
    labels: dict[str, str],
    best: dict,
    checks: dict[str, StreamsCheck],
    settings: str,
    notes: list[str],
) -> str:
    """The whole section, markers included."""
    lines = [
        BEGIN,
        "## Which server for `mockagent serve`",
        "",
        "The app `mockagent serve` builds (scripts/bench_app.py, the bench cassette, "
        "`--pace instant`) on each candidate server, started from its own command line, and "
        "`mockagent serve` as this checkout ships it; the same wrk load and request bodies as "
        "the throughput table above, candidates interleaved round by round. "
        f"Settings: {settings}.",
        "",
        "Requests/s (p50 latency) and, after it, the ratio to the first row; best of the rounds.",
        "",
        "| server | " + " | ".join(f"{SHORT[s]} c={c}" for s, c in CELLS) + " |",
        "|---|" + "---|" * len(CELLS),
    ]
    for name, label in labels.items():
        cells = [_cell(best.get((name, s, c)), best.get((BASELINE, s, c))) for s, c in CELLS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Streams check: {STREAMS} recorded-pace streams (50 ms between events, 6 s each) opened "
        f"at once; a stream whose first event came within {OPEN_WAIT_S:g} s counts as started. "
        f"Then {FRESH} fresh direct-reply calls, one after another on new connections; answered "
        f"means the right answer within {FRESH_TIMEOUT_S:g} s. The gap error is |gap − 50 ms| "
        "over the events of the streams that finished, under this load. A stream finished if "
        f"its last event came at most {LATE_MS / 1000:g} s late. A server passes with every "
        "stream started and finished and every call answered.",
        "",
        "| server | streams started | fresh calls answered | fresh call p50 / max | "
        "streams finished | p99 gap error |",
        "|---|---|---|---|---|---|",
    ]
    for name, label in labels.items():
        found = checks.get(name)
        if found is None:
            lines.append(f"| {label} | – | – | – | – | – |")
            continue
        latency = (
            f"{statistics.median(found.fresh_ms):.1f} / {max(found.fresh_ms):.1f} ms"
            if found.fresh_ms
            else "–"
        )
        gap = f"{found.gap_p99_ms:.1f} ms" if found.gap_p99_ms is not None else "–"
        lines.append(
            f"| {label} | {found.opened}/{STREAMS} | {found.answered}/{FRESH} | {latency} | "
            f"{found.completed}/{STREAMS} | {gap} |"
        )
    lines += ["", "What this run says:", ""]
    lines += [f"- {line}" for line in verdict(labels, best, checks)]
    lines += [f"- {note}" for note in notes]
    lines += ["", "![requests per second by server](servers.png)", END]
    return "\n".join(lines)


HISTORY = ("<!-- history: begin -->", "<!-- history: end -->")
"""Markers of a section written by hand (what changed between runs, and why), which every run
keeps as it was."""


def previous(readme: str, markers: tuple[str, str] = (BEGIN, END)) -> str:
    """The section between `markers` in an earlier README, or "" if it has none."""
    begin, end = markers
    start, stop = readme.find(begin), readme.find(end)
    return readme[start : stop + len(end)] if 0 <= start < stop else ""


def splice(readme: str, new: str, markers: tuple[str, str] = (BEGIN, END)) -> str:
    """`readme` with its section between `markers` replaced by `new` (appended if it had
    none)."""
    old = previous(readme, markers)
    if old:
        return readme.replace(old, new)
    return readme.rstrip("\n") + "\n\n" + new + "\n"
