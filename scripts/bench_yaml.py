"""What the YAML fast constructor (`mockagent.cassette.yaml_reader.construct_document`) saves: the
parse of a cassette with it against the same parse with PyYAML's own safe constructor, in CPU time
(best of several, the garbage collector paused as `load_cassette` pauses it).

Issue 27 asked to delete it if it saved no more than 0.3 ms a load: it saves 0.2 ms of a bundled
cassette's, but a third of a big one's parse (1.5× at 10,000 interactions; 1.6 s of CPU of the
9 s a 20 MB cassette at the size cap takes, whose target is 10 s). The row's target keeps that
true: below it, delete the fast path.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any
from unittest import mock

import bench_inproc
import bench_targets as targets
from bench_report import Row

from mockagent.cassette import yaml_reader

TARGET = 1.2
"""PyYAML's constructor ÷ the fast one at 10,000 interactions: the least that keeps it."""


def plain(loader: Any, root: Any, duplicates: Any = None) -> Any:
    """PyYAML's own safe constructor, in the fast one's place (keys written twice go unnoted: the
    alternative's cost is at least this)."""
    return loader.construct_document(root)


def cpu_ms(text: str, runs: int, pyyaml: bool = False) -> float:
    """The least CPU time of `runs` parses of `text` (alias checks included), in ms; `pyyaml`:
    with PyYAML's constructor in place of the fast one."""
    best = float("inf")
    swap = mock.patch.object(yaml_reader, "construct_document", plain) if pyyaml else nullcontext()
    with swap:
        for _ in range(runs):
            gc.disable()
            try:
                start = time.process_time()
                yaml_reader.parse_checked(text, "bench")
                best = min(best, time.process_time() - start)
            finally:
                gc.enable()
    return best * 1000


def rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    runs = 3 if quick else 5
    bundled = [
        path.read_text(encoding="utf-8") for path in targets.ROOT.glob("cassettes/**/*.yaml")
    ]
    fast = sum(cpu_ms(text, 20) for text in bundled)
    slow = sum(cpu_ms(text, 20, pyyaml=True) for text in bundled)
    targets.CACHE.mkdir(exist_ok=True)
    big = bench_inproc.generate_cassette(targets.CACHE / "yaml-10000.yaml", 10_000)
    text = big.read_text(encoding="utf-8")
    big_fast = cpu_ms(text, runs)
    big_slow = cpu_ms(text, runs, pyyaml=True)
    log(f"  yaml: bundled {slow:.2f} → {fast:.2f} ms, 10,000: {big_slow:.0f} → {big_fast:.0f} ms")
    return [
        Row(
            f"YAML fast constructor: CPU saved per load of a bundled cassette (mean of "
            f"{len(bundled)})",
            f"{(slow - fast) / len(bundled):.2f} ms ({slow:.1f} → {fast:.1f} ms for all)",
            "",
            None,
        ),
        Row(
            "YAML fast constructor: parse of 10,000 interactions, PyYAML's constructor ÷ it "
            f"(CPU, best of {runs})",
            f"{big_slow / big_fast:.2f}× ({big_slow:.0f} vs {big_fast:.0f} ms)",
            f"≥ {TARGET}× (else delete it)",
            big_slow / big_fast >= TARGET,
        ),
    ]
