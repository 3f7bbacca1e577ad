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
