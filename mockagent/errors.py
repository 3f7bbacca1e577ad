"""Exceptions. One root, `MockagentError`; every binding renders `ProtocolError`s from its own table.

Engine code raises the neutral errors below; it never knows JSON-RPC codes or HTTP statuses.
"""

from __future__ import annotations

from typing import Any


class MockagentError(Exception):
    """Root of every error mockagent raises on purpose."""


class CassetteError(MockagentError):
    """A cassette that cannot be loaded; the message names file, line, interaction and field."""

    def __init__(self, message: str, *, path: str = "", line: int | None = None) -> None:
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


class ProtocolError(MockagentError):
    """An error the client receives in its protocol's shape.

    `kind` is the neutral name each binding's error table maps to a code and a status.
    `metadata` lands in `google.rpc.ErrorInfo.metadata` (strings only); `details` are extra
    typed detail objects (already JSON) appended after the ErrorInfo.
    """

    kind = "Internal"
    default_message = "Internal error"

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: dict[str, str] | None = None,
        details: list[dict[str, Any]] | None = None,
        http_status: int | None = None,
    ) -> None:
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        self.metadata = metadata or {}
        self.details = details or []
        self.http_status = http_status  # overrides the table's status where a binding needs it


def _error(kind: str, default_message: str) -> type[ProtocolError]:
    return type(kind + "Error", (ProtocolError,), {"kind": kind, "default_message": default_message})


ParseError = _error("Parse", "Invalid JSON payload")
InvalidRequest = _error("InvalidRequest", "Request payload validation error")
MethodNotFound = _error("MethodNotFound", "Method not found")
InvalidParams = _error("InvalidParams", "Invalid parameters")
InternalError = _error("Internal", "Internal error")
TaskNotFound = _error("TaskNotFound", "Task not found")
TaskNotCancelable = _error("TaskNotCancelable", "Task cannot be canceled")
PushNotificationNotSupported = _error(
    "PushNotificationNotSupported", "Push Notification is not supported"
)
UnsupportedOperation = _error("UnsupportedOperation", "This operation is not supported")
ContentTypeNotSupported = _error("ContentTypeNotSupported", "Incompatible content types")
InvalidAgentResponse = _error("InvalidAgentResponse", "Invalid agent response")
ExtendedAgentCardNotConfigured = _error(
    "ExtendedAgentCardNotConfigured", "Extended agent card is not configured"
)
ExtensionSupportRequired = _error("ExtensionSupportRequired", "Extension support is required")
VersionNotSupported = _error("VersionNotSupported", "This protocol version is not supported")


class HttpFault(MockagentError):
    """A scripted HTTP failure (`fault: {status: 503}`): the binding answers with that status."""

    def __init__(self, fault: Any) -> None:  # fault: cassette.models.Fault
        super().__init__(f"scripted HTTP {fault.status}")
        self.fault = fault


class DropConnection(MockagentError):
    """Raised inside a streamed body to cut the connection (`fault: {dropAfter: N}`)."""


class NoMatch(ProtocolError):
    """A call that no interaction answers; carries the near-miss report."""

    kind = "NoMatch"
    default_message = "No interaction matches this call"

    def __init__(self, report: Any) -> None:  # report: engine.diagnostics.NearMissReport
        super().__init__(
            report.text(),  # the whole report: clients put the message in their exception
            metadata={"cassette": report.cassette, "operation": report.operation},
            details=[report.as_detail()],
        )
        self.report = report


class StoreError(ProtocolError):
    """A shared task store that cannot be reached or used. `serve` exits on it at start; while
    serving, the client gets it in its protocol's shape as 503 (try again), never a traceback."""

    kind = "Unavailable"
    default_message = "The shared task store is unavailable"


ERROR_KINDS: dict[str, type[ProtocolError]] = {
    cls.kind: cls
    for cls in (
        ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError, TaskNotFound,
        TaskNotCancelable, PushNotificationNotSupported, UnsupportedOperation,
        ContentTypeNotSupported, InvalidAgentResponse, ExtendedAgentCardNotConfigured,
        ExtensionSupportRequired, VersionNotSupported,
    )
}
"""Neutral error kinds by name, for cassettes that script an error reply (`error: TaskNotFound`)."""
