"""The recording proxy's own errors on the wire: raised as ProtocolErrors anywhere in a call and
rendered here, by one table of the binding's shapes (as the dialects render the engine's).

An error with HTTP status 502 (the upstream did not answer, or not in its protocol) says why
in the status line too (`Refused`): clients that show only the status of a failed request
(a2a-sdk's card resolver) then show why. A JSON-RPC error travels with HTTP 200.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockagent import errors
from mockagent.dialects.a2a import rest
from mockagent.dialects.a2a.error_table import jsonrpc_error
from mockagent.dialects.agentex.error_table import platform_error, rpc_error
from mockagent.dialects.http import HttpResponse
from mockagent.proxy.upstream import Refused

Shape = Callable[[errors.ProtocolError, Any], HttpResponse]

SHAPES: dict[str | None, Shape] = {
    "JSONRPC": lambda exc, request_id: HttpResponse.json(jsonrpc_error(exc, request_id)),
    "HTTP+JSON": lambda exc, _: rest.error_response(exc),
    None: lambda exc, _: rest.error_response(exc),  # a call we only pass through
    "AGENTEX-RPC": lambda exc, request_id: HttpResponse.json(rpc_error(exc, request_id)),
    "AGENTEX": lambda exc, _: platform_error(exc),  # the platform's REST routes
}
"""Binding → the error's answer in its shape, given the error and the request's id."""


RPC = frozenset({"JSONRPC", "AGENTEX-RPC"})
"""The bindings whose errors travel in the body, with HTTP 200 unless `render` is told."""


def render(
    binding: str | None, exc: errors.ProtocolError, request_id: Any = None, status: int = 200
) -> HttpResponse:
    """`exc` as the proxy answers it to a call of `binding` (see SHAPES); an RPC error with HTTP
    `status` (a refused body: 413, 408 …), any other with the status `exc` names."""
    answer = SHAPES[binding](exc, request_id)
    if binding in RPC:
        answer.status = status
    return Refused.of(answer, str(exc)) if answer.status == 502 else answer
