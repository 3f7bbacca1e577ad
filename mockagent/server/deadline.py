"""A request body read with a deadline: a client that sends its headers and then trickles (or
stops sending) its body is answered 408 (`Connection: close`) when the deadline passes.

Neither server has a body deadline of its own: granian's `wsgi.input.read()` waits in Rust until
the bytes come or the connection ends (its one timeout, `http1_header_read_timeout`, is for the
head), and werkzeug's socket has no timeout. A blocked read cannot be interrupted, so the read
runs in a reader thread while the serving thread waits for it, at most the deadline. Then the
408 is sent, and its answer lasts until the read ends (`BodyTimeout.answer_then_wait`): a client
that leaves on its 408 frees both threads; one that stays holds them until it leaves, while the
other serving threads (`serve --threads`, 1024 by default) answer fresh calls.

Readers are kept a while and reused (`ReaderPool`): a thread started per request cost ~70 µs, a kept
one ~7 µs (scripts/bench_slow.py measures what the deadline costs a call). A request without a
body (a GET) is read without one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

BODY_TIMEOUT_S = 10.0
"""Default deadline of a request body read, in seconds (`serve --body-timeout`)."""
READER_IDLE_S = 5.0
"""How long a reader thread waits for its next read before it ends (granian's blocking threads
end after 5 s idle too): a burst of uploads leaves no threads behind."""
WAITS_FOR_READ = "mockagent.waits_for_read"
"""The WSGI environ key set on a request whose 408 answer waits for its body's read to end: not
an answer a stop waits for (`serve` stops without waiting for a client that stalled)."""
T = TypeVar("T")


class BodyTimeout(Exception):
    """The request body did not arrive in time; its reader may still be waiting for it."""

    def __init__(self, timeout: float, read_ended: Callable[[], object] = lambda: None) -> None:
        super().__init__(f"The request body did not arrive within {timeout:g} s")
        self.timeout = timeout
        self._read_ended = read_ended  # returns once the reader's read is over

    def answer_then_wait(self, body: bytes) -> Iterator[bytes]:
        """The 408's `body`, streamed: once it is sent, wait for the read to end before the
        answer does. On granian, an answer that ends while a read of its body still waits
        deadlocks the worker (a runtime thread then waits for the GIL that the reader holds;
        seen with granian 2.8). The answer says `Connection: close`: a client that got it and
        leaves ends the read, and one that stays holds this one thread until it leaves (the
        other --threads keep answering)."""
        yield body
        self._read_ended()


class _Job(Generic[T]):
    """One read handed to a reader: what to run, and its result once `done` is released."""

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self.done = threading.Lock()
        self.done.acquire()
        self.value: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        """Run the work, keeping its result or exception (`done` is for the reader to
        release)."""
        try:
            self.value = self.work()
        except BaseException as exc:  # the caller re-raises it in its own thread
            self.error = exc


class _Reader:
    """A daemon thread that runs one job at a time, then offers itself to its pool again.

    Daemon, and not concurrent.futures' executor: the executor joins its threads at exit, and a
    reader blocked on a client that never sends would then hold the process open forever.
    """

    def __init__(self, pool: ReaderPool) -> None:
        self.pool = pool
        self.go = threading.Lock()
        self.go.acquire()
        self.job: _Job[object] | None = None
        threading.Thread(target=self._loop, name="mockagent-body-reader", daemon=True).start()

    def _loop(self) -> None:
        while True:
            if not self.go.acquire(timeout=READER_IDLE_S):
                if self.pool.retire(self):
                    return
                self.go.acquire()  # a read took this reader as it retired: its job is coming
            job, self.job = self.job, None
            if job is None:
                continue
            job.run()
            # Idle again before the caller learns the result: its next read takes this reader,
            # not a new thread.
            with self.pool.lock:
                self.pool.idle.append(self)
            job.done.release()


class ReaderPool:
    """Reader threads, started as needed and ended after READER_IDLE_S idle: each read takes
    an idle one, or a new one when all are busy (a stalled upload keeps its reader until its
    client sends or leaves). Their number is bounded by the connections the server holds at
    once: a reader only outlives its request while that request's connection is open."""

    def __init__(self) -> None:
        self.idle: list[_Reader] = []
        self.lock = threading.Lock()  # over `idle`

    def forget(self) -> None:
        """No readers (in a forked child: its parent's threads are not there)."""
        self.idle = []
        self.lock = threading.Lock()

    def retire(self, reader: _Reader) -> bool:
        """Whether `reader`, idle for READER_IDLE_S, may end: not when a read took it
        meanwhile."""
        with self.lock:
            if reader in self.idle:
                self.idle.remove(reader)
                return True
        return False

    def read(self, work: Callable[[], T], timeout: float) -> T:
        """`work()`'s result (or exception), run in a reader thread; BodyTimeout when it takes
        longer than `timeout` seconds."""
        job: _Job[T] = _Job(work)
        with self.lock:
            reader = self.idle.pop() if self.idle else None
        if reader is None:
            reader = _Reader(self)
        reader.job = job  # type: ignore[assignment]
        reader.go.release()
        if not job.done.acquire(timeout=timeout):
            raise BodyTimeout(timeout, job.done.acquire)
        if job.error is not None:
            raise job.error
        return job.value  # type: ignore[return-value]


_pool = ReaderPool()
if hasattr(os, "register_at_fork"):  # a forked worker has none of its parent's threads
    os.register_at_fork(after_in_child=_pool.forget)


def read_within(work: Callable[[], T], timeout: float | None) -> T:
    """`work()` (a body read), at most `timeout` seconds (None: no deadline, read right here);
    BodyTimeout when the deadline passes first."""
    if timeout is None:
        return work()
    return _pool.read(work, timeout)
