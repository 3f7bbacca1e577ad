"""One request and its answer on a connection of `HttpServer`: HTTP/1.1 framing around a WSGI call.

Requests: a body by Content-Length or chunked, `Expect: 100-continue`, keep-alive as HTTP/1.0
and 1.1 define it. Answers: Content-Length when the whole body is known, chunked while a
stream is still being written (each piece goes out as the app yields it), close-delimited for
an HTTP/1.0 client. A request that is not HTTP/1.x is refused in plain text and the connection
closed; a failing app is a 500 without a traceback.
"""

from __future__ import annotations

import io
import logging
import re
import socket
import sys
import time
from email.utils import formatdate
from typing import Any
from urllib.parse import unquote_to_bytes

log = logging.getLogger("mockagent")
MAX_LINE = 8192  # a request line or header line longer than this is refused
MAX_HEAD = 65536  # all header lines together
DRAIN = 65536  # an unread body up to this size is read past to keep the connection; more closes it
LINGER = 1.0  # seconds a closing connection still takes (and drops) a body the app did not read
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
REASONS = {400: "Bad Request", 414: "URI Too Long", 431: "Request Header Fields Too Large",
           500: "Internal Server Error", 501: "Not Implemented", 505: "HTTP Version Not Supported"}
NO_BODY = {204, 304}


