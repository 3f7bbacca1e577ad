"""Scripted faults, the same in every dialect: a delay, a dropped stream, an error mid-stream."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator
from typing import Any

from mockagent import errors
from mockagent.cassette.models import Fault
from mockagent.engine.stream import KEEPALIVE


def delay(fault: Fault | None) -> None:
    """A scripted wait before answering; outside the engine's lock, so others go on."""
    if fault is not None and fault.delayMs:
        time.sleep(fault.delayMs / 1000)


async def adelay(fault: Fault | None) -> None:
    """`delay` on an event loop: the loop goes on with other calls meanwhile."""
    if fault is not None and fault.delayMs:
        await asyncio.sleep(fault.delayMs / 1000)


def scripted_error(fault: Fault) -> errors.ProtocolError:
    """The error an `errorAfter` fault sends (Internal unless the fault names one)."""
    if fault.error is None:
        return errors.InternalError("mockagent: scripted error mid-stream")
    return errors.scripted(fault.error.name, fault.error.message, fault.error.details)


def faulty(items: Iterable[Any], fault: Fault | None) -> Iterator[Any]:
    """A stream's items with its fault applied: first the delay; after `dropAfter` items the
    connection drops (DropConnection); after `errorAfter` items the scripted ProtocolError is the
    last item, also when the stream would end there; after `closeAfter` items the stream
    ends. Keep-alive ticks pass through and are not counted."""
    return iter(items) if fault is None else _faulted(items, fault)  # nearly every stream: no layer


def _faulted(items: Iterable[Any], fault: Fault) -> Iterator[Any]:
    delay(fault)  # before the first byte: the client waits for the headers too
    sent = 0
    for item in items:
        if item is not KEEPALIVE:
            if fault.dropAfter is not None and sent >= fault.dropAfter:
                raise errors.DropConnection(f"scripted drop after {sent} events")
            if fault.errorAfter is not None and sent >= fault.errorAfter:
                yield scripted_error(fault)
                return
            if fault.closeAfter is not None and sent >= fault.closeAfter:
                return  # a recorded upstream that ended the stream there
        yield item
        if item is not KEEPALIVE:
            sent += 1
        if fault.closeAfter is not None and sent >= fault.closeAfter:
            return  # at once: the next event may never come
    # A stream that ends right at its fault still has it: a recorded cut-off stream ends with
    # the last event the client got, and the connection dropped (or the error came) after it.
    if fault.dropAfter is not None and sent == fault.dropAfter:
        raise errors.DropConnection(f"scripted drop after {sent} events")
    if fault.errorAfter is not None and sent == fault.errorAfter:
        yield scripted_error(fault)
