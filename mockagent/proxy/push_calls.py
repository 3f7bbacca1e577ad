"""Push-notification config calls in a recording (Create, Get, List, Delete; both bindings).

A replay answers these from its own task store, as a stateful agent does: a config the client
creates on a replayed task is there for Get, List and Delete, with the client's own id, URL and
token (so no token needs to be in the cassette). What the store cannot know is where the
recorded agent refused a call: each refusal is recorded as an interaction that matches the
operation (and the config id) once, and answers the recorded error as a CancelTask refusal is
(`recorded_error`): its kind, and its message, details and REST status where they are not the
kind's own.
"""

from __future__ import annotations

from typing import Any

from mockagent.proxy.cancel import recorded_error
from mockagent.proxy.recorder import Recorder

VERBS = {
    "CreateTaskPushNotificationConfig": "create",
    "GetTaskPushNotificationConfig": "get",
    "ListTaskPushNotificationConfigs": "list",
    "DeleteTaskPushNotificationConfig": "delete",
}


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
        payload: Any = None,
        binding: str = "JSONRPC",
        status: int = 200,
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
        error = recorded_error(binding, kind, payload, "", status)  # replies name no task
        words = f"{VERBS.get(operation, operation)} push config {config_id}"
        recorder.add_interaction({"parts": [{"text": words}]}, {"error": error}, match=match)
