"""The agents' requests as plain WSGI: environ → HttpRequest, HttpResponse → start_response.

Every call a client makes lands here. Flask's request context, routing and response objects
cost more than a whole replayed call, so agent traffic goes around them; Flask serves the admin
API only (under /_mockagent/ when it is on).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

from werkzeug.http import HTTP_STATUS_CODES

from mockagent.dialects.a2a.rest import error_response
from mockagent.dialects.http import WRITE_BYTES, HttpRequest, HttpResponse
from mockagent.errors import DropConnection, InternalError, MethodNotFound
from mockagent.server.deadline import BODY_TIMEOUT_S, BodyTimeout, read_within
from mockagent.server.guard import Seen

log = logging.getLogger("mockagent")
StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
DEFAULT_TYPE = "text/html; charset=utf-8"  # what Flask gave a response that named no type


class TooLarge(Exception):
    """A request body over the limit, found while reading it."""


class UnreadableBody(Exception):
    """The server could not read the request body: a malformed chunked framing, say (or the
    client left half way)."""


def read_body(
    environ: dict[str, Any], limit: int | None, timeout: float | None = BODY_TIMEOUT_S
) -> bytes:
    """The request body, reading at most `limit` + 1 bytes; TooLarge when there is more,
    UnreadableBody when the server's reader refuses it, BodyTimeout when it has not all come
    within `timeout` seconds (None: no deadline)."""
    if environ.get("SERVER_PROTOCOL") == "HTTP/1.0" and environ.get("HTTP_TRANSFER_ENCODING"):
        # HTTP/1.0 has no transfer codings: the framing is faulty (RFC 9112 section 6.1), and a
        # server that decoded it anyway may disagree with a proxy in front about where it ends.
        raise UnreadableBody("Transfer-Encoding in an HTTP/1.0 request")
    if not environ.get("CONTENT_LENGTH", "").strip("0 ") and not environ.get(
        "wsgi.input_terminated"
    ):
        return b""  # no body to wait for: no reader thread either (a GET, say)
    try:
        return read_within(partial(_read, environ["wsgi.input"], environ, limit), timeout)
    except (TooLarge, BodyTimeout):
        raise
    except Exception as exc:  # each server raises its own: OSError, ValueError, its own class
        raise UnreadableBody(str(exc) or type(exc).__name__) from exc


def _read(stream: Any, environ: dict[str, Any], limit: int | None) -> bytes:
    length = environ.get("CONTENT_LENGTH")
    if length:
        try:
            size = max(int(length), 0)
        except ValueError:
            size = 0
        if limit is not None and size > limit:
            raise TooLarge()
        return bytes(stream.read(size)) if size else b""
    if not environ.get("wsgi.input_terminated"):  # no length and no end: no body (as werkzeug)
        return b""
    chunks: list[bytes] = []
    total = 0
    while limit is None or total <= limit:
        chunk = stream.read(65536 if limit is None else min(65536, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if limit is not None and total > limit:
        raise TooLarge()
    return b"".join(chunks)


def headers_of(environ: dict[str, Any]) -> dict[str, str]:
    """Request headers, names lowercased."""
    headers = {
        key[5:].replace("_", "-").lower(): value
        for key, value in environ.items()
        if key.startswith("HTTP_") and key not in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH")
    }
    for key, name in (("CONTENT_TYPE", "content-type"), ("CONTENT_LENGTH", "content-length")):
        if environ.get(key):
            headers[name] = environ[key]
    return headers


def seen_of(environ: dict[str, Any]) -> Seen:
    """What the guard (`mockagent.server.guard`) reads of a request."""
    length = environ.get("CONTENT_LENGTH") or "0"
    return Seen(
        method=environ.get("REQUEST_METHOD", "GET").upper(),  # Flask upper-cases it too
        host=environ.get("HTTP_HOST"),
        origin=environ.get("HTTP_ORIGIN"),
        content_type=environ.get("CONTENT_TYPE") or None,
        has_body=length.strip() not in ("", "0") or bool(environ.get("HTTP_TRANSFER_ENCODING")),
        authorization=environ.get("HTTP_AUTHORIZATION"),
        fetch_site=environ.get("HTTP_SEC_FETCH_SITE"),
    )


def request_of(environ: dict[str, Any], path: str, base_url: str, body: bytes) -> HttpRequest:
    query: dict[str, str] = {}
    if environ.get("QUERY_STRING"):
        for key, value in parse_qsl(
            environ["QUERY_STRING"], keep_blank_values=True, errors="replace"
        ):
            query.setdefault(key, value)  # the first value of a repeated parameter
    return HttpRequest(
        method=environ["REQUEST_METHOD"],
        path=path,
        base_url=base_url,
        headers=headers_of(environ),
        query=query,
        body=body,
    )


def path_of(environ: dict[str, Any]) -> str:
    """The request path, decoded from the latin-1 that WSGI carries as the UTF-8 it was."""
    raw = environ.get("PATH_INFO", "") or "/"
    return raw.encode("latin-1").decode("utf-8", "replace")


def host_url(environ: dict[str, Any]) -> str:
    """`scheme://host[:port]` the client used."""
    host = environ.get("HTTP_HOST")
    if not host:
        host = environ["SERVER_NAME"]
        port = environ.get("SERVER_PORT", "")
        if port and port != ("443" if environ["wsgi.url_scheme"] == "https" else "80"):
            host += f":{port}"
    return f"{environ['wsgi.url_scheme']}://{host}"


class ScriptedDrop(ConnectionResetError):
    """A scripted drop as the WSGI servers understand it: a ConnectionError is the client having
    gone, so werkzeug closes the connection without the final chunk of the stream and logs
    nothing; granian cuts the connection and logs it, which `mockagent serve` leaves out of its
    output (`host.NoScriptedDrop`)."""


def droppable(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """A streamed body whose DropConnection cuts the connection (ScriptedDrop) after the
    response's head: a cut before the first event too, on every server (granian sends the head
    first, werkzeug with the first chunk), as a stream that broke before its first event."""
    started = False
    try:
        for chunk in chunks:
            started = True
            if len(chunk) <= WRITE_BYTES:
                yield chunk
            else:  # one large event, in pieces the server can hold a few of (WRITE_BYTES)
                view = memoryview(chunk)
                for at in range(0, len(chunk), WRITE_BYTES):
                    yield bytes(view[at : at + WRITE_BYTES])
    except DropConnection as exc:
        if not started:
            yield b""  # werkzeug sends the head with it
        raise ScriptedDrop(str(exc)) from None


def respond(
    answer: HttpResponse, start_response: StartResponse, method: str = "GET"
) -> Iterable[bytes]:
    """Send a dialect's answer; a streamed body stays streamed."""
    headers = list(answer.headers.items())
    if not any(name.lower() == "content-type" for name, _ in headers) and answer.status not in (
        204,
        304,
    ):
        headers.append(("Content-Type", DEFAULT_TYPE))
    if isinstance(answer.body, bytes):
        headers.append(("Content-Length", str(len(answer.body))))
        body: Iterable[bytes] = [] if method == "HEAD" else [answer.body]
    else:
        body = droppable(answer.body)
    start_response(f"{answer.status} {HTTP_STATUS_CODES.get(answer.status, 'UNKNOWN')}", headers)
    return body


def guarded(
    handle: Callable[[dict[str, Any]], HttpResponse],
) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    """A WSGI app from `handle`; a bug of ours is answered in protocol terms, never a traceback."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            answer = handle(environ)
        except Exception as exc:
            log.exception(
                "mockagent failed on %s %s", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO")
            )
            answer = error_response(InternalError(f"mockagent failed: {type(exc).__name__}"))
        return respond(answer, start_response, environ.get("REQUEST_METHOD", "GET"))

    return app


def no_agent(path: str, names: Iterable[str]) -> HttpResponse:
    mounts = ", ".join(f"/{n}/" for n in names)
    return error_response(MethodNotFound(f"No agent at {path}; agents are mounted at {mounts}"))
