"""The id factory: uuid5 from the cassette's seed and a counter, so ids repeat run after run."""

from __future__ import annotations

import hashlib
import re
import uuid

MINTED = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}|[0-9a-fA-F]{16,}")
"""What looks like a minted id (a uuid, a long hex): an agent's own, which a recording re-mints
and a comparison does not count as a difference."""


class IdFactory:
    """Mints ids `uuid5(namespace(seed), n)` for n = 1, 2, …"""

    def __init__(self, seed: str) -> None:
        self._namespace = uuid.uuid5(uuid.NAMESPACE_URL, f"mockagent:{seed}").bytes
        self.count = 0  # a shared store saves and restores it

    def new(self) -> str:
        """The next id: what `str(uuid.uuid5(namespace, str(n)))` gives, without building a UUID
        object (two ids per replayed call made uuid5 a tenth of its cost)."""
        self.count += 1
        digest = bytearray(hashlib.sha1(self._namespace + str(self.count).encode()).digest()[:16])
        digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
        digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
        text = digest.hex()
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
