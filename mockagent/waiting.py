"""How the event loop (`mockagent.server.loop`), the server's answers and what runs in them talk.

`before_wait()`: what a thread calls before it may wait a while (a stream waiting for its next
event, a scripted delay, the proxy waiting for its upstream, a send to a client that does not
read). What the answer has written goes out first (`hold_back`), and the loop the thread is
answering on goes on in another thread meanwhile. Elsewhere the call costs two lookups.

`more_to_come()` and `at_rest()`: a shared store keeps its lock across the calls the loop has
ready at once, and lets go when the loop has nothing more to answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("mockagent")
_local = threading.local()


def before_wait() -> None:
    """Send what this thread's answer holds back, then hand its event loop (if it runs one) to
    another thread; the hand-off at most once per answer."""
    flush()
    hook = getattr(_local, "hook", None)
    if hook is not None:
        _local.hook, _local.more = None, False  # this thread is no longer the loop's
        hook()


def flush() -> None:
    """Send what this thread's answer holds back (`hold_back`). A send may wait for a slow
    client: call it holding no lock that others need (a stream does, before its condition)."""
    send = getattr(_local, "flush", None)
    if send is not None:
        _local.flush = None
        send()


def set_hook(hook: Callable[[], None] | None, more: bool = False) -> None:
    """What `before_wait()` calls on this thread until set again (None: nothing), and whether
    the loop has more calls ready after this one."""
    _local.hook = hook
    _local.more = more


def hold_back(flush: Callable[[], None] | None) -> None:
    """`flush` sends what the answer on this thread has written and not sent yet (None: nothing).
    A streamed answer holds its pieces back until it ends or waits, so that one that is all
    there goes out in one write with its end."""
    _local.flush = flush


def more_to_come() -> bool:
    """Whether this thread is an event loop's with more calls ready after the current one."""
    return getattr(_local, "more", False)


_resting: dict[Callable[[], None], None] = {}  # every loop's: whichever rests first calls them


def at_rest(callback: Callable[[], None]) -> None:
    """Call `callback` once, when an event loop has answered every call it had ready."""
    _resting[callback] = None


def rest() -> None:
    """Called by an event loop before it waits for more calls."""
    while _resting:
        try:
            callback, _ = (
                _resting.popitem()
            )  # one step: another loop may be resting at the same time
        except KeyError:  # it took the last one
            return
        try:
            callback()
        except Exception:  # a store that cannot save now says so at its next call; the loop goes on
            log.exception("mockagent: letting go of a shared store failed")
