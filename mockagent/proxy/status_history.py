"""How a recorded agent keeps its status messages in a task's history, found from what it answers.

Agents differ here, all within the A2A specification. a2a-sdk's task manager moves a status
message into the history when the next status replaces it, and when the user answers. Others
append a status message to the history as soon as they set it (the same message, the same
messageId, in the status and as the history's last agent message), and keep it as the status
after the user's answer. A few never put one there: their history holds the user's messages and
what they said, and a replaced status message is gone. The engine plays each way (`agent.history`
in a cassette); the recorder learns which from the snapshots it sees and writes what it learned,
so a replay does not show a second copy of a status message, nor lose one.

A client may ask for a shortened history (`historyLength`: the last N messages). What such a
history leaves out was cut off by the client's request, not dropped by the agent: a snapshot
whose history may be cut short tells nothing about what the agent keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def status_message_id(status: dict[str, Any] | None) -> str | None:
    """The messageId of a status's message, if it has one."""
    message = (status or {}).get("message")
    return message.get("messageId") if isinstance(message, dict) else None


def requested_length(value: Any) -> int | None:
    """A request's `historyLength`, when it is one (anything else asks for the whole history)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def last_agent_message(history: list[Any]) -> tuple[int, dict[str, Any]] | None:
    """The index and the last message of `history` that is not the user's."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, dict) and message.get("role") not in ("ROLE_USER", "user"):
            return index, message
    return None


@dataclass
class StatusHistory:
    """What the recording has seen of the agent's way with status messages in history."""

    when_set: bool = False  # a status message stood in the history while it was the status
    kept: bool = False  # a status message was still the status after the user's answer
    never: bool = False  # a replaced status message was missing from the history shown after
    status_ids: dict[str, str | None] = field(default_factory=dict)  # task id → last status's
    status_parts: dict[str, Any] = field(default_factory=dict)  # task id → its message's parts

    @classmethod
    def of(cls, agent: dict[str, Any] | None) -> StatusHistory:
        """What an existing cassette's `agent.history` already says (a recording that adds)."""
        written = (agent or {}).get("history") or {}
        return cls(
            when_set=written.get("statusMessage") == "when-set",
            never=written.get("statusMessage") == "never",
            kept=written.get("afterAnswer") == "kept",
        )

    def history_before_status(
        self, snapshot: dict[str, Any], history_length: int | None = None
    ) -> list[Any]:
        """The snapshot's history without its status message, which a step says. An agent that
        shows its status message as the history's last agent message put it there when it set
        it: the recording says so, and the engine then does the same. `history_length` is what
        the request asked for: a history that long may have been cut short by it."""
        status = snapshot.get("status") or {}
        history = list(snapshot.get("history") or [])
        if history_length is None or len(history) < history_length:
            self._note_dropped(str(snapshot.get("id", "")), status, history)
        self.saw_status(str(snapshot.get("id", "")), status)
        wanted = status_message_id(status)
        last = last_agent_message(history)
        if wanted is None or last is None or last[1].get("messageId") != wanted:
            return history
        self.when_set = True
        del history[last[0]]
        return history

    def _note_dropped(self, task_id: str, status: dict[str, Any], history: list[Any]) -> None:
        """An agent that never archives: the status message seen last on the task was replaced,
        and the history this snapshot shows (it must show one) has no message with its id nor
        its parts. Conservative: a snapshot without history, or with a copy, tells nothing."""
        earlier, parts = self.status_ids.get(task_id), self.status_parts.get(task_id)
        if earlier is None or not history or earlier == status_message_id(status):
            return
        messages = [m for m in history if isinstance(m, dict)]
        if all(m.get("messageId") != earlier and m.get("parts") != parts for m in messages):
            self.never = True

    def saw_status(self, task_id: str, status: dict[str, Any]) -> None:
        """A task's status, in a snapshot or an update: remember its message's id."""
        if task_id:
            self.status_ids[task_id] = status_message_id(status)
            message = status.get("message")
            self.status_parts[task_id] = message.get("parts") if isinstance(message, dict) else None

    def kept_after_answer(self, task_id: str, snapshot: dict[str, Any]) -> bool:
        """Whether the first snapshot answering a user's message on the task still has, as its
        status message, the one the task had when the message went (the agent's question)."""
        asked = self.status_ids.get(task_id)
        kept = asked is not None and status_message_id(snapshot.get("status")) == asked
        self.kept = self.kept or kept
        return kept

    def section(self) -> dict[str, Any]:
        """The cassette's `agent.history`, when the agent differs from the default."""
        history: dict[str, str] = {}
        if self.when_set:
            history["statusMessage"] = "when-set"
        elif self.never:  # an archived copy seen once outweighs a missing one
            history["statusMessage"] = "never"
        if self.kept:
            history["afterAnswer"] = "kept"
        return {"history": history} if history else {}
