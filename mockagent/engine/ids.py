"""The id factory: uuid5 from the cassette's seed and a counter, so ids repeat run after run."""

from __future__ import annotations

import uuid


class IdFactory:
    """Mints ids `uuid5(namespace(seed), n)` for n = 1, 2, …"""

    def __init__(self, seed: str) -> None:
        self._namespace = uuid.uuid5(uuid.NAMESPACE_URL, f"mockagent:{seed}")
        self.count = 0  # a shared store saves and restores it

    def new(self) -> str:
        """The next id."""
        self.count += 1
        return str(uuid.uuid5(self._namespace, str(self.count)))
