"""The one table of A2A's HTTP+JSON routes: the operation a method and a path below an agent's
root call. `serve` routes by it (`rest.route`), the recording proxy classifies by it, and
`verify` names the operations it saw on the wire by it.

A v1.0 route may come after a `/{tenant}` prefix, which may hold slashes (Google CES:
`/v1/projects/p/locations/l/apps/a/message:send`). v0.3's binding lives under `/v1`
(`/v1/message:send`, `/v1/card`), which collides with a tenant `v1`: a path that is exactly
`/v1` + a v0.3 route is v0.3 when `A2A-Version` is missing or 0.3 (a2a-sdk 1.x's compat transport
sends `a2a-version: 0.3`); with `A2A-Version: 1.x` it stays a v1.0 call with tenant `v1`, and
longer prefixes (`/v1/projects/p/...`) are always tenants.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from mockagent import errors

Table = list[tuple[frozenset[str], str, str]]
"""(verbs, path pattern, operation); the pattern's groups become params."""

_ID = r"[^/:]+"
_MESSAGES: Table = [
    (frozenset({"POST"}), r"/message:send", "SendMessage"),
    (frozenset({"POST"}), r"/message:stream", "SendStreamingMessage"),
]
_TASKS: Table = [
    (frozenset({"GET"}), rf"/tasks/(?P<id>{_ID})", "GetTask"),
    (frozenset({"POST"}), rf"/tasks/(?P<id>{_ID}):cancel", "CancelTask"),
    (frozenset({"GET", "POST"}), rf"/tasks/(?P<id>{_ID}):subscribe", "SubscribeToTask"),
    (
        frozenset({"POST"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs",
        "CreateTaskPushNotificationConfig",
    ),
    (
        frozenset({"GET"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs",
        "ListTaskPushNotificationConfigs",
    ),
    (
        frozenset({"GET"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs/(?P<id>{_ID})",
        "GetTaskPushNotificationConfig",
    ),
    (
        frozenset({"DELETE"}),
        rf"/tasks/(?P<taskId>{_ID})/pushNotificationConfigs/(?P<id>{_ID})",
        "DeleteTaskPushNotificationConfig",
    ),
]
ROUTES: Table = [
    *_MESSAGES,
    (frozenset({"GET"}), r"/tasks", "ListTasks"),
    *_TASKS,
    (frozenset({"GET"}), r"/extendedAgentCard", "GetExtendedAgentCard"),
]
"""v1.0's routes, after any tenant prefix."""
V0_3_ROUTES: Table = [*_MESSAGES, *_TASKS, (frozenset({"GET"}), r"/card", "GetExtendedAgentCard")]
"""v0.3's routes, below `/v1`: no ListTasks, and the extended card at `/card`."""

_COMPILED = [
    (verbs, re.compile(rf"^(?:/(?P<tenant>.+?))?{path}\Z"), op) for verbs, path, op in ROUTES
]
_V03_COMPILED = [(verbs, re.compile(rf"^/v1{path}\Z"), op) for verbs, path, op in V0_3_ROUTES]


class Route(NamedTuple):
    """A routed REST request: its operation, its path params, and whether it is v0.3 (`/v1/…`)."""

    operation: str
    path_params: dict[str, str]
    v0_3: bool = False


def classify(method: str, path: str, version: str = "") -> Route | None:
    """The route of `method path` below an agent's root: a v1.0 route after any tenant prefix,
    or `/v1` + a v0.3 route when `version` (the request's `A2A-Version`) is missing or 0.3.
    None when no route has this path; a path routed for other verbs only raises MethodNotFound
    with status 405."""
    path_known = False
    if not version or version.split(".")[:2] == ["0", "3"]:
        for verbs, pattern, operation in _V03_COMPILED:
            found = pattern.match(path)
            if found:
                if method in verbs:
                    return Route(operation, found.groupdict(), v0_3=True)
                path_known = True
        if path_known:
            raise errors.MethodNotFound(f"{method} is not allowed on {path}", http_status=405)
    for verbs, pattern, operation in _COMPILED:
        found = pattern.match(path)
        if found:
            if method in verbs:
                return Route(
                    operation, {k: v for k, v in found.groupdict().items() if v is not None}
                )
            path_known = True
    if path_known:
        raise errors.MethodNotFound(f"{method} is not allowed on {path}", http_status=405)
    return None
