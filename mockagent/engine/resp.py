"""A minimal Redis client (RESP2): the few commands the shared task store sends, pipelined.

Every replayed call takes two round trips to the store while it holds the store's lock, so the
client's own cost is every worker's cost. This one packs with one join and parses with the C
readline of a buffered socket file.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO
from urllib.parse import parse_qs, unquote, urlsplit

from mockagent.errors import StoreError

Reply = Any  # str, int, None, RespError or a list of replies
log = logging.getLogger("mockagent")


class RespError(Exception):
    """An error reply from Redis (`-ERR …`)."""


class Connection:
    """One socket to Redis, used by one thread."""

    def __init__(self, url: str, timeout: float | None) -> None:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if parts.scheme == "unix":
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(parts.path)
            db = query.get("db", ["0"])[0]
        else:
            self.sock = socket.create_connection(
                (parts.hostname or "127.0.0.1", parts.port or 6379), timeout
            )
            self.sock.setsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
            )  # no batching of small writes
            db = parts.path.strip("/") or "0"
        self.sock.settimeout(None)  # BLPOP waits as long as it was told
        self.file: BinaryIO = self.sock.makefile("rb")
        self.pid = os.getpid()  # a forked worker must not share its parent's socket
        self.unread = 0  # replies to commands sent with send(), not read yet
        hello: list[tuple[Any, ...]] = []
        if parts.password is not None:
            user = unquote(parts.username) if parts.username else None
            hello.append(
                ("AUTH", user, unquote(parts.password))
                if user
                else ("AUTH", unquote(parts.password))
            )
        if db != "0":
            hello.append(("SELECT", db))
        for reply in self.pipeline(hello):
            if isinstance(reply, RespError):
                raise reply

    def pipeline(self, commands: list[tuple[Any, ...]]) -> list[Reply]:
        """Send every command at once, then read one reply per command (errors as RespError)."""
        if not commands:
            return []
        self.send(commands)
        self.unread -= len(commands)
        return [self._read() for _ in commands]

    def send(self, commands: list[tuple[Any, ...]]) -> None:
        """Send commands whose replies are read later (first thing in the next pipeline)."""
        self.drain()
        self.sock.sendall(b"".join(_pack(command) for command in commands))
        self.unread += len(commands)

    def drain(self) -> None:
        """Read the replies of commands sent without waiting; an error among them is logged."""
        while self.unread:
            self.unread -= 1
            reply = self._read()
            if isinstance(reply, RespError):
                log.warning("mockagent: the store refused a write: %s", reply)

    def _read(self) -> Reply:
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("Redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self.file.read(size + 2)[:-2].decode()
        if kind == b":":
            return int(rest)
        if kind == b"+":
            return rest.decode()
        if kind == b"*":
            size = int(rest)
            return None if size < 0 else [self._read() for _ in range(size)]
        if kind == b"-":
            return RespError(rest.decode())
        raise ConnectionError(f"unexpected reply from Redis: {line[:40]!r}")

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def _pack(command: tuple[Any, ...]) -> bytes:
    chunks = [b"*%d\r\n" % len(command)]
    for arg in command:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        chunks.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(chunks)


class Redis:
    """A connection per thread to the Redis at `url` (redis://[:password@]host:port/db or
    unix:///path?db=N); commands go in pipelines."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url
        self.shown = re.sub(r"//[^@/]*@", "//", url)  # for messages: no password
        self._timeout = timeout
        self._local = threading.local()

    def _connection(self) -> Connection:
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is None or connection.pid != os.getpid():
            try:
                connection = Connection(self.url, self._timeout)
            except (OSError, RespError) as exc:
                raise StoreError(f"cannot use the store at {self.shown}: {exc}") from None
            self._local.connection = connection
        return connection

    @contextmanager
    def _connected(self) -> Iterator[Connection]:
        """This thread's connection; one that fails is closed and forgotten (StoreError)."""
        connection = self._connection()
        try:
            yield connection
        except OSError as exc:
            self._local.connection = None
            connection.close()
            raise StoreError(f"lost the store at {self.shown}: {exc}") from None

    def pipeline(self, *commands: tuple[Any, ...]) -> list[Reply]:
        """Replies to `commands`, sent in one round trip; StoreError when Redis is gone or
        refuses."""
        with self._connected() as connection:
            replies = connection.pipeline(list(commands))
        for reply in replies:
            if isinstance(reply, RespError):
                raise StoreError(f"the store at {self.shown} refused a command: {reply}")
        return replies

    def send(self, *commands: tuple[Any, ...]) -> None:
        """Send `commands` without waiting for their replies: Redis runs them in order before
        anything this thread sends next (a store's commit ends with the lock's token, so nobody
        reads before its writes are done); an error among them is logged."""
        with self._connected() as connection:
            connection.send(list(commands))

    def call(self, *command: Any) -> Reply:
        """One command's reply."""
        return self.pipeline(tuple(command))[0]

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
