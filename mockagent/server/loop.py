"""The event loop of `HttpServer(loop=True)`: one thread reads every idle connection and answers
each request there and then.

With a thread per connection every call hands the GIL from thread to thread (each recv and send
lets another thread in, and 16 connections keep 16 threads waking); here one thread waits on all
connections at once (epoll, kqueue) and answers in turn with no hand-off (`scripts/bench` has
both: bench/README.md).

The app must not wait on the loop: every other connection would wait with it. So whatever may
wait (a stream for its next event, a scripted delay, a send to a client that does not read)
calls `mockagent.waiting.before_wait()` first: the loop goes on in a new thread, and the thread
that waits keeps the connection, served as with a thread per connection until it closes. A
request the loop does not take whole (a chunked or large body, `Expect: 100-continue`, a head
in bare LFs) goes to a thread of its own the same way.
"""

from __future__ import annotations

import io
import logging
import re
import selectors
import signal
import socket
import threading
import time
from typing import Any

from mockagent import waiting
from mockagent.server.exchange import Exchange

log = logging.getLogger("mockagent")
INLINE_MAX = (
    65536  # bytes of one request (head and body) the loop takes; a longer one goes to a thread
)
LENGTH = re.compile(rb"\ncontent-length:[ \t]*(\d{1,9})[ \t]*\r?(?:\n|\Z)")


STOPS = {signal.SIGINT, signal.SIGTERM}


def deaf_to_stops() -> None:
    """Leave Ctrl-C and SIGTERM to the main thread. The kernel gives a signal to any thread that
    does not block it, and Python runs the handler in the main thread only when that thread wakes
    up: one blocked in a wait (serve_forever) would not, and the stop would be lost."""
    if (
        hasattr(signal, "pthread_sigmask")
        and threading.current_thread() is not threading.main_thread()
    ):
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)


class _Conn:
    __slots__ = ("sock", "address", "base", "buf", "searched", "last", "detached", "slot")

    def __init__(self, sock: socket.socket, address: Any, base: dict[str, str], now: float) -> None:
        self.sock, self.address, self.base = sock, address, base
        self.buf = b""  # read and not yet answered
        self.searched = 0  # where in `buf` to look on for the end of a head
        self.last = now  # when the client last sent something
        self.detached = False  # its answer went off to wait in its own thread
        self.slot = False  # ... holding one of the server's slots (`threads`)


class _Inline:
    """The connection as an answer on the loop sees it: what would wait hands the loop on first."""

    __slots__ = ("sock",)

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def sendall(self, data: bytes) -> None:
        try:
            sent = self.sock.send(data, socket.MSG_DONTWAIT)
        except BlockingIOError:
            sent = 0
        if sent < len(data):  # the client reads slowly, or the answer is big
            waiting.before_wait()
            self.sock.sendall(memoryview(data)[sent:])

    def recv(self, size: int) -> bytes:
        waiting.before_wait()  # lingering for the rest of a body on a closing connection
        return self.sock.recv(size)

    def shutdown(self, how: int) -> None:
        self.sock.shutdown(how)

    def settimeout(self, seconds: float | None) -> None:
        self.sock.settimeout(seconds)


def whole(buf: bytes, start: int = 0) -> tuple[int, int]:
    """(size, start): the size of the first request in `buf` if all of it is there, 0 while more
    must come, -1 when the loop does not take it (a thread reads it as it comes); and where the
    next look for the end of its head may start (a head trickling in is not searched again and
    again from its first byte)."""
    end = buf.find(b"\r\n\r\n", start)
    if end < 0:
        done = b"\n\n" in buf[max(0, start - 1) :] or len(buf) > INLINE_MAX
        return -1 if done else 0, max(0, len(buf) - 3)
    head = buf[: end + 2].lower()
    if b"\ntransfer-encoding:" in head or b"\nexpect:" in head:
        return -1, start
    lengths = LENGTH.findall(head)
    if len(lengths) != head.count(b"\ncontent-length:") or len(lengths) > 1:
        return -1, start  # malformed or repeated: the thread's reader refuses it properly
    size = end + 4 + (int(lengths[0]) if lengths else 0)
    if size > INLINE_MAX:
        return -1, start
    return size if len(buf) >= size else 0, start


