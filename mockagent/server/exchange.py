"""One request and its answer on a connection of `HttpServer`: HTTP/1.1 framing around a WSGI call.

The request is read by `request.py`. Answers: Content-Length when the whole body is known,
chunked while a stream is still being written, close-delimited for an HTTP/1.0 client. A
streamed piece is held back until the next one, the end, or anything that may wait
(`waiting.before_wait`): a stream whose events are all there goes out in one write with its
end, a paced one piece by piece as each comes. A request that is not HTTP/1.x is refused in
plain text and the connection closed; a failing app is a 500 without a traceback.
"""

from __future__ import annotations

import logging
import socket
import time
from email.utils import formatdate
from typing import Any

from mockagent import waiting
from mockagent.server.request import BadRequest, Body, parse_request, read_request

log = logging.getLogger("mockagent")
DRAIN = 65536  # an unread body up to this size is read past to keep the connection; more closes it
LINGER = 1.0  # seconds a closing connection still takes (and drops) a body the app did not read
HOLD_MAX = (
    65536  # bytes of a stream held back at most: a long one goes out on the way (see the docstring)
)
REASONS = {
    400: "Bad Request",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    505: "HTTP Version Not Supported",
}
NO_BODY = {204, 304}


class Exchange:
    """Reads one request from `rfile`, runs the server's app on it and writes the answer to
    `conn`."""

    def __init__(
        self, server: Any, conn: Any, rfile: Any, base: dict[str, str], inline: bool = False
    ) -> None:
        self.server, self.conn, self.rfile, self.base = server, conn, rfile, base
        # on the event loop: the whole request is in `rfile` (a BytesIO), one call at a time
        self.inline = inline
        self.status: str | None = None
        self.headers: list[tuple[str, str]] = []
        self.version = "HTTP/1.1"
        self.keep_alive = False
        self.sent_head = False
        self.chunked = False
        self.bodyless = False
        self.held = b""  # written by the app, not yet sent (see the module's docstring)
        self.body = Body(rfile, 0)

    def run(self) -> bool:
        """Answer one request; True when the connection can carry another."""
        try:
            request = (
                parse_request(self.rfile, self.base)
                if self.inline
                else read_request(self.rfile, self.base)
            )
        except BadRequest as exc:
            self.refuse(exc.status, str(exc))
            return False
        if request is None:
            return False
        self.body, self.version, self.keep_alive = request.body, request.version, request.keep_alive
        if request.expects_continue:
            self.conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        if self.inline:
            self.answer(request.environ)
        else:
            with self.server.slots:
                self.answer(request.environ)
        if not self.body.done:
            self.skip_body()
        return self.keep_alive

    def skip_body(self) -> None:
        """Read past a body the app left unread: a short one keeps the connection; after a long
        one, the client still sending it reads the answer before the connection closes."""
        if self.keep_alive:
            try:
                self.body.read(DRAIN)
            except BadRequest:
                pass
            self.keep_alive = self.body.done
        if not self.keep_alive:
            self.conn.shutdown(socket.SHUT_WR)
            self.conn.settimeout(LINGER)
            skipped = 0
            while skipped < 1 << 24 and (data := self.conn.recv(65536)):
                skipped += len(data)

    def answer(self, environ: dict[str, Any]) -> None:
        self.bodyless = environ["REQUEST_METHOD"] == "HEAD"
        result = None
        try:
            result = self.server.app(environ, self.start_response)
            if isinstance(
                result, (list, tuple)
            ):  # the whole body at once: it gets a Content-Length
                self.send_head(b"".join(result), whole=True)
            else:
                for chunk in result:
                    if chunk:
                        self.write(chunk)
                if not self.sent_head:
                    self.send_head(b"", whole=True)
                elif self.chunked:
                    self.held += b"0\r\n\r\n"
                self.flush()
        except OSError:  # the client went away, or the app dropped the connection on purpose
            self.keep_alive = False
            self.flush_quietly()
        except Exception:
            log.exception(
                "mockagent failed on %s %s", environ["REQUEST_METHOD"], environ["PATH_INFO"]
            )
            self.keep_alive = False
            if not self.sent_head:
                self.refuse(500, "Internal Server Error")
            self.flush_quietly()
        finally:
            waiting.hold_back(None)
            close = getattr(result, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    log.exception("closing the answer to %s failed", environ["PATH_INFO"])

    def start_response(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Any:
        if exc_info is not None and self.sent_head:
            raise exc_info[1].with_traceback(exc_info[2])
        self.status, self.headers = status, headers
        return self.write

    def write(self, data: bytes) -> None:
        if not self.sent_head:
            self.send_head(data, whole=False)
        elif self.bodyless:
            return
        elif self.chunked:
            self.held += b"%x\r\n%b\r\n" % (len(data), data)
        else:
            self.held += data
        if len(self.held) >= HOLD_MAX:
            self.flush()
        else:
            waiting.hold_back(self.flush)

    def flush(self) -> None:
        """Send what the app has written and was held back."""
        data, self.held = self.held, b""
        if data:
            self.conn.sendall(data)

    def flush_quietly(self) -> None:
        """Flush on the way out of a failed answer: what was written still reaches a client that
        is there."""
        try:
            self.flush()
        except OSError:
            pass

    def send_head(self, body: bytes, whole: bool) -> None:
        if self.status is None:
            raise RuntimeError("the app sent a body before start_response")
        code = int(self.status[:3])
        self.bodyless = self.bodyless or code in NO_BODY or code < 200
        lines = [f"HTTP/1.1 {self.status}"]
        framed = dated = False
        for name, value in self.headers:
            low = name.lower()
            if low == "content-length" or low == "transfer-encoding":
                framed = True
            elif low == "date":
                dated = True
            elif low == "connection" and value.lower() == "close":
                self.keep_alive = False
            lines.append(f"{name}: {value}")
        if not framed and not self.bodyless:
            if whole:
                lines.append(f"Content-Length: {len(body)}")
            elif self.version == "HTTP/1.1":
                self.chunked = True
                lines.append("Transfer-Encoding: chunked")
            else:
                self.keep_alive = False  # the end of the body is the end of the connection
        if self.keep_alive and self.body.unread > DRAIN:  # see skip_body
            self.keep_alive = False
        if not self.keep_alive:
            lines.append("Connection: close")
        elif self.version == "HTTP/1.0":
            lines.append("Connection: keep-alive")
        if not dated:
            lines.append(f"Date: {http_date(time.time())}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if self.bodyless or not body:
            data = head
        else:
            data = head + (b"%x\r\n%b\r\n" % (len(body), body) if self.chunked else body)
        self.sent_head = True
        if whole:
            self.conn.sendall(data)
        else:
            self.held += data

    def refuse(self, status: int, message: str) -> None:
        """Answer `status` in plain text and close: nothing else can be read from this
        connection."""
        self.keep_alive = False
        body = message.encode()
        self.conn.sendall(
            f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: text/plain; "
            f"charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )


_date: tuple[int, str] = (0, "")


def http_date(now: float) -> str:
    """The Date header value for `now`, formatted once per second."""
    global _date
    if _date[0] != int(now):
        _date = (int(now), formatdate(int(now), usegmt=True))
    return _date[1]
