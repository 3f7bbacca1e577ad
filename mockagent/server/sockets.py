"""The sockets `serve` listens on (HTTP and gRPC) and how they are named in URLs and targets.

Apart from `host` (granian) and `grpc_server` (grpcio): both bind through here, and the CLI
reserves and polls ports without importing either server.
"""

from __future__ import annotations

import socket
import time


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


def reserve(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` with SO_REUSEPORT, not listening: it holds the port (the
    real one of port 0) for `serve`'s workers, whose gRPC servers bind it too. Connections go to
    listening sockets only, so it never takes one. OSError when the port is taken."""
    return bound(host, port, (socket.SOL_SOCKET, socket.SO_REUSEPORT))


def wait_listening(host: str, port: int, timeout_s: float) -> bool:
    """Whether something accepts connections on `host`:`port` within `timeout_s` (polled)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def root_url(host: str, port: int) -> str:
    """`http://host:port` (the real port of a socket that asked for port 0)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def target_of(host: str, port: int) -> str:
    """`host:port` as a gRPC target (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
