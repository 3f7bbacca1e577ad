"""Exceptions: one root, `MockagentError`; each binding renders `ProtocolError`s from its table.

Engine code raises the neutral errors below; it never knows JSON-RPC codes or HTTP statuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class MockagentError(Exception):
    """Root of every error mockagent raises on purpose."""


class MockagentWarning(UserWarning):
    """Something a test author must know that fails nothing: a recording kept beside a
    replayed cassette, calls a recording replaced (shown in pytest's warnings summary)."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a cassette: where (file and line, when known) and what."""

    message: str
    path: str = ""
    line: int | None = None

    def __str__(self) -> str:
        if self.path and self.line:
            return f"{self.path}:{self.line}: {self.message}"
        return f"{self.path}: {self.message}" if self.path else self.message


class CassetteError(MockagentError):
    """A cassette that cannot be loaded; the message names file, line, interaction and field.

    `problems` is every problem found, the first being `message` at `path`:`line`; the error
    reads as all of them, one `file:line: message` a line.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        line: int | None = None,
        problems: Sequence[Problem] = (),
    ) -> None:
        first = Problem(message, path, line)
        self.problems = [first, *problems[1:]] if problems else [first]
        super().__init__("\n".join(str(problem) for problem in self.problems))
        self.path = path
        self.line = line
        self.message = message

    @classmethod
    def of(cls, problems: Sequence[Problem]) -> CassetteError:
        """The error reporting every one of `problems` (at least one)."""
        first = problems[0]
        return cls(first.message, path=first.path, line=first.line, problems=problems)


class InteractionChangeError(MockagentError):
    """A change to an agent's interactions while it serves (the admin API, `MockAgent.expect`)
    that cannot be made; the subclasses say why, and each binding gives them a status."""


class DuplicateInteraction(InteractionChangeError):
    """An added interaction's name is taken by one the agent has."""


class UnknownInteraction(InteractionChangeError):
    """No interaction of the agent has the name given."""


class InteractionFollowed(InteractionChangeError):
    """The interaction to remove is the `from` of a follow-up the agent keeps."""


class UnplayableInteraction(InteractionChangeError):
    """An added interaction that could never do what it says: `mockagent lint` has findings
    about it (every call it matches taken by an earlier one, a fault the card never lets fire,
    a gate nobody opens, …). The message is the findings' text, one a line; `findings` are
    `mockagent.lint.run.Finding`s."""

    def __init__(self, findings: list[Any]) -> None:
        super().__init__("\n".join(str(finding) for finding in findings))
        self.findings = findings


class SharedInteractions(InteractionChangeError):
    """The agent's state is in a shared store (`--store redis`): every process and host must
    answer alike, and a change here would reach only this one."""


class ProtocolError(MockagentError):
    """An error the client receives in its protocol's shape.

    `kind` is the neutral name each binding's error table maps to a code and a status.
    `metadata` lands in `google.rpc.ErrorInfo.metadata` (strings only); `details` are extra
    typed detail objects (already JSON) appended after the ErrorInfo. `own_info=False` leaves
    that ErrorInfo out: the `details` are all there is (a recorded agent's, as it sent them).
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
        own_info: bool = True,
    ) -> None:
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        self.metadata = metadata or {}
        self.details = details or []
        self.http_status = http_status  # overrides the table's status where a binding needs it
        self.own_info = own_info

    @property
    def agent_type(self) -> str | None:
        """The `type` of a recorded v0.3 agent's REST error `{message, type}` that no kind has,
        which a recording keeps as the error's one detail `{type: …}`; None for any other."""
        if self.own_info or len(self.details) != 1 or set(self.details[0]) != {"type"}:
            return None
        kept = self.details[0]["type"]
        return kept if isinstance(kept, str) else None


# The protocol's errors. The class names end in Error (as a2a-sdk's do, and as clients see them);
# the shorter names without it are what the engine and the bindings raise.


class ParseError(ProtocolError):
    """The request body is not JSON."""

    kind = "Parse"
    default_message = "Invalid JSON payload"


class InvalidRequestError(ProtocolError):
    """JSON that is not a valid request (JSON-RPC envelope, REST body)."""

    kind = "InvalidRequest"
    default_message = "Request payload validation error"


class MethodNotFoundError(ProtocolError):
    """No such method or route (or a verb the route does not take)."""

    kind = "MethodNotFound"
    default_message = "Method not found"


class InvalidParamsError(ProtocolError):
    """The call's parameters are missing or of the wrong shape."""

    kind = "InvalidParams"
    default_message = "Invalid parameters"


class InternalError(ProtocolError):
    """Something failed inside mockagent, or a cassette scripts an internal error."""

    kind = "Internal"
    default_message = "Internal error"


class TaskNotFoundError(ProtocolError):
    """No task with that id (for this agent)."""

    kind = "TaskNotFound"
    default_message = "Task not found"


class TaskNotCancelableError(ProtocolError):
    """CancelTask on a task in a terminal state."""

    kind = "TaskNotCancelable"
    default_message = "Task cannot be canceled"


class PushNotificationNotSupportedError(ProtocolError):
    """The agent's card does not declare push notifications."""

    kind = "PushNotificationNotSupported"
    default_message = "Push Notification is not supported"


class UnsupportedOperationError(ProtocolError):
    """Not for this agent or task: a capability its card lacks, a follow-up to a finished task."""

    kind = "UnsupportedOperation"
    default_message = "This operation is not supported"


class ContentTypeNotSupportedError(ProtocolError):
    """A request Content-Type the binding does not take."""

    kind = "ContentTypeNotSupported"
    default_message = "Incompatible content types"


class InvalidAgentResponseError(ProtocolError):
    """The agent answered with something that is not a valid answer (or a cassette scripts it)."""

    kind = "InvalidAgentResponse"
    default_message = "Invalid agent response"


class ExtendedAgentCardNotConfiguredError(ProtocolError):
    """The card declares an extended card, but the cassette has none."""

    kind = "ExtendedAgentCardNotConfigured"
    default_message = "Extended agent card is not configured"


class ExtensionSupportRequiredError(ProtocolError):
    """The agent requires an extension the client did not name in `A2A-Extensions`."""

    kind = "ExtensionSupportRequired"
    default_message = "Extension support is required"


class VersionNotSupportedError(ProtocolError):
    """The `A2A-Version` the client sent is not one this method is served in."""

    kind = "VersionNotSupported"
    default_message = "This protocol version is not supported"


InvalidRequest = InvalidRequestError
MethodNotFound = MethodNotFoundError
InvalidParams = InvalidParamsError
TaskNotFound = TaskNotFoundError
TaskNotCancelable = TaskNotCancelableError
PushNotificationNotSupported = PushNotificationNotSupportedError
UnsupportedOperation = UnsupportedOperationError
ContentTypeNotSupported = ContentTypeNotSupportedError
InvalidAgentResponse = InvalidAgentResponseError
ExtendedAgentCardNotConfigured = ExtendedAgentCardNotConfiguredError
ExtensionSupportRequired = ExtensionSupportRequiredError
VersionNotSupported = VersionNotSupportedError


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


class UpstreamError(ProtocolError):
    """A recording proxy's upstream did not answer (refused, timed out, broke off): HTTP 502,
    google.rpc code UNAVAILABLE (gRPC's mapping of 502), JSON-RPC internal error; the message
    says why (`upstream http://… refused the connection`)."""

    kind = "Upstream"
    default_message = "The upstream agent did not answer"


ERROR_KINDS: dict[str, type[ProtocolError]] = {
    cls.kind: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        TaskNotFound,
        TaskNotCancelable,
        PushNotificationNotSupported,
        UnsupportedOperation,
        ContentTypeNotSupported,
        InvalidAgentResponse,
        ExtendedAgentCardNotConfigured,
        ExtensionSupportRequired,
        VersionNotSupported,
    )
}
"""Neutral error kinds by name, for cassettes that script an error reply (`error: TaskNotFound`)."""


def scripted(
    name: str,
    message: str | None = None,
    details: list[dict[str, Any]] | None = None,
    http_status: int | None = None,
) -> ProtocolError:
    """The error a cassette's `error:` names. Its `details`, when given, are every detail the
    client gets (what a recorded agent sent), in place of mockagent's own ErrorInfo; its
    `http_status`, the REST status in place of the kind's own (what a recorded agent answered)."""
    return ERROR_KINDS[name](
        message, details=details, own_info=details is None, http_status=http_status
    )
