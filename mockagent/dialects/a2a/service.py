"""What both A2A bindings share: the operation table, service parameters, capability gates.

A binding parses its framing into (operation, params) and renders the result or the error; this
module turns that into an engine `Call`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent import errors
from mockagent.cassette.models import Fault
from mockagent.dialects.a2a.card import GrpcInterface, card_signer, extended_card
from mockagent.dialects.a2a.wire import (
    check_message,
    normalise,
    parse_state,
    render_result,
    state_name,
)
from mockagent.dialects.http import HttpRequest
from mockagent.engine.call import Call
from mockagent.engine.push_configs import checked
from mockagent.engine.replay import Engine
from mockagent.engine.stream import Stream
from mockagent.vocabulary import PUSH_OPERATIONS, STREAMING_OPERATIONS


def requested_version(request: HttpRequest) -> str:
    return (request.headers.get("a2a-version") or request.query.get("A2A-Version") or "").strip()


@dataclass(frozen=True)
class Answer:
    """What a binding sends: a result (JSON) or a stream, and the fault to deliver it with."""

    result: Any = None
    stream: Stream | None = None
    fault: Fault | None = None


class A2AService:
    """One agent's A2A operations over one engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        if engine.cassette.agent is None:
            raise ValueError("an A2A service needs an A2A cassette (with `agent:`)")
        self.agent = engine.cassette.agent
        self.grpc: GrpcInterface | None = None  # set while gRPC serves this agent (the card's)
        self.signer = card_signer(engine.loaded)  # signs the cards when the cassette says so

    def call(
        self,
        operation: str,
        params: dict[str, Any],
        request: HttpRequest,
        binding: str,
        tenant: str | None = None,
        legacy: bool = False,
    ) -> Answer:
        """Run one operation, or raise a ProtocolError (or HttpFault for a scripted status).

        `legacy`: the call came as a v0.3 method (params already converted to v1.0), so a
        missing or 0.3 `A2A-Version` is the expected one. Every call lands in the engine's
        journal, also those refused here.
        """
        params = normalise(params)
        call = Call(
            operation=operation,
            params=params,
            binding=binding,
            tenant=tenant or _text(params.get("tenant")),
            headers=request.headers,
            version="0.3" if legacy else "1.0",
        )
        try:
            self._check_service_parameters(request, legacy)
            self._check_capability(operation, params)
            if operation == "GetExtendedAgentCard":
                card = self._extended_card(request, legacy)
                self.engine.record(call)
                return Answer(card)
            call.params = _validated(operation, params)
        except errors.ProtocolError as exc:
            self.engine.record(call, exc)
            raise
        if operation in STREAMING_OPERATIONS:
            stream = self.engine.stream(call)
            return Answer(stream=stream, fault=stream.fault)
        outcome = self.engine.handle(call)
        return Answer(render_result(operation, outcome), fault=outcome.fault)

    def would_answer(self, operation: str, params: dict[str, Any]) -> bool:
        """Whether the cassette answers this call (a recording proxy forwards the rest)."""
        params = normalise(params)
        try:
            call = Call(operation=operation, params=_validated(operation, params))
        except errors.ProtocolError:
            return False
        return self.engine.answers(call)

    def _check_service_parameters(self, request: HttpRequest, legacy: bool = False) -> None:
        version = requested_version(request)
        if legacy:
            if version and version.split(".")[:2] != ["0", "3"]:
                raise errors.VersionNotSupported(
                    f"A2A-Version {version} is not supported for v0.3 methods",
                    metadata={"version": version},
                )
        # No header means v0.3 by the spec; PascalCase methods exist only in v1, so stay lenient.
        elif version and version.split(".")[0] != "1":
            raise errors.VersionNotSupported(
                f"A2A-Version {version} is not supported; this agent speaks 1.0",
                metadata={"version": version},
            )
        required = [e for e in self.agent.capabilities.extensions or [] if e.get("required")]
        if not required:
            return
        sent = {
            uri.strip()
            for name in ("a2a-extensions", "x-a2a-extensions")
            for uri in request.headers.get(name, "").split(",")
        }
        for extension in required:
            if extension.get("uri") not in sent:
                raise errors.ExtensionSupportRequired(
                    f"Extension {extension.get('uri')} is required: send it in A2A-Extensions",
                    metadata={"extension": str(extension.get("uri"))},
                )

    def _extended_card(self, request: HttpRequest, legacy: bool) -> dict[str, Any]:
        """The extended card, with the v0.3 fields for a v0.3 call (`legacy`). A card a v0.3
        client cannot read cannot be signed for one: an internal error says why (a cassette
        with `v03Card` is refused where it loads instead)."""
        try:
            return extended_card(self.agent, request.base_url, self.grpc, self.signer, legacy)
        except ValueError as exc:
            raise errors.InternalError(str(exc)) from None

    def _check_capability(self, operation: str, params: dict[str, Any]) -> None:
        capabilities = self.agent.capabilities
        if operation in STREAMING_OPERATIONS and not capabilities.streaming:
            raise errors.UnsupportedOperation(
                f"{operation} is not supported: this agent's card says streaming: false"
            )
        inline_push = isinstance(params.get("configuration"), dict) and params["configuration"].get(
            "taskPushNotificationConfig"
        )
        if (operation in PUSH_OPERATIONS or inline_push) and not capabilities.pushNotifications:
            raise errors.PushNotificationNotSupported(
                "Push notifications are not supported: "
                "this agent's card says pushNotifications: false"
            )
        if operation == "GetExtendedAgentCard":
            if not capabilities.extendedAgentCard:
                raise errors.UnsupportedOperation(
                    "GetExtendedAgentCard is not supported: "
                    "this agent's card says extendedAgentCard: false"
                )
            if self.agent.extendedCard is None:
                raise errors.ExtendedAgentCardNotConfigured(
                    "The card declares an extended card, but the cassette has no agent.extendedCard"
                )


