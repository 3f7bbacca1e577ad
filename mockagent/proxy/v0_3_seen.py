"""How a recorded agent speaks A2A v0.3, found from what it answers (the cassette's `agent.v03`).

v0.3 left some of the wire to the agent, and a v1.0 interaction has no field for it: whether the
status update that stops a message/stream at INPUT_REQUIRED says `final: true` (a2a-sdk 1.x's v0.3
compat says it at terminal states only), whether a JSON-RPC error without details carries
`data: null`, and whether REST errors are `{message, type}` or v1.0's `google.rpc.Status`. These
are the agent's ways, not a call's: one section for the cassette, as `agent.history` is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent.dialects.a2a.v0_3_rest import REST_ERROR_TYPES

INTERRUPTED = frozenset(
    {"input-required", "auth-required", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}
)


# The neutral kind of each a2a-sdk error class name; the first kind of a name wins (NoMatch, the
# replay's own miss, is sent as UnsupportedOperationError: that name means UnsupportedOperation).
KIND_OF_REST_TYPE = {
    name: kind for kind, name in reversed(REST_ERROR_TYPES.items()) if kind != "NoMatch"
}


def rest_error_kind(payload: Any) -> str | None:
    """The kind of a v0.3 REST error body `{message, type}` (a2a-sdk 0.3's way); None for
    another body. A `type` no kind has is `Internal`, as the sdk's client reads it."""
    if not isinstance(payload, dict) or "error" in payload:
        return None
    name, message = payload.get("type"), payload.get("message")
    if not isinstance(name, str) or not isinstance(message, str):
        return None
    return KIND_OF_REST_TYPE.get(name, "Internal")


def rest_error_body(payload: Any) -> dict[str, Any] | None:
    """The `{message}` of a v0.3 REST error body, as a google.rpc.Status `error` would carry it;
    None for another body."""
    if rest_error_kind(payload) is None:
        return None
    return {"message": payload["message"]}


@dataclass
class V03Seen:
    """What the recording has seen of the agent's v0.3 wire (the defaults: nothing unusual)."""

    not_final: bool = False  # an interrupted message/stream stop without `final: true`
    null_data: bool = False  # a JSON-RPC error answer with `data: null`
    status_errors: bool = False  # a REST error answer as google.rpc.Status

    @classmethod
    def of(cls, agent: dict[str, Any] | None) -> V03Seen:
        """What an existing cassette's `agent.v03` already says (a recording that adds)."""
        written = (agent or {}).get("v03") or {}
        return cls(
            not_final=written.get("interruptedFinal") is False,
            null_data=written.get("errorData") == "null",
            status_errors=written.get("restErrors") == "status",
        )

    def answer(self, binding: str, status: int, payload: Any) -> None:
        """A v0.3 call's whole answer (not a stream): how its error, if any, is written."""
        if not isinstance(payload, dict):
            return
        if binding == "JSONRPC":
            error = payload.get("error")
            if isinstance(error, dict) and "data" in error and error["data"] is None:
                self.null_data = True
        elif not 200 <= status < 300 and isinstance(payload.get("error"), dict):
            self.status_errors = True

    def event(self, binding: str, operation: str, payload: Any) -> None:
        """One event of a v0.3 stream: a message/stream stop at an interrupted state that does
        not say `final: true` is the agent's way."""
        if operation != "SendStreamingMessage" or not isinstance(payload, dict):
            return
        if binding == "JSONRPC":
            update = payload.get("result")
            if not isinstance(update, dict) or update.get("kind") != "status-update":
                return
        else:
            update = payload.get("statusUpdate")
            if not isinstance(update, dict):
                return
        status = update.get("status")
        state = status.get("state") if isinstance(status, dict) else None
        if state in INTERRUPTED and update.get("final") is not True:
            self.not_final = True

    def section(self) -> dict[str, Any]:
        """The cassette's `agent.v03`, when the agent differs from mockagent's own v0.3."""
        wire: dict[str, Any] = {}
        if self.not_final:
            wire["interruptedFinal"] = False
        if self.null_data:
            wire["errorData"] = "null"
        if self.status_errors:
            wire["restErrors"] = "status"
        return {"v03": wire} if wire else {}
