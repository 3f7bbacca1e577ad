"""`before_wait()`: what a thread calls before it may wait a while, so that the event loop it is
answering on (`mockagent.server.loop`) goes on in another thread meanwhile.

Who waits: a stream for its next event, a scripted delay, a send to a client that does not read.
A thread that is not answering on the loop has no hook, and the call costs a lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_local = threading.local()


def before_wait() -> None:
    """Hand this thread's event loop (if it runs one) to another thread; at most once per answer."""
    hook = getattr(_local, "hook", None)
    if hook is not None:
        _local.hook = None
        hook()


def set_hook(hook: Callable[[], None] | None) -> None:
    """What `before_wait()` calls on this thread until set again (None: nothing)."""
    _local.hook = hook
