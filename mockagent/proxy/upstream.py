"""The one upstream a recording proxies to: forwarding, and the card with URLs that point at us."""

from __future__ import annotations

import copy
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx

from mockagent.dialects import sse_read
from mockagent.dialects.http import HttpResponse

# Hop-by-hop headers, and those httpx sets itself: never forwarded in either direction.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "content-encoding",
        "accept-encoding",
    }
)


PROBE_S = 2.0
"""How long the upstream's card (or an Agentex platform's agent list) may take to answer, to
connect and to read: these GETs answer at once, and a client (a2a-sdk's httpx: 5 s) must get
`upstream … did not answer in time` well before its own timeout."""
CALL_S = 60.0  # a forwarded call: an agent may think for a while before it answers
CONNECT_S = 3.0  # any connection to the upstream


@dataclass
class Refused(HttpResponse):
    """The proxy's own answer to a call its upstream did not answer. `reason` goes into the HTTP
    status line too (`502 upstream … refused the connection`): clients that show only the status
    of a failed request (a2a-sdk's card resolver) then show why."""

    reason: str = ""

    @classmethod
    def of(cls, answer: HttpResponse, reason: str) -> Refused:
        return cls(answer.status, answer.body, answer.headers, reason)


class UpstreamUnreachable(Exception):
    """The upstream did not answer (refused, timed out, reset): the message says so in words,
    `upstream http://127.0.0.1:9 refused the connection`."""


def unreachable(url: str, exc: httpx.HTTPError) -> str:
    """Why the upstream at `url` did not answer, as record and verify say it:
    `upstream http://127.0.0.1:9 refused the connection`."""
    return f"upstream {url.rstrip('/')} {failure(exc)}"


def failure(exc: httpx.HTTPError) -> str:
    """How a request to the upstream failed, in words (the cause's own text in brackets)."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, ConnectionRefusedError):
        return "refused the connection"
    if isinstance(cause, socket.gaierror):
        return f"could not be found ({cause.strerror or cause})"
    if isinstance(exc, httpx.ConnectTimeout):
        return "did not accept the connection in time"
    if isinstance(exc, httpx.TimeoutException):
        return "did not answer in time"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"closed the connection early ({exc})"
    if isinstance(exc, httpx.ConnectError):
        return f"could not be connected to ({exc})"
    return f"failed: {type(exc).__name__}: {exc}"


class Upstream:
    """Forwards requests to one agent; every URL it builds is on that agent's origin."""

    def __init__(self, url: str, timeout: float = CALL_S) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"upstream {url!r}: an http(s) URL such as http://127.0.0.1:9999")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.base_path = parts.path.rstrip("/")
        self.url = self.origin + self.base_path
        # trust_env off: a proxy configured for package downloads must not see the recording.
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=CONNECT_S),
            follow_redirects=False,
            trust_env=False,
        )

    def url_for(self, path: str, query: str = "") -> str:
        """The upstream URL for a path below the proxy's root. Always the upstream's origin:
        the path is appended as text, so `//elsewhere` stays a path on this host."""
        url = self.origin + self.base_path + (path if path.startswith("/") else "/" + path)
        return url + (f"?{query}" if query else "")

    def open(
        self,
        method: str,
        path: str,
        query: str,
        headers: dict[str, str],
        body: bytes,
        timeout: float | None = None,
    ) -> httpx.Response:
        """Send and return the response with its body not yet read (it may be a stream);
        `timeout` in place of CALL_S."""
        request = self._client.build_request(
            method,
            self.url_for(path, query),
            content=body or None,
            headers=forwardable(headers),
            timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout),
        )
        try:
            return self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise UpstreamUnreachable(unreachable(self.url, exc)) from None

    def get_json(self, path: str, headers: dict[str, str] | None = None) -> Any:
        """GET a JSON document (the card, the agent list), which must answer within PROBE_S;
        UpstreamUnreachable, or ValueError for non-JSON."""
        response = self.open("GET", path, "", headers or {}, b"", PROBE_S)
        try:
            response.read()
        except httpx.HTTPError as exc:
            raise UpstreamUnreachable(unreachable(self.url, exc)) from None
        finally:
            response.close()
        if response.status_code != 200:
            raise ValueError(f"GET {path} answered HTTP {response.status_code}")
        return response.json()

    def probe(self, path: str) -> str | None:
        """Why the upstream cannot be reached at `path` (`upstream … refused the connection`), or
        None when it answers, whatever it answers."""
        request = self._client.build_request("GET", self.url_for(path), timeout=PROBE_S)
        try:
            self._client.send(request, stream=True).close()
        except httpx.HTTPError as exc:
            return unreachable(self.url, exc)
        return None

    def rewrite_card(self, card: dict[str, Any], proxy_url: str) -> dict[str, Any]:
        """The card with every interface URL on the upstream moved to the proxy. A GRPC
        interface is left out: the proxy records HTTP only, and a client that took it would
        call the upstream past the recording."""
        out = copy.deepcopy(card)
        if isinstance(out.get("supportedInterfaces"), list):
            out["supportedInterfaces"] = [
                i
                for i in out["supportedInterfaces"]
                if not (isinstance(i, dict) and i.get("protocolBinding") == "GRPC")
            ]
        for interface in out.get("supportedInterfaces") or []:
            url = interface.get("url", "")
            if isinstance(url, str) and url.rstrip("/").startswith(self.url):
                interface["url"] = proxy_url.rstrip("/") + url.rstrip("/")[len(self.url) :]
        return out

    def relative(self, url: str) -> str | None:
        """The path of an upstream URL below the upstream's base ("" for the base itself)."""
        url = url.rstrip("/")
        return url[len(self.url) :] if url.startswith(self.url) else None

    def close(self) -> None:
        self._client.close()


