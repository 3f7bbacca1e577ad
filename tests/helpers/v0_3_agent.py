"""An A2A v0.3 agent and a v0.3 client, both from a2a-sdk 1.x's compat layer.

The agent is the a2a-sdk agent of tests/helpers/upstream.py served with `enable_v0_3_compat`
(JSON-RPC `message/send`, `tasks/get`, … at `/`, REST under `/v1`); its card lists only v0.3
interfaces, as an agent that speaks nothing newer would. The client is the SDK's compat transport,
chosen by a card interface with protocolVersion 0.3, driving the scenarios of
tests/helpers/fidelity.py with the wire captured.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCard, AgentInterface
from starlette.applications import Starlette

from mockagent.verify.compare import Exchange
from tests.helpers import fidelity
from tests.helpers.upstream import UpstreamAgent, UpstreamExecutor, agent_card

VERSION = "0.3"


def v0_3_card(url: str, version: str = VERSION) -> AgentCard:
    """The upstream's card with its interfaces at `url` saying protocolVersion 0.3 only (or
    `version`: a v1.0 client's card for the same agent)."""
    card = agent_card(url)
    del card.supported_interfaces[:]
    for binding in ("JSONRPC", "HTTP+JSON"):
        card.supported_interfaces.append(
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        )
    return card


def create_v0_3_app(url: str) -> Starlette:
    """The a2a-sdk agent speaking v0.3 on both bindings (and v1.0 too, as the SDK does)."""
    card = v0_3_card(url)
    handler = DefaultRequestHandler(
        agent_executor=UpstreamExecutor(0.02), task_store=InMemoryTaskStore(), agent_card=card
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        try:
            yield
        finally:
            await handler.aclose()

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
        *create_rest_routes(handler, enable_v0_3_compat=True),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.handler = handler
    return app


@contextlib.contextmanager
def serve_v0_3() -> Iterator[UpstreamAgent]:
    """The v0.3 agent on 127.0.0.1, a free port, for the block."""
    agent = UpstreamAgent(app_factory=create_v0_3_app).start()
    try:
        yield agent
    finally:
        agent.stop()


async def run_scenario(
    url: str, binding: str, name: str, version: str = VERSION
) -> tuple[list[Exchange], str]:
    """Scenario `name` by a v0.3 client (or one of `version`) of the agent at `url`: (the
    exchanges, the error or "")."""
    return await fidelity.run_scenario(v0_3_card(url, version), binding, name)


def run_all(url: str, bindings: tuple[str, ...]) -> dict[tuple[str, str], tuple[Any, str]]:
    """Every scenario over every binding by a v0.3 client, in one fixed order."""
    return fidelity.run_all(v0_3_card(url), bindings)
