"""Memory that many streams at once held goes back to the system once they are over.

A client that does not read holds some 300 KB of its stream in the server (dialects.http
WRITE_BYTES): 200 of them, +113 MB. Python frees it when they leave, but glibc's allocator keeps
the freed pages of its arenas. `malloc_trim(0)` returns them (scripts/bench_slow.py: 8 s after
they left, +68 MB was still resident without it, +31 MB with it). It walks the heap, so it runs
only when a worker's streamed answers have all ended after at least TRIM_AFTER of them were open
at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
from collections.abc import Callable

TRIM_AFTER = 32
"""Streamed answers open at once, past which their end trims the heap."""
TRIM_DELAYS_S = (1.0, 7.0)
"""When, after the last of them ended, the heap is trimmed: once the server has freed its
buffers of their connections, and once the threads they used have ended (granian's blocking
threads and the body readers end after 5 s idle)."""


def _malloc_trim() -> Callable[[], None] | None:
    """glibc's malloc_trim(0), or None where there is none (macOS, musl, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)  # ctypes lets go of the GIL for the call


class Trimmer:
    """Counts a worker's open streamed answers; when they have all ended after TRIM_AFTER or
    more were open at once, gives the freed heap back TRIM_DELAYS_S later (`ended` returns
    whether it will)."""

    def __init__(
        self, trim: Callable[[], None] | None = None, delays: tuple[float, ...] = TRIM_DELAYS_S
    ) -> None:
        self._trim = trim if trim is not None else _malloc_trim()
        self._delays = delays
        self.peak = 0

    def opened(self, now_open: int) -> None:
        """A streamed answer began; `now_open` are open now."""
        self.peak = max(self.peak, now_open)

    def ended(self, now_open: int) -> bool:
        """A streamed answer ended; `now_open` are still open."""
        if now_open > 0 or self.peak < TRIM_AFTER or self._trim is None:
            return False
        self.peak = 0
        # Later, not now: the server frees its own buffers of those connections (granian's, in
        # Rust) once they are closed, after the app's part of the answer has ended, and an
        # idle thread's memory goes when the thread ends.
        for delay in self._delays:
            timer = threading.Timer(delay, self._trim)
            timer.daemon = True
            timer.start()
        return True
