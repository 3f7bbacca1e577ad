"""A stream read beside grpc.aio's event loop: its items on the loop while they are there, and
in a thread when the next may have to wait."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Executor, Future
from typing import Any

from mockagent.engine.stream import Stream

END = object()
"""What `Reader.next` returns once the stream has ended."""


class Reader:
    """A stream's `items` (its `first` answers, then its events), each read on the event loop
    while it is there at once (the first answers, the rest of a batch of events) and on one of
    `threads` when it may have to wait (a paced gap, a subscription waiting for news); every one
    in a thread when `waits` says any may (a fault's delay and counting)."""

    def __init__(
        self, items: Iterator[Any], stream: Stream, first: int, threads: Executor, waits: bool
    ) -> None:
        self._items, self._stream, self._first = items, stream, first
        self._threads, self._waits = threads, waits
        self._pending: Future[Any] | None = None

    async def next(self) -> Any:
        """The next item, or END."""
        self._first -= 1
        if not self._waits and (self._first >= 0 or self._stream.ready()):
            return next(self._items, END)
        self._pending = self._threads.submit(next, self._items, END)
        item = await asyncio.wrap_future(self._pending)
        self._pending = None
        return item

    def close(self) -> None:
        """Stop reading: at once, or once a read under way in a thread returns (a client that
        left cancels its call while the stream waits there, and a running generator cannot be
        closed)."""
        pending, self._pending = self._pending, None
        close = getattr(self._items, "close", None)
        if close is None:
            return
        if pending is None:
            close()
        else:
            pending.add_done_callback(lambda _: close())
