"""A stop signal that comes as serve's main thread enters its wait still stops serve.

granian's signal handler set its main loop's Event on the main thread, where the handler runs:
a SIGTERM that landed while that thread held the Event's lock (entering `wait`, right after the
ready line) deadlocked, and `serve` never ended (a fresh-clone CI run hung in `.ci/run`'s
`scripts/serve` check, which stops serve as soon as it is ready).
"""

from __future__ import annotations

import threading

import pytest

from mockagent.server.host import _OnOurSocket


@pytest.mark.parametrize("handler", ["signal_handler_interrupt", "signal_handler_reload"])
def test_the_handler_does_not_wait_for_the_lock_its_own_thread_holds(handler: str) -> None:
    server = object.__new__(_OnOurSocket)  # only the loop's Event is needed
    server.main_loop_interrupt = threading.Event()
    event = server.main_loop_interrupt
    returned = threading.Event()

    def main_thread_entering_its_wait() -> None:
        with event._cond:  # type: ignore[attr-defined]  # held as Event.wait holds it on entry
            getattr(server, handler)()  # the signal's handler runs here, in the same thread
            returned.set()

    threading.Thread(target=main_thread_entering_its_wait, daemon=True).start()
    assert returned.wait(5), "the handler waited for a lock its own thread holds"
    assert event.wait(5)  # set once the lock is free
