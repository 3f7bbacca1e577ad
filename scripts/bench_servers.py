"""Which production server `mockagent serve` should run on: the same app on each candidate.

Every candidate serves `bench_app:app` (the app `mockagent serve` builds, see scripts/bench_app.py)
from its own command line, beside `mockagent serve` as it ships. They are timed with the same wrk
load as the bench's other targets (`bench_wrk.rounds`), then checked one at a time with many paced
streams open: a thread that holds a paced stream answers nothing else for the stream's length,
so a server with a fixed pool stops answering fresh calls once the streams fill it.
"""

from __future__ import annotations

import http.client
import itertools
import socket
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bench_pacing
import bench_targets as targets
import bench_wrk
from bench_app import CASSETTE, PACE, STORE

BIN = Path(targets.PY).parent
THREADS = 32  # a fixed pool gets `mockagent serve --threads`'s default, as bare Flask does

STREAMS = 40  # paced streams held open, more than a default pool
STREAM_EVENTS = 120  # 50 ms apart: each stream lasts 6 s, past the fresh calls below
LENGTH_MS = (STREAM_EVENTS - 1) * bench_pacing.GAP_MS  # first event to last, as scripted
LATE_MS = 2000  # a stream whose last event comes later than this past its time did not finish
OPEN_WAIT_S = 2.0  # a stream whose first event is not there by then did not get a thread
FRESH = 8  # fresh direct-reply calls, one after another, each on a new connection
FRESH_TIMEOUT_S = 0.5  # answered later than this (or never) is "not answered"


def _granian(workers: int, threads: int | None) -> Callable[[int], list[str]]:
    def command(port: int) -> list[str]:
        cmd = [str(BIN / "granian"), "--interface", "wsgi", "--host", "127.0.0.1"]
        cmd += ["--port", str(port), "--workers", str(workers), "--no-ws", "--log-level", "warning"]
        if threads is not None:
            cmd += ["--blocking-threads", str(threads)]
        return [*cmd, "bench_app:app"]

    return command


def _gunicorn(port: int) -> list[str]:
    return [
        *(str(BIN / "gunicorn"), "--worker-class", "gthread", "--workers", "1"),
        *("--threads", str(THREADS), "--bind", f"127.0.0.1:{port}", "bench_app:app"),
    ]


def _waitress(port: int) -> list[str]:
    return [
        str(BIN / "waitress-serve"),
        f"--listen=127.0.0.1:{port}",
        f"--threads={THREADS}",
        "bench_app:app",
    ]


def _cheroot(port: int) -> list[str]:
    return [
        *(str(BIN / "cheroot"), "--bind", f"127.0.0.1:{port}"),
        *("--threads", str(THREADS), "bench_app:app"),
    ]


@dataclass(frozen=True)
class Server:
    """A candidate: its label and command line (given a port); `workers` > 1 share a Redis store,
    as `mockagent serve --workers` needs."""

    label: str
    command: Callable[[int], list[str]]
    workers: int = 1


BASELINE = "mockagent"  # `mockagent serve` as this checkout ships it; ratios are against it
SERVERS = {
    "granian-1x1": Server("granian, 1 worker, 1 blocking thread", _granian(1, 1)),
    "granian": Server("granian, 1 worker, default blocking threads", _granian(1, None)),
    "granian-w2": Server(
        "granian, 2 workers, default blocking threads, Redis store", _granian(2, None), 2
    ),
    "gunicorn": Server(f"gunicorn gthread, 1 worker × {THREADS} threads", _gunicorn),
    "waitress": Server(f"waitress, {THREADS} threads", _waitress),
    "cheroot": Server(f"cheroot, {THREADS} threads", _cheroot),
}


def labels() -> dict[str, str]:
    return {BASELINE: "mockagent serve (as shipped)"} | {n: s.label for n, s in SERVERS.items()}


def target(name: str, cassette: Path, pace: str) -> targets.Target:
    """The server `name` (or the baseline) serving `cassette` at `pace`, not yet started."""
    if name == BASELINE:
        port = targets.free_port()
        cmd = [targets.MOCKAGENT, "serve", str(cassette), "--port", str(port), "--pace", pace]
        return targets.Target(BASELINE, labels()[BASELINE], cmd, port)
    server, port = SERVERS[name], targets.free_port()
    env = {CASSETTE: str(cassette), PACE: pace, "PYTHONPATH": str(Path(__file__).parent)}
    helpers = []
    if server.workers > 1:
        redis, redis_port = targets.start_redis()
        helpers.append(redis)
        env[STORE] = f"redis://127.0.0.1:{redis_port}/0"
    return targets.Target(
        f"server-{name}", server.label, server.command(port), port, helpers=helpers, env=env
    )


