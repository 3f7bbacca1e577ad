"""The bench's outputs: target rows with pass/fail, the markdown report and the PNG chart."""

from __future__ import annotations

import math
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

SCENARIOS = {
    "direct": "SendMessage, direct reply",
    "task": "SendMessage, blocking task",
    "get": "GetTask",
    "stream": "9-event stream (SSE)",
}


@dataclass
class Row:
    """One measurement beside its target; `ok` None means not measured (n/a or errors)."""

    name: str
    value: str
    target: str
    ok: bool | None

    @property
    def verdict(self) -> str:
        if not self.target:
            return "info"
        return {True: "pass", False: "**FAIL**", None: "n/a"}[self.ok]


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def machine_facts() -> dict[str, str]:
    def out(*cmd: str) -> str:
        try:
            return (
                subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
            )
        except (OSError, IndexError):
            return "?"

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?"
            )
    except OSError:
        pass
    return {
        "CPUs (nproc)": out("nproc"),
        "CPU": cpu,
        "kernel": out("uname", "-srm"),
        "Python": platform.python_version(),
        "node": out("node", "--version"),
        "wrk": " ".join(out("wrk", "-v").split()[:2]),
    }


def ratio_row(
    name: str, mine, theirs, minimum: float | None, missing: str = "n/a (not measured)"
) -> Row:
    """`mine / theirs` throughput against `minimum` (None: for information, no target); a side
    with errors or missing is n/a."""
    target = "" if minimum is None else f"≥ {minimum:g}×"
    if mine is None or theirs is None:
        return Row(name, missing, target, None)
    if mine.errors or theirs.errors:
        return Row(name, f"n/a (errors: {mine.errors} / {theirs.errors})", target, None)
    ratio = mine.rps / theirs.rps
    return Row(
        name,
        f"{ratio:.2f}× ({mine.rps:,.0f} vs {theirs.rps:,.0f} req/s)",
        target,
        minimum is None or ratio >= minimum,
    )


def cell(result) -> str:
    if result is None:
        return "–"
    text = f"{result.rps:,.0f} ({result.p50_ms:.2f}/{result.p99_ms:.2f})"
    return text + (f" ⚠ {result.errors} errors" if result.errors else "")


def markdown(
    facts: dict[str, str],
    settings: str,
    labels: dict[str, str],
    best: dict,
    rows: list[Row],
    notes: list[str],
) -> str:
    """The whole bench/README.md."""
    names = list(labels)
    lines = [
        "# mockagent benchmark",
        "",
        "Written by `scripts/bench` (do not edit by hand; rerun it). "
        "All servers ran on this machine at the same time, driven by the same wrk load "
        "generator with the same request bodies, targets interleaved round by round.",
        "",
    ]
    lines += [f"- **{k}**: {v}" for k, v in facts.items()]
    lines += [
        f"- **settings**: {settings}",
        "",
        "## Targets",
        "",
        "| measurement | value | target | result |",
        "|---|---|---|---|",
    ]
    lines += [f"| {r.name} | {r.value} | {r.target} | {r.verdict} |" for r in rows]
    lines += [
        "",
        "## Throughput",
        "",
        "Requests/s (p50/p99 latency in ms), best of the rounds; "
        "JSON-RPC over HTTP/1.1 keep-alive.",
        "",
        "| call | conns | " + " | ".join(labels[n] for n in names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for scenario, title in SCENARIOS.items():
        for conns in (1, 16):
            cells = [cell(best.get((n, scenario, conns))) if labels[n] else "–" for n in names]
            lines.append(f"| {title} | {conns} | " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    lines += ["", "![requests per second by target](chart.png)", ""]
    return "\n".join(lines)


def chart(
    path: Path,
    labels: dict[str, str],
    best: dict,
    title: str = "mockagent replay throughput vs other servers (wrk, same machine)",
) -> None:
    """Grouped bars: requests/s per call, one bar per target, at 1 and 16 connections."""
    import matplotlib

    matplotlib.use("Agg")  # no display on a bench machine
    import matplotlib.pyplot as plt

    names = [n for n in labels if any(k[0] == n for k in best)]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    width = 0.8 / max(1, len(names))
    for ax, conns in zip(axes, (1, 16), strict=True):
        for i, name in enumerate(names):
            values = [getattr(best.get((name, s, conns)), "rps", 0) for s in SCENARIOS]
            ax.bar(
                [x + i * width for x in range(len(SCENARIOS))], values, width, label=labels[name]
            )
        ax.set_xticks([x + width * (len(names) - 1) / 2 for x in range(len(SCENARIOS))])
        ax.set_xticklabels([s.split(",")[-1].strip() for s in SCENARIOS.values()], fontsize=8)
        ax.set_title(f"{conns} connection{'s' if conns > 1 else ''}")
        ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("requests/s (log)")
    handles, names_ = axes[0].get_legend_handles_labels()  # below the plots, clear of the bars
    columns = max(1, len(names) if len(names) <= 6 else math.ceil(len(names) / 2))
    fig.legend(handles, names_, fontsize=8, loc="lower center", ncol=columns)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.07 * math.ceil(len(names) / columns), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