_REQUIRED_IDS = {
    "GetTask": ("id",),
    "CancelTask": ("id",),
    "SubscribeToTask": ("id",),
    "CreateTaskPushNotificationConfig": ("taskId",),
    "ListTaskPushNotificationConfigs": ("taskId",),
    "GetTaskPushNotificationConfig": ("taskId", "id"),
    "DeleteTaskPushNotificationConfig": ("taskId", "id"),
}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def check_params(operation: str, params: Any) -> dict[str, Any]:
    """The params `serve` runs `operation` with, or InvalidParams saying why it refuses them (the
    recording proxy answers such a call as `serve` does rather than record it)."""
    if not isinstance(params, dict):
        raise errors.InvalidParams("params must be an object")
    return _validated(operation, normalise(params))


def _validated(operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """Request-shape checks per operation (InvalidParams); returns params ready for the engine."""
    if operation in ("SendMessage", "SendStreamingMessage"):
        config = params.get("configuration")
        if config is not None and not isinstance(config, dict):
            raise errors.InvalidParams("configuration: must be an object")
        push = (config or {}).get("taskPushNotificationConfig")
        if push is not None and not isinstance(push, dict):
            raise errors.InvalidParams(
                "configuration.taskPushNotificationConfig: must be an object"
            )
        if push is not None:  # refused before any task is made for it
            checked(push, "configuration.taskPushNotificationConfig.")
        return {**params, "message": check_message(params)}
    for key in _REQUIRED_IDS.get(operation, ()):
        if not isinstance(params.get(key), str) or not params[key]:
            raise errors.InvalidParams(f"{key}: required")
    if operation == "ListTasks":
        status = params.get("status")
        params = {key: value for key, value in params.items() if key != "status"}
        if status not in (None, "", 0, "TASK_STATE_UNSPECIFIED"):  # unset in ProtoJSON terms
            params["status"] = state_name(parse_state(status))
    return params
