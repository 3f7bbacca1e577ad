"""A server on 127.0.0.1, port 0, in a daemon thread: for tests and the pytest fixture.

It is werkzeug's threaded WSGI server (as pytest-httpserver uses): a thread per connection, so
every open stream holds one and fresh calls are still answered. Its `serve_forever()` checks for
`shutdown()` every `POLL_S`; werkzeug's default of 0.5 s would make every stop take that long.
werkzeug answers HTTP/1.1 with `Connection: close`: a client opens a connection per call.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask
from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

from mockagent.engine.journal import JournalEntry
from mockagent.engine.replay import Engine
from mockagent.server.app import create_app, served_on
from mockagent.server.mounts import Mounts
from mockagent.vocabulary import CARD_PATH

if TYPE_CHECKING:
    from mockagent.server.grpc_server import GrpcServer

POLL_S = 0.005
"""How often `serve_forever()` looks for a stop: a stop takes at most this long."""
log = logging.getLogger("mockagent")


class _Quiet(WSGIRequestHandler):
    """No access log: a test suite's output is its own (werkzeug would add a stderr handler)."""

    def log(self, type: str, message: str, *args: Any) -> None:
        if type == "error":
            log.error("mockagent: " + message, *args)

    def connection_dropped(self, error: BaseException, environ: Any = None) -> None:
        """The client left, or a scripted drop cut the answer: the connection is over. Cut
        before the first byte, werkzeug would keep it open for a next request, while the
        client waits for this answer until its own timeout."""
        self.close_connection = True


class _BindFailed(Exception):
    """An OSError from bind() or listen(), carried past werkzeug, which would exit the process."""


class _Server(ThreadedWSGIServer):
    """werkzeug's threaded server that names its threads `mockagent:PORT:CLIENT-PORT` (a thread
    dump, and the leak tests, can find them) and cuts the connections still open at a stop."""

    def __init__(self, host: str, port: int, app: Flask) -> None:
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()
        try:
            super().__init__(host, port, app, _Quiet)
        except _BindFailed as exc:
            raise exc.__cause__ or exc from None

    def server_bind(self) -> None:
        try:
            super().server_bind()
        except OSError as exc:
            raise _BindFailed() from exc

    def server_activate(self) -> None:
        try:
            super().server_activate()
        except OSError as exc:
            raise _BindFailed() from exc

    def process_request(self, request: Any, client_address: Any) -> None:
        # A stream's events are small writes that must leave at once, not wait for an ACK.
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            self.open.add(request)
        threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"mockagent:{self.port}:{client_address[1]}",
            daemon=True,
        ).start()

    def shutdown_request(self, request: Any) -> None:
        with self.lock:
            self.open.discard(request)
        super().shutdown_request(request)

    def log(self, type: str, message: str, *args: Any) -> None:
        if type == "error":
            log.error("mockagent: " + message, *args)

    def cut(self) -> None:
        """Shut every open connection down: a thread blocked on a slow client ends."""
        with self.lock:
            open_now = list(self.open)
        for conn in open_now:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed meanwhile


class ServerThread:
    """A WSGI server in a daemon thread; it listens from construction on."""

    def __init__(
        self, app: Flask, host: str = "127.0.0.1", port: int = 0, grpc_port: int | None = None
    ) -> None:
        self.app = app
        served_on(app, host)  # on loopback, agents answer only loopback and allowed Hosts
        self._server = _Server(host, port, app)
        self.host = host
        self.port = self._server.port
        self.grpc: GrpcServer | None = None
        if grpc_port is not None:  # the A2A gRPC binding beside, over the same agents
            from mockagent.server.grpc_server import GrpcServer  # needs mockagent-server[grpc]

            try:
                self.grpc = GrpcServer(self.mounts, self.url, host, grpc_port)
            except BaseException:
                self._server.server_close()
                raise
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(POLL_S,),
            name=f"mockagent-serve:{self.port}",
            daemon=True,
        )

    @property
    def url(self) -> str:
        """The server root, `http://127.0.0.1:PORT`."""
        return f"http://{self.host}:{self.port}"

    @property
    def grpc_target(self) -> str:
        """The gRPC server's `host:port` (a gRPC channel's target); ValueError without one."""
        if self.grpc is None:
            raise ValueError("gRPC is not served: start the server with grpc_port")
        return self.grpc.target

    @property
    def mounts(self) -> Mounts:
        return self.app.extensions["mockagent"]

    @property
    def agents(self) -> dict[str, Engine]:
        """Engines by mount name ("" for a single cassette)."""
        return self.mounts.agents

    def agent_url(self, name: str = "") -> str:
        """The URL of one agent (the card's interface URL)."""
        if name not in self.agents:
            raise KeyError(f"no agent {name!r}; agents: {', '.join(map(repr, self.agents))}")
        return self.url + self.mounts.prefix(name).rstrip("/")

    def card_url(self, name: str = "") -> str:
        return self.agent_url(name) + CARD_PATH

    def journal(self, name: str | None = None) -> list[JournalEntry]:
        """Calls to one agent, or to every agent in mount order."""
        engines = [self.agents[name]] if name is not None else list(self.agents.values())
        return [entry for engine in engines for entry in engine.journal.entries]

    def reset(self) -> None:
        self.mounts.reset()

    def start(self) -> ServerThread:
        self._thread.start()
        if self.grpc is not None:
            self.grpc.start()
        return self

    def stop(self) -> None:
        """Stop taking calls, end open streams, and return once the server thread has ended."""
        mounts = self.app.extensions.get("mockagent")
        if mounts is not None:  # a recording proxy has none
            mounts.close()  # open streams end, so their threads do too
        if self.grpc is not None:
            self.grpc.stop()
        if self._thread.is_alive():
            self._server.shutdown()  # returns once serve_forever() has (within POLL_S)
            self._thread.join()
        self._server.server_close()
        self._server.cut()


@contextmanager
def serve_in_thread(
    source: str | Path,
    host: str = "127.0.0.1",
    port: int = 0,
    grpc_port: int | None = None,
    **app_options: Any,
) -> Iterator[ServerThread]:
    """Serve a cassette file or folder for the duration of a `with` block.

    `app_options` go to `create_app`: pace, pace_cap_ms, keepalive_s, admin. `grpc_port` also
    serves the A2A gRPC binding there (0: a free port; needs mockagent-server[grpc]).
    """
    server = ServerThread(create_app(source, **app_options), host, port, grpc_port).start()
    try:
        yield server
    finally:
        server.stop()
