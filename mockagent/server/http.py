"""mockagent's HTTP/1.1 server for WSGI apps: an event loop (`loop.py`) or a thread per connection.

waitress hands every request from its event-loop thread to a worker thread and the answer
back again; on two cores that hand-off cost more than a whole replayed call (the figures are in
bench/README.md and shared/reference/serving-measurements.md). Here the thread that reads a
request runs the app and writes the answer: the loop's thread for every connection at once, as
long as the answer does not wait; a thread of the connection's own otherwise (an open stream
holds it, and the others go on).
"""

from __future__ import annotations

import io
import socket
import struct
import threading
from collections.abc import Callable, Iterable
from typing import Any

from mockagent.server.exchange import Exchange
from mockagent.server.loop import Loop, deaf_to_stops


class HttpServer:
    """Serves a WSGI `app` on `host`:`port` (0 picks a free port), or on an already bound `sock`.

    At most `threads` requests run the app at once in threads of their own; the rest wait their
    turn. `loop`: answer on one event-loop thread (`loop.py`; the app calls
    `waiting.before_wait()` before it waits), otherwise a thread per connection.
    `serve_forever()` returns after `shutdown()`.
    """

    def __init__(
        self,
        app: Callable[..., Iterable[bytes]],
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        threads: int = 32,
        sock: socket.socket | None = None,
        idle_timeout: float = 120.0,
        loop: bool = False,
    ) -> None:
        self.app = app
        self.socket = sock or listen(host, port)
        self.host, self.port = self.socket.getsockname()[:2]
        self.idle_timeout = idle_timeout
        self.slots = threading.BoundedSemaphore(threads)
        self.closing = False
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._loop = Loop(self) if loop else None
        self._started = False

    def serve_forever(self) -> None:
        if self._loop is not None:
            with self._lock:
                start, self._started = not self._started and not self.closing, True
            if start:
                self._loop.start()
            self._stopped.wait()
            return
        while not self.closing:
            try:
                conn, address = self.socket.accept()
            except OSError:
                if self.closing:
                    break
                threading.Event().wait(0.01)  # out of descriptors, say: let others close theirs
                continue
            self.opened(conn)
            try:
                threading.Thread(
                    target=self.serve_connection,
                    args=(conn, address),
                    daemon=True,
                    name=self.thread_name(address),
                ).start()
            except (
                RuntimeError
            ):  # no thread to be had: this client is turned away, the server goes on
                self.forget(conn)

    def shutdown(self) -> None:
        """Stop accepting and cut every open connection (their threads end on the next read or
        write)."""
        self.closing = True
        with self._lock:
            open_now = list(self._open)
        for sock in [self.socket, *open_now]:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in accept() or recv()
            except OSError:
                pass
        self.socket.close()
        if self._loop is not None:
            self._loop.wake()
        self._stopped.set()

    def opened(self, conn: socket.socket) -> None:
        """Set up an accepted connection and count it as open."""
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The kernel times out a silent client (the read fails, the connection closes). A Python
        # timeout would poll() before every read and write: twice the system calls, and each one
        # hands the GIL to another connection's thread and back.
        timeout = struct.pack("ll", int(self.idle_timeout), int(self.idle_timeout % 1 * 1e6))
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeout)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout)
        with self._lock:
            self._open.add(conn)

    def thread_name(self, address: tuple[Any, ...] | None = None) -> str:
        """The name of the thread serving the connection from `address`, or (None) of the event
        loop's."""
        return (
            f"mockagent:{self.port}" if address is None else f"mockagent:{self.port}:{address[1]}"
        )

    def base(self, address: tuple[Any, ...]) -> dict[str, str]:
        """The environ entries every request on a connection from `address` shares."""
        return {
            "SERVER_NAME": str(self.host),
            "SERVER_PORT": str(self.port),
            "REMOTE_ADDR": str(address[0]),
            "REMOTE_PORT": str(address[1]),
        }

    def serve_connection(
        self, conn: socket.socket, address: tuple[Any, ...], read: bytes = b""
    ) -> None:
        """Answer requests on `conn` in this thread until it closes; `read`: bytes already read
        from it."""
        deaf_to_stops()
        rfile: Any = (
            conn.makefile("rb", buffering=65536)
            if not read
            else io.BufferedReader(_Prefixed(read, conn), 65536)
        )
        base = self.base(address)
        try:
            while not self.closing and Exchange(self, conn, rfile, base).run():
                pass
        except (OSError, ValueError):
            pass  # the client went away (or the server is stopping): nothing left to answer
        finally:
            rfile.close()
            self.forget(conn)

    def forget(self, conn: socket.socket) -> None:
        """Close a connection and stop counting it."""
        with self._lock:
            self._open.discard(conn)
        conn.close()


class _Prefixed(io.RawIOBase):
    """A connection's bytes: first those read already, then the socket's."""

    def __init__(self, read: bytes, conn: socket.socket) -> None:
        self._read = memoryview(read)
        self._conn = conn

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        if self._read:
            size = min(len(buffer), len(self._read))
            buffer[:size] = self._read[:size]
            self._read = self._read[size:]
            return size
        try:
            return self._conn.recv_into(buffer)
        except BlockingIOError:  # the idle timeout (SO_RCVTIMEO) ran out: as socket.makefile does
            return None


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port` (the first address `host` resolves to)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    return sock


def root_url(sock: socket.socket) -> str:
    """`http://host:port` of a listening socket (the real port when it was asked for port 0)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
