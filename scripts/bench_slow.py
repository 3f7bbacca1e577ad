"""Slow clients never hold the server (issue 26): report rows for scripts/bench, measured on a
real `mockagent serve` with its default settings (scripts/bench_slow_probe.py drives it).

- 300 stalled uploads (a head declaring 1,000 body bytes, then 5 of them): fresh calls (agent,
  card, admin) answered within 100 ms meanwhile; each stalled upload answered 408.
- 200 clients of an 8 MB stream that read nothing: under 300 MB more memory, freed when they
  leave.
- 500 open SSE streams on one process, and on `--workers 2` sharing a Redis store: fresh calls
  answered within 100 ms.
- What the body deadline costs a call (p50 on a kept-alive connection, against no deadline).

`python scripts/bench_slow.py [--quick]` prints the rows alone.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bench_slow_probe as probe
import bench_targets as targets
from bench_report import Row

STALLED, NON_READERS, STREAMS = 300, 200, 500
SETTLE_S = 1.0
"""How long the slow clients are left to reach the server before fresh calls are timed."""
LEFT_S = 8.0
"""How long after the non-reading clients left their memory is measured (mockagent.server.trim
gives it back 1 s and 7 s after the last stream ended)."""


def _cassette() -> Path:
    targets.CACHE.mkdir(parents=True, exist_ok=True)
    return probe.write_cassette(targets.CACHE / "slow-clients.json")


def stalled_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    server = probe.Serve(targets.MOCKAGENT, _cassette(), "--body-timeout", "3")
    try:
        socks = probe.stalled_uploads(server.port, STALLED)
        time.sleep(SETTLE_S)
        fresh = probe.fresh_calls_ms(server.port, 3 if quick else 10)
        answered = probe.answered_with(socks, b" 408 ", 15)
        probe.close_all(socks)
    finally:
        server.stop()
    log(f"  {STALLED} stalled uploads: fresh calls max {max(fresh):.1f} ms, {answered} × 408")
    return [
        Row(
            f"fresh calls (agent, card, admin) while {STALLED} uploads stall (max)",
            f"{max(fresh):.1f} ms (p50 {statistics.median(fresh):.1f})",
            "≤ 100 ms",
            max(fresh) <= 100,
        ),
        Row(
            "stalled uploads answered 408 at --body-timeout (3 s here; 10 s by default)",
            f"{answered} of {STALLED}",
            f"{STALLED} of {STALLED}",
            answered == STALLED,
        ),
    ]


def non_reader_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    count = NON_READERS // 4 if quick else NON_READERS
    server = probe.Serve(targets.MOCKAGENT, _cassette(), "--pace", "instant")
    try:
        probe.fresh_calls_ms(server.port, 2)  # warm: the first calls build caches
        before = server.rss_mb()
        socks = probe.streams(server.port, count, "big", rcvbuf=4096)
        time.sleep(SETTLE_S * 3)
        during = server.rss_mb()
        probe.close_all(socks)
        time.sleep(LEFT_S)  # the streams end, their threads go (5 s idle), the heap is trimmed
        after = server.rss_mb()
    finally:
        server.stop()
    log(f"  {count} non-readers of 8 MB: {before:.0f} → {during:.0f} → {after:.0f} MB")
    return [
        Row(
            f"RSS added by {count} clients of an 8 MB stream that read nothing",
            f"+{during - before:.0f} MB ({before:.0f} → {during:.0f} MB)",
            "< 300 MB",
            None if quick else during - before < 300,
        ),
        Row(
            "RSS still added once they left",
            f"+{after - before:.0f} MB ({after:.0f} MB, {LEFT_S:.0f} s after)",
            "≤ 50 MB (freed)",
            None if quick else after - before <= 50,
        ),
    ]


def streams_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    rows = []
    count = STREAMS // 5 if quick else STREAMS
    redis, redis_port = targets.start_redis()
    shared = ("--workers", "2", "--store", f"redis://127.0.0.1:{redis_port}/0")
    try:
        for label, flags in (("defaults", ()), ("--workers 2 on Redis", shared)):
            server = probe.Serve(targets.MOCKAGENT, _cassette(), *flags)
            try:
                socks = probe.streams(server.port, count, "hold")
                opened = probe.answered_with(socks, b" 200 ", 30)
                fresh = probe.fresh_calls_ms(server.port, 3 if quick else 10)
                probe.close_all(socks)
            finally:
                server.stop()
            log(f"  {opened} open SSE streams, {label}: fresh calls max {max(fresh):.1f} ms")
            rows.append(
                Row(
                    f"fresh calls (agent, card, admin) with {opened} SSE streams open, {label} "
                    "(max)",
                    f"{max(fresh):.1f} ms (p50 {statistics.median(fresh):.1f})",
                    "≤ 100 ms",
                    None if quick else opened == count and max(fresh) <= 100,
                )
            )
    finally:
        redis.terminate()
        redis.wait(timeout=10)
    return rows


def deadline_cost_rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    """p50 of a direct-reply call with the body deadline, against an app without one
    (`--body-timeout` at its largest does not turn it off: the in-process probe compares)."""
    calls = 2000 if quick else 20000
    cost = probe.deadline_cost_us(_cassette(), calls)
    log(f"  body deadline cost: {cost}")
    return [
        Row(
            "a call's p50 with the body deadline vs without (in-process WSGI, 1 KB body)",
            f"{cost['with']:.1f} vs {cost['without']:.1f} µs",
            "≤ +15 µs",
            cost["with"] - cost["without"] <= 15,
        )
    ]


SECTION = """## Slow clients (issue 26)

