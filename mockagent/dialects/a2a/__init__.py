"""The A2A v1.0 dialect: agent card, JSON-RPC and HTTP+JSON bindings over one engine."""

from __future__ import annotations

from collections.abc import Sequence

from mockagent import errors
from mockagent.dialects.a2a import jsonrpc, rest
from mockagent.dialects.a2a.card import card_response, jwks_response
from mockagent.dialects.a2a.push import PushNotifier
from mockagent.dialects.a2a.service import A2AService
from mockagent.dialects.a2a.signing import JWKS_PATH
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.engine.replay import Engine
from mockagent.vocabulary import CARD_PATH

__all__ = ["A2AAgent"]


class A2AAgent:
    """Routes one agent's HTTP requests: the card, JSON-RPC at the root, REST routes below it."""

    def __init__(self, engine: Engine, webhook_allow: Sequence[str] = ()) -> None:
        self.engine = engine
        self.service = A2AService(engine)
        self.push = PushNotifier(engine, webhook_allow)

    def close(self) -> None:
        """End this agent's streams, playing tasks and webhook deliveries."""
        self.engine.close()
        self.push.close()

    def handle(self, request: HttpRequest) -> HttpResponse:
        """Answer any request under this agent's mount; never raises."""
        if request.path == CARD_PATH and request.method in ("GET", "HEAD"):
            return card_response(
                self.service.agent,
                request,
                self.engine.clock.start,
                self.service.grpc,
                self.service.signer,
            )
        if request.path == JWKS_PATH and request.method in ("GET", "HEAD") and self.service.signer:
            return jwks_response(self.service.signer)
        if request.path in ("", "/") and request.method == "POST":
            return jsonrpc.handle(self.service, request)
        try:
            found = rest.route(request)
        except errors.ProtocolError as exc:
            return rest.error_response(exc)
        if found is None:
            return rest.error_response(
                errors.MethodNotFound(f"No A2A route for {request.method} {request.path or '/'}")
            )
        return rest.handle(self.service, request, found)
