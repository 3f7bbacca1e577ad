"""mockagent's HTTP/1.1 server for WSGI apps: a thread per connection.

waitress hands every request from its event-loop thread to a worker thread and the answer
back again; on two cores that hand-over costs more than a whole replayed call (a canned answer
measured 4.1k requests/s at one connection and 3.8k at 16 on waitress, 9.3k and 35k with a
thread per connection). Here the thread that reads a request runs the app and writes the answer.
An open stream holds its connection's thread, and the others go on.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterable
from typing import Any

from mockagent.server.exchange import Exchange


class HttpServer:
    """Serves a WSGI `app` on `host`:`port` (0 picks a free port), or on an already bound `sock`.

    At most `threads` requests run the app at once; the rest wait their turn. `serve_forever()`
    returns after `shutdown()`.
    """

    def __init__(self, app: Callable[..., Iterable[bytes]], host: str = "127.0.0.1", port: int = 0, *,
                 threads: int = 32, sock: socket.socket | None = None, idle_timeout: float = 120.0) -> None:
        self.app = app
        self.socket = sock or listen(host, port)
        self.host, self.port = self.socket.getsockname()[:2]
        self.idle_timeout = idle_timeout
        self.slots = threading.BoundedSemaphore(threads)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closing = False

    def serve_forever(self) -> None:
        while not self._closing:
            try:
                conn, address = self.socket.accept()
            except OSError:
                if self._closing:
                    break
                threading.Event().wait(0.01)  # out of descriptors, say: let others close theirs
                continue
            with self._lock:
                self._open.add(conn)
            try:
                threading.Thread(target=self._connection, args=(conn, address), daemon=True,
                                 name=f"mockagent:{self.port}:{address[1]}").start()
            except RuntimeError:  # no thread to be had: this client is turned away, the server goes on
                self._forget(conn)

    def shutdown(self) -> None:
        """Stop accepting and cut every open connection (their threads end on the next read or write)."""
        self._closing = True
        with self._lock:
            open_now = list(self._open)
        for sock in [self.socket, *open_now]:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in accept() or recv()
            except OSError:
                pass
        self.socket.close()

    def _connection(self, conn: socket.socket, address: tuple[Any, ...]) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The kernel times out a silent client (the read fails, the connection closes). A Python
        # timeout would poll() before every read and write: twice the system calls, and each one
        # hands the GIL to another connection's thread and back.
        timeout = struct.pack("ll", int(self.idle_timeout), int(self.idle_timeout % 1 * 1e6))
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeout)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout)
        rfile = conn.makefile("rb", buffering=65536)
        base = {"SERVER_NAME": str(self.host), "SERVER_PORT": str(self.port),
                "REMOTE_ADDR": str(address[0]), "REMOTE_PORT": str(address[1])}
        try:
            while not self._closing and Exchange(self, conn, rfile, base).run():
                pass
        except (OSError, ValueError):
            pass  # the client went away (or the server is stopping): nothing left to answer
        finally:
            rfile.close()
            self._forget(conn)

    def _forget(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.discard(conn)
        conn.close()


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port` (the first address `host` resolves to)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
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