class BadRequest(Exception):
    """A request that breaks HTTP/1.x framing: answered with `status`, then the connection closes."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Body(io.RawIOBase):
    """`wsgi.input`: the request body, `length` bytes or chunked (None); it never reads past its end."""

    def __init__(self, rfile: Any, length: int | None) -> None:
        self._rfile = rfile
        self._chunked = length is None
        self._left = length or 0  # bytes left in the body, or in the current chunk
        self._chunks = 0
        self.done = not self._chunked and self._left == 0

    def readable(self) -> bool:
        return True

    @property
    def unread(self) -> int:
        """Bytes of the body not read yet (0 when unknown: a chunked body's later chunks)."""
        return 0 if self.done else self._left

    def readinto(self, buffer: Any) -> int:
        while self._left == 0 and not self.done:
            self._next_chunk()
        if self.done or not len(buffer):
            return 0
        with memoryview(buffer) as view:
            got = self._rfile.readinto(view[:min(len(view), self._left)])
        if not got:
            raise ConnectionResetError("the client closed the connection inside a request body")
        self._left -= got
        self.done = self._left == 0 and not self._chunked
        return int(got)

    def _next_chunk(self) -> None:
        if self._chunks and self._rfile.readline(MAX_LINE) not in (b"\r\n", b"\n"):
            raise BadRequest(400, "a chunk of the request body does not end in CRLF")
        self._chunks += 1
        size = self._rfile.readline(MAX_LINE).split(b";", 1)[0].strip()
        if not size or size.strip(b"0123456789abcdefABCDEF"):
            raise BadRequest(400, "bad chunk size in a chunked request body")
        self._left = int(size, 16)
        if self._left == 0:  # the last chunk; trailers end at a blank line
            while self._rfile.readline(MAX_LINE) not in (b"\r\n", b"\n", b""):
                pass
            self.done = True


class Exchange:
    """Reads one request from `rfile`, runs the server's app on it and writes the answer to `conn`."""

    def __init__(self, server: Any, conn: socket.socket, rfile: Any, base: dict[str, str]) -> None:
        self.server, self.conn, self.rfile, self.base = server, conn, rfile, base
        self.status: str | None = None
        self.headers: list[tuple[str, str]] = []
        self.version = "HTTP/1.1"
        self.keep_alive = False
        self.sent_head = False
        self.chunked = False
        self.bodyless = False
        self.body = Body(rfile, 0)

    def run(self) -> bool:
        """Answer one request; True when the connection can carry another."""
        try:
            environ = self.read_request()
        except BadRequest as exc:
            self.refuse(exc.status, str(exc))
            return False
        if environ is None:
            return False
        with self.server.slots:
            self.answer(environ)
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

    def read_request(self) -> dict[str, Any] | None:
        line = self.rfile.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):  # a stray CRLF between requests is allowed once
            line = self.rfile.readline(MAX_LINE + 1)
        if not line.endswith(b"\n"):
            if len(line) > MAX_LINE:
                raise BadRequest(414, "request line too long")
            return None  # the client closed the connection (between requests, or inside a line)
        try:
            method, target, version = line.decode("latin-1").rstrip("\r\n").split(" ")
        except ValueError:
            raise BadRequest(400, "malformed request line") from None
        if version not in ("HTTP/1.1", "HTTP/1.0"):
            raise BadRequest(505 if version.startswith("HTTP/") else 400, f"unsupported protocol {version!r}")
        if not TOKEN.match(method):
            raise BadRequest(400, "malformed request method")
        self.version = version
        environ: dict[str, Any] = dict(self.base)
        self.read_headers(environ)
        self.body = Body(self.rfile, self.body_length(environ))
        connection = environ.get("HTTP_CONNECTION", "").lower()
        self.keep_alive = ("close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection)
        path, _, query = self.split_target(target).partition("?")
        environ.update({
            "REQUEST_METHOD": method, "SCRIPT_NAME": "", "QUERY_STRING": query, "REQUEST_URI": target,
            "PATH_INFO": unquote_to_bytes(path).decode("latin-1") if "%" in path else path,
            "SERVER_PROTOCOL": version, "wsgi.version": (1, 0), "wsgi.url_scheme": "http",
            "wsgi.input": self.body, "wsgi.errors": sys.stderr,
            "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
            "wsgi.input_terminated": True,
        })
        if version == "HTTP/1.1" and environ.get("HTTP_EXPECT", "").lower() == "100-continue":
            self.conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        return environ

    def read_headers(self, environ: dict[str, Any]) -> None:
        total = 0
        while (line := self.rfile.readline(MAX_LINE + 1)) not in (b"\r\n", b"\n"):
            total += len(line)
            if len(line) > MAX_LINE or total > MAX_HEAD:
                raise BadRequest(431, "request headers too large")
            if not line.endswith(b"\n"):
                raise ConnectionResetError("the client closed the connection inside the headers")
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep or not TOKEN.match(name):
                raise BadRequest(400, "malformed header line")
            if "_" in name:  # would pass for the same name with "-": dropped, as waitress does
                continue
            key = name.upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = "HTTP_" + key
            value = value.strip()
            environ[key] = f"{environ[key]},{value}" if key in environ else value

    @staticmethod
    def split_target(target: str) -> str:
        if target.startswith("/"):
            return target
        if target.startswith(("http://", "https://")):  # absolute form: the path is what is served
            rest = target.split("://", 1)[1]
            return "/" + rest.split("/", 1)[1] if "/" in rest else "/"
        raise BadRequest(400, "malformed request target")

    def body_length(self, environ: dict[str, Any]) -> int | None:
        coding = environ.pop("HTTP_TRANSFER_ENCODING", None)
        if coding is not None:
            if "CONTENT_LENGTH" in environ:  # both framings: the classic request smuggling
                raise BadRequest(400, "both Transfer-Encoding and Content-Length")
            if coding.lower() != "chunked":
                raise BadRequest(501, f"unsupported Transfer-Encoding {coding!r}")
            return None
        length = environ.get("CONTENT_LENGTH", "0") or "0"
        if not length.isdigit() or not length.isascii():
            raise BadRequest(400, "malformed Content-Length")
        return int(length)

    def answer(self, environ: dict[str, Any]) -> None:
        self.bodyless = environ["REQUEST_METHOD"] == "HEAD"
        result = None
        try:
            result = self.server.app(environ, self.start_response)
            if isinstance(result, (list, tuple)):  # the whole body at once: it gets a Content-Length
                self.send_head(b"".join(result), whole=True)
            else:
                for chunk in result:
                    if chunk:
                        self.write(chunk)
                if not self.sent_head:
                    self.send_head(b"", whole=True)
                elif self.chunked:
                    self.conn.sendall(b"0\r\n\r\n")
        except OSError:  # the client went away, or the app dropped the connection on purpose
            self.keep_alive = False
        except Exception:
            log.exception("mockagent failed on %s %s", environ["REQUEST_METHOD"], environ["PATH_INFO"])
            self.keep_alive = False
            if not self.sent_head:
                self.refuse(500, "Internal Server Error")
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    log.exception("closing the answer to %s failed", environ["PATH_INFO"])

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if exc_info is not None and self.sent_head:
            raise exc_info[1].with_traceback(exc_info[2])
        self.status, self.headers = status, headers
        return self.write

    def write(self, data: bytes) -> None:
        if not self.sent_head:
            self.send_head(data, whole=False)
        elif self.bodyless:
            pass
        elif self.chunked:
            self.conn.sendall(b"%x\r\n%b\r\n" % (len(data), data))
        else:
            self.conn.sendall(data)

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
        self.conn.sendall(data)

    def refuse(self, status: int, message: str) -> None:
        """Answer `status` in plain text and close: nothing else can be read from this connection."""
        self.keep_alive = False
        body = message.encode()
        self.conn.sendall(f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: text/plain; "
                          f"charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                          .encode() + body)


_date: tuple[int, str] = (0, "")


def http_date(now: float) -> str:
    """The Date header value for `now`, formatted once per second."""
    global _date
    if _date[0] != int(now):
        _date = (int(now), formatdate(int(now), usegmt=True))
    return _date[1]
