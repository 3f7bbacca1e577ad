"""A server on 127.0.0.1, port 0, in a daemon thread: for tests and the pytest fixture."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flask import Flask
from werkzeug.serving import WSGIRequestHandler, make_server

from mockagent.engine.journal import JournalEntry
from mockagent.engine.replay import Engine
from mockagent.server.app import Mounts, create_app

POLL_INTERVAL = 0.01  # how often serve_forever looks for a stop where `_wake` cannot wake it


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # the journal records calls; access lines would only clutter test output


class ServerThread:
    """werkzeug's threaded server in a daemon thread; `start()` returns once it listens."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self._server = make_server(host, port, app, threaded=True, request_handler=_QuietHandler)
        self.host = host
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, args=(POLL_INTERVAL,),
                                        name=f"mockagent:{self.port}", daemon=True)

    @property
    def url(self) -> str:
        """The server root, `http://127.0.0.1:PORT`."""
        return f"http://{self.host}:{self.port}"

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
        return self.agent_url(name) + "/.well-known/agent-card.json"

    def journal(self, name: str | None = None) -> list[JournalEntry]:
        """Calls to one agent, or to every agent in mount order."""
        engines = [self.agents[name]] if name is not None else list(self.agents.values())
        return [entry for engine in engines for entry in engine.journal.entries]

    def reset(self) -> None:
        self.mounts.reset()

    def start(self) -> ServerThread:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop taking calls, end open streams, and return once the server thread has ended."""
        mounts = self.app.extensions.get("mockagent")
        if mounts is not None:  # a recording proxy has none
            mounts.close()  # open streams end, so their threads do too
        if self._thread.is_alive():
            self._wake()
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def _wake(self) -> None:
        """Make serve_forever's select() return now rather than at its next poll.

        Shutting down the listening socket makes it readable at once (Linux); the loop's accept
        then fails quietly, and the loop goes round until `shutdown()` has asked it to stop, a
        moment later. New connections are refused from here on, which is what stopping means.
        """
        try:
            self._server.socket.shutdown(socket.SHUT_RDWR)
        except OSError:  # not supported here (some BSDs): the poll interval will do
            pass


@contextmanager
def serve_in_thread(source: str | Path, host: str = "127.0.0.1", port: int = 0,
                    **app_options: Any) -> Iterator[ServerThread]:
    """Serve a cassette file or folder for the duration of a `with` block.

    `app_options` go to `create_app`: pace, pace_cap_ms, keepalive_s, admin.
    """
    server = ServerThread(create_app(source, **app_options), host, port).start()
    try:
        yield server
    finally:
        server.stop()
