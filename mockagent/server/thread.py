"""A server on 127.0.0.1, port 0, in a daemon thread: for tests and the pytest fixture."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flask import Flask

from mockagent.engine.journal import JournalEntry
from mockagent.engine.replay import Engine
from mockagent.server.app import Mounts, create_app
from mockagent.server.http import HttpServer


class ServerThread:
    """`serve`'s HTTP server in a daemon thread; it listens from construction on."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self._server = HttpServer(
            app, host, port, threads=1024, loop=True
        )  # a test's open streams never queue
        self.host = host
        self.port = self._server.port
        # Not the loop's own name (mockagent:PORT): a thread dump tells the two apart.
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"mockagent-serve:{self.port}", daemon=True
        )

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
        self._server.shutdown()
        if self._thread.is_alive():
            self._thread.join()


@contextmanager
def serve_in_thread(
    source: str | Path, host: str = "127.0.0.1", port: int = 0, **app_options: Any
) -> Iterator[ServerThread]:
    """Serve a cassette file or folder for the duration of a `with` block.

    `app_options` go to `create_app`: pace, pace_cap_ms, keepalive_s, admin.
    """
    server = ServerThread(create_app(source, **app_options), host, port).start()
    try:
        yield server
    finally:
        server.stop()
