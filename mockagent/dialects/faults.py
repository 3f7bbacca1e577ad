"""A scripted fault's wait, the same in every dialect. What else a fault does, and whether it
applies at all, the engine decides (`mockagent.engine.faults`): a stream applies it through
`Stream.faulted`, a status comes as `HttpFault`."""

from __future__ import annotations

import asyncio
import time

from mockagent.cassette.models import Fault


def delay(fault: Fault | None) -> None:
    """A scripted wait before answering; outside the engine's lock, so others go on."""
    if fault is not None and fault.delayMs:
        time.sleep(fault.delayMs / 1000)


async def adelay(fault: Fault | None) -> None:
    """`delay` on an event loop: the loop goes on with other calls meanwhile."""
    if fault is not None and fault.delayMs:
        await asyncio.sleep(fault.delayMs / 1000)
