"""Delivery results: what became of each webhook POST, and the bounded log the journal keeps."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

RESULTS_KEPT = 1000
"""Results a DeliveryLog keeps; older ones are counted as dropped."""


@dataclass(frozen=True)
class Delivery:
    """The result of one delivery attempt (or of a POST refused or dropped), for the journal."""

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


class DeliveryLog:
    """The last `size` deliveries, oldest first, and how many older ones were let go."""

    def __init__(self, size: int = RESULTS_KEPT) -> None:
        self._kept: deque[Delivery] = deque(maxlen=max(1, size))
        self.dropped = 0

    def append(self, delivery: Delivery) -> None:
        if len(self._kept) == self._kept.maxlen:
            self.dropped += 1
        self._kept.append(delivery)

    def __iter__(self) -> Iterator[Delivery]:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)


class Bodies:
    """The bodies of queued POSTs and their bytes, each body counted once however many POSTs
    share it (one event's body goes to each of a task's webhooks); not thread-safe."""

    def __init__(self, budget: int) -> None:
        self.budget = max(1, budget)
        self.held = 0  # bytes
        self._bodies: dict[int, list[int]] = {}  # id(body) → [its bytes, POSTs holding it]

    def hold(self, body: bytes) -> bool:
        """Count one more POST of `body`; False (nothing counted) when it would take the bytes
        past the budget. A body alone is always taken, whatever its size."""
        entry = self._bodies.get(id(body))
        if entry is not None:  # the POSTs holding it keep it alive, so its id is its own
            entry[1] += 1
            return True
        if self.held and self.held + len(body) > self.budget:
            return False
        self._bodies[id(body)] = [len(body), 1]
        self.held += len(body)
        return True

    def release(self, body: bytes) -> None:
        """One POST of `body` was sent or dropped."""
        entry = self._bodies[id(body)]
        entry[1] -= 1
        if not entry[1]:
            del self._bodies[id(body)]
            self.held -= entry[0]
