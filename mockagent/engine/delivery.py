"""Push-notification delivery: webhook POSTs on background threads, never blocking the caller.

A2A push delivery (reference/a2a.md §6 "Push") must never hold up a response: the TCK's CRUD tests
register webhooks at unreachable URLs, and a slow receiver must not slow another. So `post()` only
queues the request; one daemon worker per destination (scheme, host, port) sends them in order, one
attempt each, and reports every attempt as a `Delivery` through `on_result` (the journal).
"""

from __future__ import annotations

import http.client
import logging
import queue
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

MAX_WORKERS = 32
"""Worker threads per Deliverer; further destinations share one, chosen by a hash of the
destination."""

THREAD_PREFIX = "mockagent-push"


@dataclass(frozen=True)
class Delivery:
    """The result of one delivery attempt, kept for the journal."""

    seq: int
    url: str
    task_id: str
    config_id: str
    event: str
    status: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        """True when the receiver answered 2xx."""
        return self.error is None


@dataclass(frozen=True)
class _Job:
    seq: int
    url: str
    body: bytes
    headers: dict[str, str]
    task_id: str
    config_id: str
    event: str
    invalid: str | None  # why the URL cannot be sent to; decided in post(), reported by a worker
    on_result: Callable[[Delivery], None] | None = None  # this post's own reporter, if any


def _destination(url: str) -> tuple[str, str | None]:
    """`(key, None)` for a sendable URL, else `("", reason)`: the key groups URLs for one worker."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return "", f"invalid URL: {exc}"
    if parts.scheme not in ("http", "https"):
        return (
            "",
            f"unsupported URL scheme {parts.scheme!r}: only http and https webhooks are delivered",
        )
    if not parts.hostname:
        return "", "invalid URL: no host"
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{parts.hostname}:{port or default}", None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report a 3xx as the result: following it would turn the POST into a GET without the body."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _opener() -> urllib.request.OpenerDirector:
    # No environment proxies: webhooks here are nearly always local test receivers, and an
    # HTTP_PROXY meant for package downloads would otherwise swallow POSTs to 127.0.0.1.
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def _reason(exc: BaseException) -> str:
    """A short, readable reason for a failed attempt."""
    if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException):
        exc = exc.reason
    if isinstance(exc, TimeoutError):  # socket.timeout is TimeoutError since 3.10
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve host: {exc.strerror or exc}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "connection closed without a response"
    if isinstance(exc, ConnectionResetError):
        return "connection reset"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _send(
    opener: urllib.request.OpenerDirector, job: _Job, timeout: float
) -> tuple[int | None, str | None]:
    """One POST: `(status, error)`; never raises."""
    # Replaced whatever the caller said: the body is always the JSON of a StreamResponse or Task.
    headers = {k: v for k, v in job.headers.items() if k.lower() != "content-type"}
    headers["Content-Type"] = "application/json"
    try:
        request = urllib.request.Request(job.url, data=job.body, headers=headers, method="POST")
        with opener.open(request, timeout=timeout) as response:
            return response.status, None
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code, f"HTTP {exc.code}"
    except Exception as exc:  # anything the network or a bad header throws is a failed attempt
        return None, _reason(exc)


class _Lane:
    """One worker thread and its queue; the unit that keeps a destination's POSTs in order."""

    def __init__(self, name: str, run: Callable[[queue.SimpleQueue[_Job | None]], None]) -> None:
        self.queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=run, args=(self.queue,), name=name, daemon=True)
        self.thread.start()


class Deliverer:
    """Background webhook delivery: `post()` returns at once, workers send and report.

    Each destination's POSTs are sent in enqueue order by its own daemon thread, so an unreachable
    or slow receiver only delays itself. `on_result` runs on the worker thread after each attempt;
    an exception it raises is logged and the worker carries on.
    """

    def __init__(
        self,
        on_result: Callable[[Delivery], None] | None = None,
        timeout: float = 2.0,
        *,
        max_workers: int = MAX_WORKERS,
    ) -> None:
        self._on_result = on_result
        self._timeout = timeout
        self._max_workers = max(1, max_workers)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._lanes: list[_Lane] = []
        self._by_destination: dict[str, _Lane] = {}
        self._results: list[Delivery] = []
        self._seq = 0
        self._pending = 0
        self._closed = False

    def post(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        *,
        task_id: str,
        config_id: str,
        event: str,
        on_result: Callable[[Delivery], None] | None = None,
    ) -> None:
        """Queue one POST; returns at once. `on_result` reports this one (instead of the default).

        A URL that cannot be sent to becomes a failed `Delivery`, reported like any other attempt.
        After `close()` the POST is dropped: a request racing shutdown must not fail because of it.
        """
        key, invalid = _destination(url)
        with self._lock:
            if self._closed:
                return
            self._seq += 1
            job = _Job(
                self._seq, url, body, dict(headers), task_id, config_id, event, invalid, on_result
            )
            self._pending += 1
            # Enqueued under the lock so that close()'s stop marker is always queued after it.
            self._lane_for(key).queue.put(job)

    def results(self) -> list[Delivery]:
        """Every attempt so far, in completion order (a copy)."""
        with self._lock:
            return list(self._results)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until every queued POST has been attempted and reported; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        """Stop the workers: queued POSTs are dropped, one in flight ends within about `timeout`."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            lanes = list(self._lanes)
            for lane in lanes:
                lane.queue.put(None)
        deadline = time.monotonic() + self._timeout + 1.0
        for lane in lanes:
            lane.thread.join(max(0.0, deadline - time.monotonic()))

    def _lane_for(self, key: str) -> _Lane:
        """The destination's lane, started on first use (caller holds the lock)."""
        lane = self._by_destination.get(key)
        if lane is None:
            if len(self._lanes) < self._max_workers:
                lane = _Lane(f"{THREAD_PREFIX}-{len(self._lanes) + 1}", self._work)
                self._lanes.append(lane)
            else:  # crc32, not hash(): the same destination always lands on the same lane
                lane = self._lanes[zlib.crc32(key.encode()) % len(self._lanes)]
            self._by_destination[key] = lane
        return lane

    def _work(self, jobs: queue.SimpleQueue[_Job | None]) -> None:
        """A worker's loop: attempt each job, report it; after close() drop the rest."""
        opener = _opener()  # one per thread: OpenerDirector makes no thread-safety promise
        while (job := jobs.get()) is not None:
            try:
                if not self._closed:
                    self._attempt(opener, job)
            except Exception:  # the worker must survive whatever on_result does
                log.exception("push delivery %d to %s: result handler failed", job.seq, job.url)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def _attempt(self, opener: urllib.request.OpenerDirector, job: _Job) -> None:
        status, error = (None, job.invalid) if job.invalid else _send(opener, job, self._timeout)
        delivery = Delivery(job.seq, job.url, job.task_id, job.config_id, job.event, status, error)
        with self._lock:
            self._results.append(delivery)
        report = job.on_result or self._on_result
        if report is not None:
            report(delivery)