@dataclass
class StreamsCheck:
    """Fresh calls while `STREAMS` paced streams are open; times in ms."""

    opened: int  # streams whose first event came within OPEN_WAIT_S
    completed: int  # streams that sent every event, the last at most LATE_MS late
    answered: int  # fresh calls answered rightly within FRESH_TIMEOUT_S
    fresh_ms: list[float] = field(default_factory=list)  # the answered calls' latencies
    gap_p99_ms: float | None = None  # p99 |gap - 50 ms| over the completed streams' events

    @property
    def ok(self) -> bool:
        """Every stream started and ran to its end on time (give or take 2 s), and every fresh
        call was answered."""
        return self.opened == self.completed == STREAMS and self.answered == FRESH


class _Stream(threading.Thread):
    """One paced stream read line by line, each `data:` line stamped as it arrives."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stamps: list[float] = []
        self.first = threading.Event()
        self.conn: http.client.HTTPConnection | None = None

    def run(self) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            body = targets._send("SendStreamingMessage", "paced stream")
            self.conn.request("POST", "/", body, targets.HEADERS)
            answer = self.conn.getresponse()
            while line := answer.readline():
                if line.startswith(b"data:"):
                    self.stamps.append(time.perf_counter() * 1e3)
                    self.first.set()
        except (OSError, http.client.HTTPException):
            pass  # cut by abort() or by the server's stop: what arrived is counted

    def abort(self) -> None:
        sock = self.conn.sock if self.conn is not None else None
        if sock is not None:
            try:  # shutdown, not close: it wakes the thread blocked reading the socket
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def check_streams(url: str, port: int) -> StreamsCheck:
    """Open `STREAMS` paced streams, then send `FRESH` direct-reply calls one after another."""
    streams = [_Stream(port) for _ in range(STREAMS)]
    for stream in streams:
        stream.start()
    deadline = time.monotonic() + OPEN_WAIT_S
    for stream in streams:
        stream.first.wait(max(0.0, deadline - time.monotonic()))
    opened = [s for s in streams if s.first.is_set()]
    fresh: list[float] = []
    for _ in range(FRESH):
        began = time.perf_counter()
        try:
            status, _, text = targets.post(url, targets.BODIES["direct"], FRESH_TIMEOUT_S)
        except OSError:  # a timeout too
            continue
        if status == 200 and "pong" in text:
            fresh.append((time.perf_counter() - began) * 1e3)
    for stream in opened:  # until 2 s after its last event was due, from its first event
        due = stream.stamps[0] + LENGTH_MS + LATE_MS
        stream.join(max(0.0, (due - time.perf_counter() * 1e3) / 1e3))
    for stream in streams:
        stream.abort()
    done = [
        s.stamps
        for s in streams
        if len(s.stamps) == STREAM_EVENTS and s.stamps[-1] - s.stamps[0] <= LENGTH_MS + LATE_MS
    ]
    errors = sorted(
        abs(b - a - bench_pacing.GAP_MS) for stamps in done for a, b in itertools.pairwise(stamps)
    )
    return StreamsCheck(
        opened=len(opened),
        completed=len(done),
        answered=len(fresh),
        fresh_ms=fresh,
        gap_p99_ms=errors[min(len(errors) - 1, int(0.99 * len(errors)))] if errors else None,
    )


def run_checks(log: Callable[[str], None], notes: list[str]) -> dict[str, StreamsCheck]:
    """The streams check on every server, one at a time, each on a recorded-pace cassette."""
    cassette = bench_pacing.generate_cassette(targets.CACHE / "streams.yaml", STREAM_EVENTS)
    checks: dict[str, StreamsCheck] = {}
    for name in labels():
        server = target(name, cassette, "recorded")
        try:
            server.start()
            checks[name] = found = check_streams(server.url, server.port)
        except (RuntimeError, OSError) as exc:
            notes.append(f"{labels()[name]}: streams check not run: {exc}")
            continue
        finally:
            server.stop()
        median = statistics.median(found.fresh_ms) if found.fresh_ms else float("nan")
        log(
            f"  streams {name:12} opened {found.opened}/{STREAMS}, "
            f"answered {found.answered}/{FRESH} (p50 {median:.1f} ms), "
            f"completed {found.completed}, gap p99 error {found.gap_p99_ms}"
        )
    return checks


def measure(
    cassette: Path, count: int, seconds: float, log: Callable[[str], None], notes: list[str]
) -> tuple[dict[tuple[str, str, int], bench_wrk.Result], dict[str, StreamsCheck]]:
    """wrk rounds on every server at once (instant pace), then the streams check on each."""
    running: dict[str, targets.Target] = {}
    try:
        for name, label in labels().items():
            server = target(name, cassette, "instant")
            try:
                running[name] = server.start()
            except (RuntimeError, OSError) as exc:
                server.stop()
                notes.append(f"{label} did not start: {exc}")
        scripts = bench_wrk.prepare(running, notes)
        log(f"servers: {count} round(s) of {seconds:g} s per cell")
        best = bench_wrk.rounds(running, scripts, count, seconds, log, warm_every_call=False)
    finally:
        for server in running.values():
            server.stop()
    log(f"servers: {STREAMS} paced streams and {FRESH} fresh calls on each")
    return best, run_checks(log, notes)
