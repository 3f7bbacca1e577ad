"""Push-notification config calls in a recording (Create, Get, List, Delete; both bindings).

A replay answers these from its own task store, as a stateful agent does: a config the client
creates on a replayed task is there for Get, List and Delete, with the client's own id, URL and
token (so no token needs to be in the cassette). What the store cannot know is where the
recorded agent refused a call: each refusal is recorded as an interaction that matches the
operation (and the config id) once, and answers the recorded error with its message.
"""

from __future__ import annotations

from typing import Any

from mockagent.proxy.recorder import Recorder

VERBS = {
    "CreateTaskPushNotificationConfig": "create",
    "GetTaskPushNotificationConfig": "get",
    "ListTaskPushNotificationConfigs": "list",
    "DeleteTaskPushNotificationConfig": "delete",
}


def error_text(payload: Any) -> str | None:
    """The message of an error answer (JSON-RPC error object or google.rpc.Status), if any."""
    error = payload.get("error") if isinstance(payload, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else None


class PushCalls:
    """What the recording saw of push-config calls, to record the refusals a replay must repeat."""

    def __init__(self) -> None:
        self._answered: set[tuple[str, str]] = set()  # (operation, config id) that succeeded

    def record(
        self,
        recorder: Recorder,
        operation: str,
        params: dict[str, Any],
        kind: str | None,
        message: str | None,
    ) -> None:
        """One answered call: a success is the replay's store's to give; an error becomes an
        interaction, unless the same call once succeeded (then the sequence of calls, not their
        params, decides: an interaction would take the earlier call's place on replay)."""
        config_id = str(params.get("id") or "")
        key = (operation, config_id)
        if kind is None:
            self._answered.add(key)
            return
        if key in self._answered:
            return
        match: dict[str, Any] = {"operation": operation}
        if config_id:
            match["where"] = {"id": config_id}
        error = {"name": kind, **({"message": message} if message else {})}
        words = f"{VERBS.get(operation, operation)} push config {config_id}"
        recorder.add_interaction({"parts": [{"text": words}]}, {"error": error}, match=match)
