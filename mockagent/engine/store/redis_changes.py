"""Which tasks other processes wrote, told by Redis pub/sub, so that an open stream reads its task
from the store only when it changed.

The script that writes a call publishes the ids of the tasks it wrote on the store's channel. One
subscription per store and process (started by the first stream that asks) counts them by task
and wakes the process's streams. Pub/sub is fire-and-forget: a note lost while the connection was
down is made up for by each stream reading its task at least every `FALLBACK_S` all the same.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import redis

FALLBACK_S = 1.0
"""How often a stream reads its task although no note came (one may have been lost)."""
KEPT = 10_000
"""Tasks whose count of writes is kept; a stream whose task was forgotten reads it once more."""

log = logging.getLogger("mockagent")


class Changes:
    """How often each task was written, as `channel` on the store of `pool` tells, and `wake`
    (set by the engine) called on every note."""

    def __init__(self, pool: redis.ConnectionPool, channel: str) -> None:
        self._pool = pool
        self._channel = channel
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._listening: int | None = None  # the pid of the process whose subscription runs
        self._retry_at = 0.0  # when to try to subscribe again after a failure (monotonic)
        self.wake: Callable[[], None] = lambda: None

    def count(self, task_id: str) -> int:
        """How many notes of `task_id` came so far (starting the subscription on first use)."""
        if self._listening != os.getpid():
            self._listen()
        with self._lock:
            return self._counts.get(task_id, 0)

    def _listen(self) -> None:
        with self._lock:
            if self._listening == os.getpid() or time.monotonic() < self._retry_at:
                return
            client = redis.Redis(connection_pool=self._pool)
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(**{self._channel: self._noted})
            except redis.exceptions.RedisError as exc:  # Redis down: streams read their tasks
                pubsub.close()  # every FALLBACK_S, and ask again as often
                self._retry_at = time.monotonic() + FALLBACK_S
                log.debug("mockagent: the store's change notes did not start: %s", exc)
                return
            pubsub.run_in_thread(sleep_time=FALLBACK_S, daemon=True, exception_handler=_lost)
            self._listening = os.getpid()

    def _noted(self, message: dict[str, Any]) -> None:
        with self._lock:
            for task_id in str(message["data"]).split():
                self._counts[task_id] = self._counts.pop(task_id, 0) + 1
            while len(self._counts) > KEPT:
                self._counts.popitem(last=False)
        self.wake()


def _lost(exc: BaseException, pubsub: Any, thread: Any) -> None:
    """The subscription's connection failed (Redis restarting, say): redis-py subscribes again
    on its next read; streams read their tasks every FALLBACK_S meanwhile."""
    log.debug("mockagent: the store's change notes stopped: %s", exc)
    time.sleep(FALLBACK_S)  # a back-off, not a wait for a condition: Redis may stay down a while
