"""The agents a server serves, by mount name: one cassette at `/`, or a folder's at `/NAME/`;
each cassette's engine and its dialect's handler (A2A or Agentex), runtime loads, resets, and
the GRPC interface their cards list while gRPC serves them."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mockagent.cassette.loader import LoadedCassette, load_cassette, load_folder
from mockagent.dialects.a2a import A2AAgent
from mockagent.dialects.a2a.card import GrpcInterface
from mockagent.dialects.a2a.service import A2AService
from mockagent.dialects.agentex import AgentexAgent
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.engine.diagnostics import NearMissReport
from mockagent.engine.journal import Numbering
from mockagent.engine.replay import Engine

log = logging.getLogger("mockagent")


def _log_miss(report: NearMissReport) -> None:
    log.warning("%s", report.text())


class Mounts:
    """Agents by mount name: "" for a single cassette at `/`, NAME for `NAME.yaml` at `/NAME/`."""

    def __init__(
        self,
        source: str | Path | LoadedCassette,
        webhook_allow: Sequence[str] = (),
        **engine_options: Any,
    ) -> None:
        # A LoadedCassette is served as it is: a cassette made in memory (the pytest plugin's
        # agent without a cassette file) has no file to load.
        if isinstance(source, LoadedCassette):
            path, self.single, cassettes = Path(source.path), True, {"": source}
        else:
            path = Path(source)
            self.single = not path.is_dir()
            cassettes = load_folder(path) if path.is_dir() else {"": load_cassette(path)}
        self.folder = path.parent if self.single else path  # where runtime loads may read from
        self.numbering = Numbering()  # one count over every agent's journal
        self.webhook_allow = tuple(webhook_allow)  # push destinations besides loopback
        self._engine_options = {**engine_options, "numbering": self.numbering}
        self._lock = threading.Lock()  # runtime loads, one at a time
        self.agents = {
            name: Engine(loaded, on_miss=_log_miss, **self._engine_options)
            for name, loaded in cassettes.items()
        }
        self.grpc_url: str | None = None  # `host:port` while gRPC serves these agents
        self._handlers = {name: self._handler(name, engine) for name, engine in self.agents.items()}

    def _handler(self, name: str, engine: Engine) -> A2AAgent | AgentexAgent:
        if engine.cassette.protocol == "agentex":
            return AgentexAgent(engine)
        agent = A2AAgent(engine, self.webhook_allow)
        if self.grpc_url is not None:
            agent.service.grpc = self._grpc_interface(name)
        return agent

    def _grpc_interface(self, name: str) -> GrpcInterface:
        assert self.grpc_url is not None
        return GrpcInterface(self.grpc_url, tenant=name or None)  # a folder's tenant: its name

    def serve_grpc(self, url: str) -> None:
        """gRPC serves these agents at `url` (`host:port`) from now on: their cards list it."""
        with self._lock:
            self.grpc_url = url
            for name, handler in self._handlers.items():
                if isinstance(handler, A2AAgent):
                    handler.service.grpc = self._grpc_interface(name)

    def a2a_service(self, name: str) -> A2AService | None:
        """The A2A service of agent `name` (None for no agent or an Agentex one)."""
        handler = self._handlers.get(name)
        return handler.service if isinstance(handler, A2AAgent) else None

    def load(self, name: str, loaded: LoadedCassette) -> bool:
        """Mount `loaded` as agent `name` at runtime: a new name adds an agent, a known one gets a
        new engine (the old one is closed: its streams end). True when it replaced an agent.
        Raises CassetteError for a cassette the engine refuses."""
        engine = Engine(loaded, on_miss=_log_miss, **self._engine_options)
        handler = self._handler(name, engine)
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

    def reset(self, names: list[str] | None = None) -> None:
        """Forget the tasks, journal and use counts of the agents named (default: every agent)."""
        agents = dict(self.agents)
        selected = list(agents) if names is None else names
        if set(selected) >= set(agents):  # no journal keeps a number: count from 1 again
            self.numbering.restart()  # first: a call meanwhile gets a number a reset then forgets
        for name in selected:
            agents[name].reset()

    def close(self) -> None:
        """End open streams, stop playing tasks and delivering webhooks."""
        for handler in self._handlers.values():
            handler.close()
