"""An A2A call through the recording proxy in our terms: what a request is (`classify`), and
what its answer says (`outcome`: a result, an error's kind, or neither)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mockagent import errors
from mockagent.dialects.a2a import rest
from mockagent.dialects.a2a.error_table import TABLE
from mockagent.dialects.a2a.service import check_params
from mockagent.dialects.http import HttpRequest, parse_json
from mockagent.proxy.v0_3_recording import request_in, rest_request_in
from mockagent.proxy.v0_3_seen import rest_error_kind
from mockagent.vocabulary import A2A_OPERATIONS

KIND_BY_CODE = {row.code: kind for kind, row in reversed(TABLE.items()) if kind != "NoMatch"}
"""JSON-RPC code → error kind; where two kinds share a code, the first in the table (Internal,
not Unavailable, for -32603)."""
KIND_BY_REASON = {
    row.reason: kind for kind, row in TABLE.items() if row.reason and kind != "NoMatch"
}


@dataclass(frozen=True)
class Classified:
    """What a request to the upstream is, in our terms."""

    binding: str
    operation: str
    params: dict[str, Any]
    route: str  # the path our own routes would see ("/" for JSON-RPC)
    request_id: Any = None
    v0_3: bool = False  # an A2A v0.3 call, recorded as its v1.0 operation
    sent: Any = None  # the params as `serve` reads them (`check`)

    def check(self) -> None:
        """Raise the ProtocolError `serve` refuses the params with, if it does: a call recorded
        with params the replay refuses would be a cassette entry that matches anything
        (`match: {}`) and answers every later call with the upstream's error."""
        check_params(self.operation, self.sent)


def classify(
    request: HttpRequest, jsonrpc_paths: set[str], rest_bases: list[str]
) -> Classified | None:
    """The operation of a request to an upstream serving JSON-RPC at `jsonrpc_paths` and
    HTTP+JSON below `rest_bases` (longest first), or None for anything we only pass through."""
    if request.method == "POST" and request.path.rstrip("/") in jsonrpc_paths:
        try:
            payload = parse_json(request.body)
        except ValueError:
            return None
        if not isinstance(payload, dict):  # `malformed` answered it, unless a hook made it
            return None
        call = _jsonrpc(payload)
        if call is not None:
            return call
    for base in rest_bases:
        if request.path.startswith(base + "/") or request.path == base:
            routed = replace(request, path=request.path[len(base) :])
            try:
                found = rest.route(routed)
                if found is not None:
                    params, _ = rest.request_params(routed, found.path_params)
                    if found.v0_3:
                        params = rest_request_in(found.operation, params)
                    return Classified(
                        "HTTP+JSON", found.operation, params, routed.path, None, found.v0_3, params
                    )
            except errors.ProtocolError:
                return None
    return None


def _jsonrpc(payload: dict[str, Any]) -> Classified | None:
    """A JSON-RPC request of an A2A operation (v1.0 or v0.3), or None."""
    method, params, request_id = payload.get("method"), payload.get("params"), payload.get("id")
    if method in A2A_OPERATIONS:
        kept = params if isinstance(params, dict) else {}
        return Classified("JSONRPC", method, kept, "/", request_id, sent=params)
    v0_3 = request_in(method, params)
    if v0_3 is None:
        return None
    operation, converted = v0_3
    return Classified("JSONRPC", operation, converted, "/", request_id, True, converted)


def outcome(binding: str, status: int, payload: Any) -> tuple[Any, str | None]:
    """(result, error kind) of an answer; (None, None) when it is neither."""
    if binding == "JSONRPC":
        if not isinstance(payload, dict):
            return None, None
        if isinstance(payload.get("error"), dict):
            code = payload["error"].get("code")  # the agent's: may be a list (unhashable)
            return None, KIND_BY_CODE.get(code, "Internal") if isinstance(code, int) else "Internal"
        return (payload["result"], None) if "result" in payload else (None, None)
    if 200 <= status < 300:
        return payload, None
    typed = rest_error_kind(payload)  # v0.3 REST: `{message, type}`, not google.rpc.Status
    if typed is not None:
        return None, typed
    details = (payload.get("error") or {}).get("details") if isinstance(payload, dict) else None
    reasons = [d.get("reason") for d in _listed(details) if isinstance(d, dict)]
    found = (KIND_BY_REASON[r] for r in reasons if isinstance(r, str) and r in KIND_BY_REASON)
    return None, next(found, "Internal")


def _listed(value: Any) -> list[Any]:
    """`value` if it is a list, else none: an agent's `details` may be anything."""
    return value if isinstance(value, list) else []
