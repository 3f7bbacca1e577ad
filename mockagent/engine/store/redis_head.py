"""The shared store's counters in Redis (`head`, a hash): the id counter, the virtual clock's
offset, advance and origin, the number of tasks made and the reset generation, as text.
"""

from __future__ import annotations

from mockagent.engine.store.client import Client
from mockagent.engine.store.memory import Counters
from mockagent.errors import StoreError

Head = dict[str, str]


def head_of(counters: Counters, made: int, generation: int | None = None) -> Head:
    """The counters as `counters` hold them (`generation`: another than theirs)."""
    offset, advanced, origin = counters.clock.state()
    return {
        "ids": str(counters.ids.count),
        "offset": repr(offset),
        "advanced": repr(advanced),
        "origin": repr(origin),
        "made": str(made),
        "generation": str(counters.generation if generation is None else generation),
    }


def read_head(client: Client, key: str, mine: Head) -> Head:
    """The counters in Redis at `key`; `mine` when there are none (a Redis that lost its data),
    set only where still missing: the first process to do so sets them for all."""
    head = fields(client.call("HGETALL", key))
    if not head:
        missing = [("HSETNX", key, k, v) for k, v in mine.items()]
        *_, flat = client.pipeline(*missing, ("HGETALL", key))
        head = fields(flat)
    return head


def parsed(head: Head, where: str) -> tuple[float, float, float, int, int, int]:
    """(offset, advanced, origin, ids, generation, made); StoreError naming `where` for a head
    this version cannot read."""
    try:
        offset, advanced, origin = (float(head[k]) for k in ("offset", "advanced", "origin"))
        ids, generation, made = (int(head[k]) for k in ("ids", "generation", "made"))
    except (KeyError, ValueError) as exc:  # another version's keys, or another program's
        raise StoreError(
            f"{where} holds counters this mockagent cannot read ({exc!r}): keys of another "
            "version? Start one host without --join, which wipes them"
        ) from None
    return offset, advanced, origin, ids, generation, made


def fields(flat: list[str]) -> Head:
    """A hash as HGETALL gives it, flat, as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def flat(head: Head) -> list[str]:
    """A hash as HSET takes it."""
    return [item for pair in head.items() for item in pair]
