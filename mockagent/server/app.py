"""The Flask app: mounts cassettes at paths and hands each request to its agent's dialect."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from waitress.channel import ClientDisconnected

from mockagent.cassette.store import LoadedCassette, load_cassette, load_folder
from mockagent.dialects.a2a import A2AAgent
from mockagent.dialects.a2a.rest import error_response
from mockagent.dialects.agentex import AgentexAgent
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.engine.diagnostics import NearMissReport
from mockagent.engine.player import Pace
from mockagent.engine.replay import KEEPALIVE_S, Engine
from mockagent.errors import DropConnection, InternalError, MethodNotFound
from mockagent.server.admin import register_admin

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
log = logging.getLogger("mockagent")


def _log_miss(report: NearMissReport) -> None:
    log.warning("%s", report.text())


class Mounts:
    """Agents by mount name: "" for a single cassette at `/`, NAME for `NAME.yaml` at `/NAME/`."""

    def __init__(self, source: str | Path, **engine_options: Any) -> None:
        path = Path(source)
        self.single = not path.is_dir()
        self.folder = path.parent if self.single else path  # where runtime loads may read from
        cassettes = load_folder(path) if path.is_dir() else {"": load_cassette(path)}
        self._engine_options = engine_options
        self._lock = threading.Lock()  # runtime loads, one at a time
        self.agents = {name: Engine(loaded, on_miss=_log_miss, **engine_options)
                       for name, loaded in cassettes.items()}
        self._handlers = {name: self._handler(engine) for name, engine in self.agents.items()}

    @staticmethod
    def _handler(engine: Engine) -> A2AAgent | AgentexAgent:
        return (AgentexAgent if engine.cassette.protocol == "agentex" else A2AAgent)(engine)

    def load(self, name: str, loaded: LoadedCassette) -> bool:
        """Mount `loaded` as agent `name` at runtime: a new name adds an agent, a known one gets a
        new engine (the old one is closed: its streams end). True when it replaced an agent.
        Raises CassetteError for a cassette the engine refuses."""
        engine = Engine(loaded, on_miss=_log_miss, **self._engine_options)
        handler = self._handler(engine)
        with self._lock:
            old = self._handlers.get(name)
            # Handler first: a request that resolves the new name must find its handler.
            self._handlers[name] = handler
            self.agents[name] = engine
        if old is not None:
            old.close()
        return old is not None

    def prefix(self, name: str) -> str:
        """The mount path of an agent: `/` or `/NAME/`."""
        return f"/{name}/" if name else "/"

    def resolve(self, path: str) -> tuple[str, str] | None:
        """(agent name, path below its mount) for a request path; None when no agent is there."""
        if "" in self.agents:
            return "", path
        name, _, rest = path.lstrip("/").partition("/")
        return (name, "/" + rest if rest else "") if name in self.agents else None

    def handle(self, name: str, http: HttpRequest) -> HttpResponse:
        return self._handlers[name].handle(http)

    def reset(self) -> None:
        """Forget every agent's tasks, journal and use counts."""
        for engine in self.agents.values():
            engine.reset()

    def close(self) -> None:
        """End open streams, stop playing tasks and delivering webhooks."""
        for handler in self._handlers.values():
            handler.close()


class _Dropped(ConnectionResetError, ClientDisconnected):
    """A scripted drop as the WSGI servers understand it: werkzeug takes a ConnectionError and
    waitress a ClientDisconnected as the client having gone, so neither sends the final chunk of
    the stream nor logs a traceback."""


def _droppable(chunks: Iterator[bytes]) -> Iterator[bytes]:
    try:
        yield from chunks
    except DropConnection as exc:
        raise _Dropped(str(exc)) from None


def flask_response(answer: HttpResponse) -> Response:
    """A dialect's answer as a Flask response; a streamed body stays streamed."""
    body = answer.body if isinstance(answer.body, bytes) else _droppable(answer.body)
    return Response(body, status=answer.status, headers=answer.headers)


def create_app(source: str | Path, pace: Pace | str | None = None, pace_cap_ms: float | None = None,
               keepalive_s: float = KEEPALIVE_S, record_mode: str = "none", admin: bool = True) -> Flask:
    """A Flask app serving the cassette file or folder at `source`; raises CassetteError.

    `pace` (`recorded`, `instant`, `scale=F`) and `pace_cap_ms` override every cassette's own
    `clock.pace` and `clock.paceCapMs` for streams; a quiet stream sends a keep-alive comment
    every `keepalive_s` seconds. `record_mode` is what near-miss reports name. `admin` serves the
    admin API under `/_mockagent/` (see mockagent.server.admin); off, that path is like any other.
    """
    mounts = Mounts(source, pace=pace, pace_cap_ms=pace_cap_ms, keepalive_s=keepalive_s,
                    record_mode=record_mode)
    app = Flask(__name__)
    app.extensions["mockagent"] = mounts
    if admin:  # before the catch-all below, which would otherwise take /_mockagent/ too
        register_admin(app, mounts)

    @app.route("/", defaults={"path": ""}, methods=METHODS)
    @app.route("/<path:path>", methods=METHODS)
    def dispatch(path: str) -> Response:
        full = "/" + path
        found = mounts.resolve(full)
        if found is None:
            names = ", ".join(f"/{n}/" for n in mounts.agents)
            answer = error_response(MethodNotFound(f"No agent at {full}; agents are mounted at {names}"))
        else:
            name, rest = found
            base = request.host_url.rstrip("/") + (f"/{name}" if name else "")
            http = HttpRequest(
                method=request.method,
                path=rest,
                base_url=base,
                headers={k.lower(): v for k, v in request.headers.items()},
                query=request.args.to_dict(flat=True),
                body=request.get_data(cache=False),
            )
            answer = mounts.handle(name, http)
        return flask_response(answer)

    @app.errorhandler(Exception)
    def crashed(exc: Exception) -> Response:  # a bug of ours: say so in protocol terms, no traceback
        log.exception("mockagent failed on %s %s", request.method, request.path)
        return flask_response(error_response(InternalError(f"mockagent failed: {type(exc).__name__}")))

    return app