The slow-client rows above drive a real `mockagent serve` with its defaults over raw sockets
(`scripts/bench_slow.py`, `scripts/bench_slow_probe.py`). Before this work (`--threads 128`, no
body deadline, an instant stream written in one piece), 140 stalled uploads or 200 open SSE
streams left every fresh call waiting, and 200 non-reading clients of an 8 MB stream took the
server from 194 MB to 1.9 GB (875 MB still held after they left).

- **Stalled uploads.** A body read runs in a reader thread, with a deadline (`--body-timeout`,
  10 s): past it the client gets 408 in the protocol's shape and `Connection: close`. granian has
  no body timeout, and its blocked read cannot be interrupted; an answer that ended while its
  body was still being read deadlocked the granian worker (a runtime thread waiting for the GIL
  that the reader held), so the 408's answer lasts until the read ends. A client that leaves on
  its 408 frees its thread; one that stays keeps that one thread until it leaves. Fresh calls
  are answered by the other threads: `--threads` defaults to 1024 (granian takes 1,024
  connections a worker; its threads start when needed and end after 5 s idle).
- **What the deadline costs a call.** Reader threads are kept and reused (ended after 5 s idle):
  the handoff costs some 12 µs on a quiet machine, 20-25 µs under load (a thread started per
  call cost ~70 µs). A request without a body (a GET) takes no reader.
- **Clients that do not read.** A streamed answer goes to granian in writes of at most 64 KB
  (events already there are joined up to that size, a larger one is cut), and granian's HTTP/1
  buffer is 64 KB: such a client holds some 4 × 64 KB + 64 KB of its stream, not all of it.
  Once they left, glibc kept the freed memory; `malloc_trim` after the streams ended gives most
  of it back (8 s after they left: +68 MB without it, +31 MB with it).
- **Agentex NDJSON streams** use the same bounded writes. **gRPC** (`--grpc-port`; measured once
  by hand, not a row): with 300 gRPC streams open, fresh unary gRPC calls took at most 6 ms
  (3 ms with `--threads 128`: in memory, grpc.aio's server holds no thread for a waiting
  stream). On a shared `--store`, the same server holds one of the `--threads` threads per open
  stream, 1024 by default. HTTP/2 flow control bounds what a stream buffers for a
  client that does not read, and a call takes a thread only once its request arrived.
- **One gRPC server.** grpc.aio serves gRPC on a shared `--store` too (each call's engine work on
  one of `--threads`), where grpcio's thread-pool server did. Measured by hand on 2026-12-07 (the
  gRPC bench's calls and h2load, `--workers 2` on Redis, 3 interleaved rounds × 3 s, load
  average ~4 from other work), thread-pool → aio at 16 connections, the Targets rows' column:
  direct reply 2,177 → 2,071 calls/s, blocking task 1,577 → 1,595, GetTask 2,080 → 2,199,
  9-event stream 638 → 749 (p99 69.6 → 38.0 ms); at 1 connection aio is 10-25% slower (one
  more thread handoff a call). Within the noise where the targets are measured, so one server.

"""


def place(text: str) -> str:
    """`text` (bench/README.md) with SECTION before its throughput section."""
    start = text.find(SECTION.split("\n", 1)[0])
    if start >= 0:  # the last run's: replaced
        end = text.find("\n## ", start + 1)
        text = text[:start] + text[end + 1 :] if end >= 0 else text[:start]
    at = text.find("## Throughput")
    return text[:at] + SECTION + text[at:] if at >= 0 else text + "\n" + SECTION


def rows(quick: bool, log: Callable[[str], None]) -> list[Row]:
    """Every row of this part."""
    out: list[Row] = []
    for make in (stalled_rows, non_reader_rows, streams_rows, deadline_cost_rows):
        out += make(quick, log)
    return out


if __name__ == "__main__":
    for row in rows("--quick" in sys.argv, print):
        print(row)
