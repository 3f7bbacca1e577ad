"""Push-notification delivery: webhook POSTs on background threads, never blocking the caller.

A2A push delivery (reference/a2a.md §6 "Push") must never hold up a response: the TCK's CRUD tests
register webhooks at unreachable URLs, and a slow receiver must not slow another. So `post()` only
queues the request. Each destination (scheme, host, port) with POSTs waiting has its own daemon
thread, which sends them in order, one attempt each within a total deadline, and ends when its
queue is empty; so a slow or dead receiver holds only its own thread. Queues are bounded (by
count, and all of them together by bytes too), and so is the number of destinations busy at once:
what does not fit is dropped and reported. Every attempt, refusal and drop is reported as a
`Delivery` through `on_result` (the journal).
Where a webhook may go is the `WebhookPolicy`'s to say (webhook_policy.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from mockagent.engine.webhooks import send as webhook_send
from mockagent.engine.webhooks.delivery_log import RESULTS_KEPT, Bodies, Delivery, DeliveryLog
from mockagent.engine.webhooks.policy import Resolver, WebhookPolicy, system_resolver

log = logging.getLogger(__name__)

DEADLINE_S = 5.0
"""Longest a delivery may take, from connecting to reading the whole reply."""
QUEUE_SIZE = 1000
"""POSTs that may wait for one destination; more are dropped (and reported). A task streaming a
few hundred instant events to a healthy receiver fits."""
MAX_QUEUED = 10_000
"""POSTs that may wait, over every destination; more are dropped (and reported)."""
MAX_QUEUED_BYTES = 64 * 2**20
"""Bytes of bodies that may wait, over every destination (a v0.3 task's body is the whole task
JSON, messages included); more are dropped (and reported). A body posted to several webhooks is
counted once."""
MAX_DESTINATIONS = 256
"""Destinations with POSTs in flight or waiting, each with its own thread; a new one past this is
dropped (and reported)."""
THREAD_PREFIX = "mockagent-push"
CLOSED = "dropped: the agent was closed (replaced or stopped) before this POST was sent"
"""The error a POST queued (or posted) when its deliverer closes is reported with."""


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


class Deliverer:
    """Background webhook delivery: `post()` returns at once, workers send and report.

    Each destination's POSTs are sent in enqueue order by its own daemon thread, so an unreachable
    or slow receiver only delays itself. `on_result` runs on the worker thread after each attempt
    (and in `post()` for a dropped POST); an exception it raises is logged and the worker carries
    on. `timeout` is each delivery's total deadline; `policy` says where webhooks may go.
    """

    def __init__(
        self,
        on_result: Callable[[Delivery], None] | None = None,
        timeout: float = DEADLINE_S,
        *,
        policy: WebhookPolicy | None = None,
        resolver: Resolver = system_resolver,
        queue_size: int = QUEUE_SIZE,
        max_destinations: int = MAX_DESTINATIONS,
        max_queued: int = MAX_QUEUED,
        max_queued_bytes: int = MAX_QUEUED_BYTES,
        results_kept: int = RESULTS_KEPT,
    ) -> None:
        self._on_result = on_result
        self._timeout = timeout
        self._policy = policy or WebhookPolicy()
        self._resolver = resolver
        self._queue_size = max(1, queue_size)
        self._max_destinations = max(1, max_destinations)
        self._max_queued = max(1, max_queued)
        self._bodies = Bodies(max_queued_bytes)  # the bodies of the POSTs waiting or in flight
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._lanes: dict[str, deque[_Job]] = {}  # busy destinations only
        self._threads: set[threading.Thread] = set()
        self._results = DeliveryLog(results_kept)
        self._client: httpx.Client | None = None
        self._refused: set[str] = set()  # destinations refused so far (logged once each)
        self._seq = self._pending = self._started = 0
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

        A URL that cannot be sent to becomes a failed `Delivery`, reported like any other attempt;
        a POST that finds its destination's queue full, or too many destinations busy, is reported
        as dropped; so is one posted after `close()` (a request racing shutdown does not fail).
        """
        key, invalid = _destination(url)
        with self._lock:
            self._seq += 1
            job = _Job(
                self._seq, url, body, dict(headers), task_id, config_id, event, invalid, on_result
            )
            dropped = CLOSED if self._closed else self._enqueue(key, job)
        if dropped:
            self._report(job, None, dropped)

    def _enqueue(self, key: str, job: _Job) -> str | None:
        """Queue `job` on its destination's lane, starting the lane's thread; or say why it is
        dropped (caller holds the lock)."""
        lane = self._lanes.get(key)
        if self._pending >= self._max_queued:
            return (
                f"dropped: {self._max_queued} deliveries are already waiting "
                "(slow or dead receivers)"
            )
        if lane is None and len(self._lanes) >= self._max_destinations:
            return (
                f"dropped: {self._max_destinations} other webhook destinations are busy "
                "(slow or dead receivers)"
            )
        if lane is not None and len(lane) >= self._queue_size:
            return (
                f"dropped: {self._queue_size} deliveries to {key} are already waiting "
                "(the receiver is slow or down)"
            )
        if not self._bodies.hold(job.body):
            return (
                f"dropped: {self._bodies.held:,} bytes of deliveries are already waiting, and "
                f"this body of {len(job.body):,} bytes would go past {self._bodies.budget:,} "
                "(slow or dead receivers)"
            )
        self._pending += 1
        if lane is not None:
            lane.append(job)
            return None
        lane = self._lanes[key] = deque([job])
        self._started += 1
        thread = threading.Thread(
            target=self._work,
            args=(key, lane),
            name=f"{THREAD_PREFIX}-{self._started}",
            daemon=True,
        )
        self._threads.add(thread)
        thread.start()
        return None

    @property
    def policy(self) -> WebhookPolicy:
        """Where this deliverer's webhooks may go."""
        return self._policy

    def results(self) -> list[Delivery]:
        """The last results (up to `results_kept`), in completion order (a copy)."""
        with self._lock:
            return list(self._results)

    @property
    def results_dropped(self) -> int:
        """How many older results `results()` no longer holds."""
        with self._lock:
            return self._results.dropped

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until every queued POST has been attempted and reported; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        """Stop the workers: queued POSTs are dropped (each reported, as CLOSED), one in flight
        ends within `timeout`."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = list(self._threads)
        deadline = time.monotonic() + self._timeout + 1.0
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _work(self, key: str, lane: deque[_Job]) -> None:
        """A destination's thread: attempt each job in order; end when none is left (or after
        close(), reporting the rest as dropped: at most a lane's queue size)."""
        while True:
            with self._idle:
                if self._closed or not lane:
                    left = list(lane)
                    self._pending -= len(lane)
                    for dropped in left:
                        self._bodies.release(dropped.body)
                    lane.clear()
                    del self._lanes[key]
                    self._threads.discard(threading.current_thread())
                    self._idle.notify_all()
                    break
                job = lane.popleft()
            try:
                self._attempt(key, job)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._bodies.release(job.body)
                    self._idle.notify_all()
        for job in left:  # outside the lock: reporting takes it
            self._report(job, None, CLOSED)

    def _attempt(self, key: str, job: _Job) -> None:
        status: int | None = None
        error: str | None = job.invalid
        if error is None:
            status, error = webhook_send.post(
                self._http(),
                job.url,
                job.body,
                job.headers,
                deadline_s=self._timeout,
                policy=self._policy,
                resolver=self._resolver,
            )
        if error is not None and error.startswith("refused:") and self._first_refusal(key):
            log.warning("mockagent: webhook to %s %s", job.url, error)
        self._report(job, status, error)

    def _first_refusal(self, key: str) -> bool:
        """True the first time `key` is refused: the log says so once, the journal each time."""
        with self._lock:
            first = key not in self._refused and len(self._refused) < RESULTS_KEPT
            if first:
                self._refused.add(key)
            return first

    def _http(self) -> httpx.Client:
        with self._lock:  # made on first use: most agents never send a webhook
            if self._client is None:
                self._client = webhook_send.new_client()
            return self._client

    def _report(self, job: _Job, status: int | None, error: str | None) -> None:
        delivery = Delivery(job.seq, job.url, job.task_id, job.config_id, job.event, status, error)
        with self._lock:
            self._results.append(delivery)
        report = job.on_result or self._on_result
        try:
            if report is not None:
                report(delivery)
        except Exception:  # the worker (or the caller of post()) must survive the reporter
            log.exception("push delivery %d to %s: result handler failed", job.seq, job.url)
