"""The TCP sockets mockagent listens on, and the URL a client reaches them by.

`serve` hands granian a socket bound here (the port is held before the workers start, and port
0's real port is known); the gRPC server binds its own beside it, with SO_REUSEPORT.
"""

from __future__ import annotations

import socket


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port` (the first address `host` resolves to)."""
    sock = bound(
        host,
        port,
        (socket.SOL_SOCKET, socket.SO_REUSEADDR),
        # Accepted connections inherit it: a stream's writes go out at once, not held back by
        # Nagle's algorithm until the client's delayed ACK (40 ms a stream). granian sets it on
        # the sockets it binds itself.
        (socket.IPPROTO_TCP, socket.TCP_NODELAY),
    )
    try:
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    return sock


def bound(host: str, port: int, *options: tuple[int, int]) -> socket.socket:
    """A TCP socket bound to `host`:`port` (the first address `host` resolves to), each
    `(level, option)` of `options` set on first; OSError when the port is taken."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        for level, option in options:
            sock.setsockopt(level, option, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def root_url(host: str, port: int) -> str:
    """`http://host:port` (the real port of a socket that asked for port 0)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
