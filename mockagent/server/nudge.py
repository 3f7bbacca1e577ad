"""A request granian's thread pool left waiting behind open streams is answered all the same:
while a worker has streams open, it sends its own health route a request every NUDGE_S.

granian (2.8) starts a worker's blocking threads as requests come: a new request starts one when
more requests wait than threads are idle. That check races a thread that has just taken the
request before it, which still counts as idle for an instant: the new request then waits with no
thread coming for it. A thread that frees up takes it, and so does the one the next request
starts; but an open stream holds its thread for as long as it lasts, so a worker whose threads
all held streams left it waiting until the next request, for ever if none came
(tests/scale/test_slow_clients.py: "stream 49 of 500 never began"; here, 3 runs in 180 of 1,000
streams, three at once, and plain granian as often). A nudge is that next request: the thread it
starts takes the oldest request waiting, and the nudge itself is answered by the next thread that
frees up or starts.

The listening socket is shared: with several workers a nudge reaches one of them, and a waiting
request is answered once a nudge reaches its worker. Drop this once granian's pool cannot miss:
in its src/blocking.rs (`BlockingRunnerPool::run`, 2.8.9), a thread's idle count drops only after
it took its request.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from mockagent.server.health import HEALTH_PATH
from mockagent.server.sockets import target_of

NUDGE_S = 1.0
"""How often a worker with streams open nudges the pool: the longest a request waits for a
thread granian did not start for it (with one worker), and how long a nudge waits for its own
answer."""
ANY = {"0.0.0.0": "127.0.0.1", "::": "::1"}
"""The loopback address to reach a socket bound to every address on."""


class Nudge:
    """Sends `address` (a listening socket's, as `getsockname()` names it) an OPTIONS request
    for its health route every `every_s` seconds while `busy()`, from a daemon thread, until
    `stop()`. OPTIONS: its 405 is answered at once, without the store's PING a GET would make."""

    def __init__(
        self, address: tuple[str, int], busy: Callable[[], bool], every_s: float = NUDGE_S
    ) -> None:
        host, port = address[:2]
        self.address = (ANY.get(host, host), port)
        self.busy = busy
        self.every_s = every_s
        self.stopped = threading.Event()

    def start(self) -> Nudge:
        threading.Thread(target=self._run, name="mockagent-nudge", daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopped.set()

    def _run(self) -> None:
        while not self.stopped.wait(self.every_s):
            if self.busy():
                self.once()

    def once(self) -> None:
        """One request; what answers it (or nothing, should it wait its turn) does not matter."""
        host = target_of(*self.address)  # an IPv6 address in brackets, as in a URL
        request = f"OPTIONS {HEALTH_PATH} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        try:
            with socket.create_connection(self.address, timeout=self.every_s) as sock:
                sock.sendall(request.encode())
                sock.recv(1)  # its answer: granian has read it (a nudge left waiting times out)
        except OSError:
            pass  # stopping, or the nudge waits its turn: the next one frees it
