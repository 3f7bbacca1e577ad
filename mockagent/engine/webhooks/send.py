"""One webhook POST with httpx: to the policy's checked addresses only, within a total deadline.

httpx's timeouts bound each socket operation, so a receiver that trickles its reply a byte at a
time never trips one. A watchdog timer shuts the connection's socket when the deadline passes,
whatever the request is doing (connecting, sending, reading headers or the body); the socket is
found through httpcore's documented `trace` request extension.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from typing import Any

import httpx

from mockagent.engine.webhooks.policy import Refused, Resolver, WebhookPolicy, system_resolver

_OPENED = ("connection.connect_tcp.complete", "connection.start_tls.complete")


def new_client() -> httpx.Client:
    """The client every POST of a deliverer goes through (thread-safe)."""
    # No environment proxies: an HTTP_PROXY meant for package downloads would swallow POSTs to
    # 127.0.0.1. No kept-alive connections: the watchdog needs each POST's own socket. No
    # redirects: following one would send the body and credentials somewhere unchecked.
    return httpx.Client(
        trust_env=False,
        follow_redirects=False,
        limits=httpx.Limits(max_keepalive_connections=0),
    )


class _NotConnected(Exception):
    """No connection to this address: the message says why; the next address may do."""


class _Watchdog:
    """Shuts every socket the POST opened once `seconds` have passed."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    @property
    def connected(self) -> bool:
        """Whether the POST got as far as a connection."""
        with self._lock:
            return bool(self._sockets)

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: note each socket as it opens (shut at once if late)."""
        if event not in _OPENED:
            return
        sock = info["return_value"].get_extra_info("socket")
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:  # the plain socket's shutdown, also for TLS: it wakes a blocked read in another thread
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # already closed: nothing left to cut
        pass


def post(
    client: httpx.Client,
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    deadline_s: float,
    policy: WebhookPolicy,
    resolver: Resolver = system_resolver,
) -> tuple[int | None, str | None]:
    """POST `body` to `url`: `(status, error)`, error None for a 2xx; never raises.

    Connecting, sending and reading the whole reply take at most `deadline_s` together. The
    host is resolved and checked here, and each allowed address tried in turn until one connects.
    """
    deadline = time.monotonic() + deadline_s
    try:
        target = httpx.URL(url)
        port = target.port or (443 if target.scheme == "https" else 80)
        addresses = policy.addresses(target.host, port, resolver)
    except Refused as exc:
        return None, f"refused: {exc}"
    except Exception as exc:
        return None, reason(exc)
    headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "host")}
    # Replaced whatever the caller said: the body is always the JSON of a StreamResponse or Task.
    headers |= {"Content-Type": "application/json", "Host": target.netloc.decode("ascii")}
    error = "no address to connect to"
    for address in addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        pinned = target.copy_with(host=address)
        try:
            return _post_once(client, pinned, target.host, body, headers, left, deadline_s)
        except _NotConnected as exc:
            error = str(exc)
    return None, error


def _post_once(
    client: httpx.Client,
    url: httpx.URL,
    sni: str,
    body: bytes,
    headers: dict[str, str],
    left: float,
    deadline_s: float,
) -> tuple[int | None, str | None]:
    with _Watchdog(left) as watchdog:
        extensions = {"trace": watchdog.trace, "sni_hostname": sni}
        try:
            request = client.build_request(
                "POST", url, content=body, headers=headers, timeout=left, extensions=extensions
            )
            response = client.send(request, stream=True)
            try:
                for _ in response.iter_raw():  # read to the end, keep nothing
                    pass
            finally:
                response.close()
        except Exception as exc:
            # Every httpx timeout is the time left, so any of them is the deadline too.
            if watchdog.fired or isinstance(exc, httpx.TimeoutException):
                return None, _cut(deadline_s)
            if not watchdog.connected:  # the next address may listen (localhost: ::1, then v4)
                raise _NotConnected(reason(exc)) from exc
            return None, reason(exc)
    status = response.status_code
    return status, None if 200 <= status < 300 else f"HTTP {status}"


def _cut(deadline_s: float) -> str:
    return f"no complete reply within {deadline_s:g} s: cut at the delivery deadline"


def reason(exc: BaseException) -> str:
    """A short, readable reason for a failed attempt (from the OS error under httpx's)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve host: {cause.strerror or cause}"
        if isinstance(cause, ssl.SSLError):
            return f"TLS error: {cause.reason or cause}"
        if isinstance(cause, ConnectionResetError):
            return "connection reset"
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"bad reply: {exc}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