def forwardable(headers: dict[str, str]) -> dict[str, str]:
    """Headers without the hop-by-hop ones."""
    return {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}


def status_reason(text: str) -> str:
    """`text` as an HTTP reason phrase: one line of printable ASCII, not too long."""
    line = "".join(c if " " <= c <= "~" else " " for c in text.replace("\n", " "))
    return line[:200].strip() or "Bad Gateway"


def now_ms() -> float:
    return time.monotonic() * 1000


def read(response: httpx.Response) -> bytes:
    """The whole body of an upstream response, which is closed after."""
    try:
        return response.read()
    finally:
        response.close()


Frame = TypeVar("Frame")


class Frames(Protocol[Frame]):
    """Splits a stream's chunks into frames as they complete (`feed`), and says what is left
    when the stream ends (`end`)."""

    def feed(self, chunk: bytes) -> list[Frame]: ...

    def end(self) -> list[Frame]: ...


class SseEvents(sse_read.Reader):
    """A text/event-stream's events, read by the one SSE reader (CRLF, LF or CR line ends, a CRLF
    split across chunks). An event the stream never ended with its blank line is not recorded:
    the client's reader does not dispatch it either (the SSE specification discards it)."""

    def end(self, unterminated: bool = False) -> list[sse_read.Event]:
        return super().end(unterminated)


class Lines:
    """NDJSON: each line as it completes, without its line end; an unterminated last line when
    the stream ends."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        return [line.removesuffix(b"\r") for line in lines]

    def end(self) -> list[bytes]:
        last, self._pending = self._pending.removesuffix(b"\r"), b""
        return [last] if last.strip() else []


def tee(
    response: httpx.Response,
    frames: Frames[Frame],
    on_frame: Callable[[Frame], None],
    on_close: Callable[[], object],
) -> Iterator[bytes]:
    """Pass each chunk of a streamed response on as it arrives, never buffered; each frame it
    completes (an SSE event, an NDJSON line) goes to `on_frame` before the chunk is passed on, so
    whatever the client does on seeing it comes after. `on_close` runs when the stream ends,
    however."""
    chunks = response.iter_raw()
    try:
        for chunk in chunks:
            for frame in frames.feed(chunk):
                on_frame(frame)
            yield chunk
        for frame in frames.end():
            on_frame(frame)
    finally:
        response.close()
        on_close()