class Loop:
    """Accepts and answers on one thread at a time; see the module's docstring."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        server.socket.setblocking(False)  # worker processes race for each connection on one socket
        self.selector.register(server.socket, selectors.EVENT_READ)
        self.selector.register(self._wake_r, selectors.EVENT_READ)
        self._owner: threading.Thread | None = None
        self._conns: dict[socket.socket, _Conn] = {}
        self._current: _Conn | None = None  # the connection being answered
        self._more = False  # other connections had something to read when it was

    def start(self) -> None:
        """Run the loop in a new thread: the first, or the next when the one before went off to
        wait."""
        thread = threading.Thread(target=self._run, name=self.server.thread_name(), daemon=True)
        self._owner = thread
        thread.start()

    def wake(self) -> None:
        """Make the loop look at the server again (it is stopping)."""
        try:
            self._wake_w.send(b"!")
        except OSError:
            pass

    def _run(self) -> None:
        deaf_to_stops()
        me = threading.current_thread()
        server = self.server
        every = min(1.0, server.idle_timeout / 2)
        sweep = time.monotonic() + every
        while self._owner is me and not server.closing:
            waiting.rest()
            ready = self.selector.select(every)
            now = time.monotonic()
            last = len(ready) - 1
            for i, (key, _) in enumerate(ready):
                self._more = i < last
                if key.fileobj is server.socket:
                    self._accept(now)
                elif key.fileobj is self._wake_r:
                    self._wake_r.recv(64)
                else:
                    try:
                        if self._read(
                            key.data, now
                        ):  # this thread handed the loop on and served its connection
                            return
                    except (
                        Exception
                    ):  # a bug of ours: that connection goes, every other one stays served
                        log.exception("mockagent: the event loop failed on a connection")
                        conn = key.data
                        if conn.detached:  # and the loop is another thread's now
                            self._go_on_alone(conn, keep=False)
                            return
                        if conn.sock in self._conns:
                            self._drop(conn)
            if now >= sweep:
                self._sweep(now)
                sweep = now + every
        if self._owner is me:  # the server stopped
            for conn in list(self._conns.values()):
                self._drop(conn)
            self.selector.close()
            self._wake_r.close()
            self._wake_w.close()

    def _accept(self, now: float) -> None:
        server = self.server
        for _ in range(64):  # what is queued, a batch at a time: the others get their turn too
            try:
                sock, address = server.socket.accept()
            except BlockingIOError:  # none left, or another worker process took it
                return
            except OSError:
                if not server.closing:
                    threading.Event().wait(0.01)  # out of descriptors, say: let others close theirs
                return
            try:
                sock.setblocking(True)  # a thread that waits on it later reads and writes blocking
                server.opened(sock)
            except OSError:  # reset before we got to it (macOS refuses options on it then)
                server.forget(sock)
                continue
            conn = _Conn(sock, address, server.base(address), now)
            self._conns[sock] = conn
            self.selector.register(sock, selectors.EVENT_READ, conn)

    def _read(self, conn: _Conn, now: float) -> bool:
        """Read what came and answer every whole request. True when an answer handed the loop on:
        this thread then serves the connection alone until it closes."""
        try:
            data = conn.sock.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            return False
        conn.buf += data
        conn.last = now
        while conn.buf:
            size, conn.searched = whole(conn.buf, conn.searched)
            if size <= 0:
                if size < 0:
                    self._to_thread(conn)
                return False
            request, conn.buf, conn.searched = conn.buf[:size], conn.buf[size:], 0
            self._current = conn
            waiting.set_hook(self._hand_off, more=self._more or bool(conn.buf))
            try:
                keep = Exchange(
                    self.server, _Inline(conn.sock), io.BytesIO(request), conn.base, inline=True
                ).run()
            except (OSError, ValueError):  # the client went away
                keep = False
            finally:
                waiting.set_hook(None)
            if conn.detached:
                self._go_on_alone(conn, keep)
                return True
            if not keep or self.server.closing:
                self._drop(conn)
                return False
        return False

    def _go_on_alone(self, conn: _Conn, keep: bool) -> None:
        """After an answer that handed the loop on: its slot back, then its connection served in
        this thread until it closes (or closed now)."""
        if conn.slot:
            self.server.slots.release()
        if keep and not self.server.closing:
            self.server.serve_connection(conn.sock, conn.address, conn.buf)
        else:
            self.server.forget(conn.sock)

    def _hand_off(self) -> None:
        """The answer being written will wait: the loop goes on in a new thread."""
        conn = self._current
        assert conn is not None
        self._unwatch(conn)
        conn.detached = True
        # A slot if one is free: an answer already under way cannot wait for one on the loop.
        conn.slot = self.server.slots.acquire(blocking=False)
        me = threading.current_thread()
        me.name = self.server.thread_name(conn.address)  # a connection's thread from now on
        try:
            self.start()
        except RuntimeError:  # no thread to be had: the loop waits with this answer
            self._owner, me.name = me, self.server.thread_name()
            if conn.slot:
                self.server.slots.release()
            conn.detached = conn.slot = False
            self._conns[conn.sock] = conn
            self.selector.register(conn.sock, selectors.EVENT_READ, conn)

    def _to_thread(self, conn: _Conn) -> None:
        """A thread reads this connection's request as it comes, and serves it from then on."""
        self._unwatch(conn)
        try:
            threading.Thread(
                target=self.server.serve_connection,
                args=(conn.sock, conn.address, conn.buf),
                name=self.server.thread_name(conn.address),
                daemon=True,
            ).start()
        except RuntimeError:  # no thread to be had: this client is turned away, the server goes on
            self.server.forget(conn.sock)

    def _drop(self, conn: _Conn) -> None:
        self._unwatch(conn)
        self.server.forget(conn.sock)

    def _unwatch(self, conn: _Conn) -> None:
        """The loop no longer reads this connection (it closes, or a thread serves it now)."""
        self.selector.unregister(conn.sock)
        del self._conns[conn.sock]

    def _sweep(self, now: float) -> None:
        """Close connections silent for longer than the idle timeout."""
        limit = now - self.server.idle_timeout
        for conn in [c for c in self._conns.values() if c.last < limit]:
            self._drop(conn)
