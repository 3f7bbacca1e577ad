"""Reading one HTTP/1.x request off a connection: the request line, the headers and a body
reader, into a WSGI environ. What breaks the framing is a BadRequest with its status."""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

MAX_LINE = 8192  # a request line or header line longer than this is refused
MAX_HEAD = 65536  # all header lines together
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")


class BadRequest(Exception):
    """A request that breaks HTTP/1.x framing: answered with `status`, then the connection
    closes."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Body(io.RawIOBase):
    """`wsgi.input`: the request body, `length` bytes or chunked (None); it never reads past its
    end."""

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
            got = self._rfile.readinto(view[: min(len(view), self._left)])
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


@dataclass
class Request:
    """A request read up to its body: the WSGI environ, its body reader and how the connection
    goes on."""

    environ: dict[str, Any]
    body: Body
    version: str
    keep_alive: bool
    expects_continue: bool


def read_request(rfile: Any, base: dict[str, str]) -> Request | None:
    """The next request on `rfile`; None when the client closed the connection."""
    line = rfile.readline(MAX_LINE + 1)
    if line in (b"\r\n", b"\n"):  # a stray CRLF between requests is allowed once
        line = rfile.readline(MAX_LINE + 1)
    if not line.endswith(b"\n"):
        if len(line) > MAX_LINE:
            raise BadRequest(414, "request line too long")
        return None  # the client closed the connection (between requests, or inside a line)
    try:
        method, target, version = line.decode("latin-1").rstrip("\r\n").split(" ")
    except ValueError:
        raise BadRequest(400, "malformed request line") from None
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise BadRequest(
            505 if version.startswith("HTTP/") else 400, f"unsupported protocol {version!r}"
        )
    if not TOKEN.match(method):
        raise BadRequest(400, "malformed request method")
    environ: dict[str, Any] = dict(base)
    read_headers(rfile, environ)
    return _request(environ, method, target, version, rfile)


SIMPLE = re.compile(
    r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (/[^ \r\n]{0,8100}) (HTTP/1\.[01])\r\n"
    r"((?:[!#$%&'*+\-.^`|~0-9A-Za-z]+:[^\r\n]{0,8100}\r\n)*)\r\n"
)
HEADER = re.compile(r"([^:]+):([^\r\n]*)\r\n")
# the environ key of the headers by lowercased name, where the loop parsed them
HEADERS = "mockagent.headers"


def parse_request(rfile: io.BytesIO, base: dict[str, str]) -> Request | None:
    """`read_request` over a whole request already in memory (the event loop's): a plain head is
    taken apart by two regular expressions in one go; anything else is read line by line."""
    data = rfile.getvalue()
    head = SIMPLE.match(data[: data.find(b"\r\n\r\n") + 4].decode("latin-1"))
    if (
        head is None or len(head.group(4)) > MAX_HEAD
    ):  # errors, underscores, odd targets: the careful way
        return read_request(rfile, base)
    method, target, version, lines = head.groups()
    environ: dict[str, Any] = dict(base)
    headers: dict[str, str] = {}
    for name, value in HEADER.findall(lines):  # no underscores: SIMPLE took none
        headers[name.lower()] = add_header(environ, name, value)
    environ[HEADERS] = headers
    rfile.seek(head.end())
    return _request(environ, method, target, version, rfile)


def _request(
    environ: dict[str, Any], method: str, target: str, version: str, rfile: Any
) -> Request:
    """The request, its headers in `environ` and its body next on `rfile`."""
    body = Body(rfile, body_length(environ))
    connection = environ.get("HTTP_CONNECTION", "").lower()
    path, _, query = split_target(target).partition("?")
    environ.update(
        {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            "QUERY_STRING": query,
            "REQUEST_URI": target,
            "PATH_INFO": unquote_to_bytes(path).decode("latin-1") if "%" in path else path,
            "SERVER_PROTOCOL": version,
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": body,
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "wsgi.input_terminated": True,
        }
    )
    return Request(
        environ,
        body,
        version,
        keep_alive="close" not in connection
        if version == "HTTP/1.1"
        else "keep-alive" in connection,
        expects_continue=version == "HTTP/1.1"
        and environ.get("HTTP_EXPECT", "").lower() == "100-continue",
    )


def read_headers(rfile: Any, environ: dict[str, Any]) -> None:
    """Header lines up to the blank line, as CGI keys (repeated ones joined with commas)."""
    total = 0
    while (line := rfile.readline(MAX_LINE + 1)) not in (b"\r\n", b"\n"):
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
        add_header(environ, name, value)


def add_header(environ: dict[str, Any], name: str, value: str) -> str:
    """Put a header into `environ` as its CGI key (a repeated one joined with a comma); its value
    there."""
    key = name.upper().replace("-", "_")
    if key != "CONTENT_TYPE" and key != "CONTENT_LENGTH":
        key = "HTTP_" + key
    value = value.strip()
    if key in environ:
        value = f"{environ[key]},{value}"
    environ[key] = value
    return value


def split_target(target: str) -> str:
    """The path (and query) of an origin-form or absolute-form request target."""
    if target.startswith("/"):
        return target
    if target.startswith(("http://", "https://")):  # absolute form: the path is what is served
        rest = target.split("://", 1)[1]
        return "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    raise BadRequest(400, "malformed request target")


def body_length(environ: dict[str, Any]) -> int | None:
    """The body's Content-Length, or None for a chunked body."""
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
