"""What both A2A bindings share: the operation table, service parameters, capability gates.

A binding parses its framing into (operation, params) and renders the result or the error; this
module turns that into an engine `Call`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mockagent import errors
from mockagent.dialects.a2a.card import build_extended_card
from mockagent.dialects.a2a.wire import check_message, normalise, parse_state, render_result, state_name
from mockagent.dialects.http import HttpRequest
from mockagent.engine.call import Call
from mockagent.engine.replay import Engine

STREAMING = frozenset({"SendStreamingMessage", "SubscribeToTask"})
PUSH = frozenset({
    "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig",
})
OPERATIONS = frozenset({"SendMessage", "GetTask", "ListTasks", "CancelTask", "GetExtendedAgentCard"}) | STREAMING | PUSH
"""Every A2A v1.0 operation (JSON-RPC method names are the operation names)."""


def requested_version(request: HttpRequest) -> str:
    return (request.headers.get("a2a-version") or request.query.get("A2A-Version") or "").strip()


class A2AService:
    """One agent's A2A operations over one engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.agent = engine.cassette.agent

    def call(self, operation: str, params: dict[str, Any], request: HttpRequest, binding: str,
             tenant: str | None = None) -> Any:
        """Run one operation; return its result JSON or raise a ProtocolError.

        Every call lands in the engine's journal, also those refused here.
        """
        params = normalise(params)
        call = Call(operation=operation, params=params, binding=binding,
                    tenant=tenant or _text(params.get("tenant")), headers=request.headers)
        try:
            self._check_service_parameters(request)
            self._check_capability(operation)
            if operation == "GetExtendedAgentCard":
                card = build_extended_card(self.agent, request.base_url)
                self.engine.record(call)
                return card
            call = replace(call, params=_validated(operation, params))
        except errors.ProtocolError as exc:
            self.engine.record(call, exc)
            raise
        return render_result(operation, self.engine.handle(call))

    def _check_service_parameters(self, request: HttpRequest) -> None:
        version = requested_version(request)
        # No header means v0.3 by the spec; PascalCase methods exist only in v1, so stay lenient.
        if version and version.split(".")[0] != "1":
            raise errors.VersionNotSupported(
                f"A2A-Version {version} is not supported; this agent speaks 1.0", metadata={"version": version}
            )
        sent = {
            uri.strip()
            for name in ("a2a-extensions", "x-a2a-extensions")
            for uri in request.headers.get(name, "").split(",")
        }
        for extension in self.agent.capabilities.extensions or []:
            if extension.get("required") and extension.get("uri") not in sent:
                raise errors.ExtensionSupportRequired(
                    f"Extension {extension.get('uri')} is required: send it in A2A-Extensions",
                    metadata={"extension": str(extension.get("uri"))},
                )

    def _check_capability(self, operation: str) -> None:
        capabilities = self.agent.capabilities
        if operation in STREAMING:
            reason = "this agent's card says streaming: false" if not capabilities.streaming else (
                "mockagent does not replay streams yet")
            raise errors.UnsupportedOperation(f"{operation} is not supported: {reason}")
        if operation in PUSH:
            if not capabilities.pushNotifications:
                raise errors.PushNotificationNotSupported(
                    "Push notifications are not supported: this agent's card says pushNotifications: false")
            raise errors.UnsupportedOperation(f"{operation}: mockagent does not replay push notifications yet")
        if operation == "GetExtendedAgentCard":
            if not capabilities.extendedAgentCard:
                raise errors.UnsupportedOperation(
                    "GetExtendedAgentCard is not supported: this agent's card says extendedAgentCard: false")
            if self.agent.extendedCard is None:
                raise errors.ExtendedAgentCardNotConfigured(
                    "The card declares an extended card, but the cassette has no agent.extendedCard")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _validated(operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """Request-shape checks per operation (InvalidParams); returns params ready for the engine."""
    if operation == "SendMessage":
        config = params.get("configuration")
        if config is not None and not isinstance(config, dict):
            raise errors.InvalidParams("configuration: must be an object")
        return {**params, "message": check_message(params)}
    if operation in ("GetTask", "CancelTask"):
        if not isinstance(params.get("id"), str) or not params["id"]:
            raise errors.InvalidParams("id: the task id is required")
    if operation == "ListTasks":
        status = params.get("status")
        params = {key: value for key, value in params.items() if key != "status"}
        if status not in (None, "", 0, "TASK_STATE_UNSPECIFIED"):  # unset in ProtoJSON terms
            params["status"] = state_name(parse_state(status))
    return params
