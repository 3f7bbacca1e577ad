"""Task states: the neutral enum, and the spellings a cassette may write them in."""

from __future__ import annotations

from enum import Enum
from typing import Any


class TaskState(str, Enum):
    """Neutral task states; each dialect renders them (A2A: `TASK_STATE_WORKING`)."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    AUTH_REQUIRED = "auth_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    REJECTED = "rejected"
    # Agentex's own: INTERRUPTED waits like INPUT_REQUIRED; the other three end a task.
    INTERRUPTED = "interrupted"
    TERMINATED = "terminated"
    TIMED_OUT = "timed_out"
    DELETED = "deleted"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATES

    @property
    def interrupted(self) -> bool:
        return self in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED, TaskState.INTERRUPTED)

    @classmethod
    def parse(cls, value: Any) -> TaskState:
        """Accept `TASK_STATE_INPUT_REQUIRED`, `INPUT_REQUIRED`, `input-required` and friends.

        Lenient, for states read off the wire; a cassette's states are the fixed set of
        STATE_SPELLINGS, which its JSON Schema can list.
        """
        if isinstance(value, TaskState):
            return value
        text = str(value).strip().lower().replace("-", "_")
        text = ALIASES.get(text.removeprefix("task_state_"), text.removeprefix("task_state_"))
        try:
            return cls(text)
        except ValueError:
            names = ", ".join("TASK_STATE_" + s.name for s in cls)
            raise ValueError(f"unknown task state {value!r}; use one of {names}") from None


TERMINAL_STATES = frozenset(
    {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
        TaskState.TERMINATED,
        TaskState.TIMED_OUT,
        TaskState.DELETED,
    }
)
AGENTEX_STATES = frozenset(
    {
        TaskState.INTERRUPTED,
        TaskState.TERMINATED,
        TaskState.TIMED_OUT,
        TaskState.DELETED,
    }
)
ALIASES = {"running": "working", "cancelled": "canceled"}  # Agentex says RUNNING


def _spellings() -> dict[str, TaskState]:
    """`TASK_STATE_INPUT_REQUIRED`, `INPUT_REQUIRED`, `input_required`, `input-required` (A2A
    v0.3), and Agentex's `RUNNING` and the British `CANCELLED`, each in upper and lower case."""
    out: dict[str, TaskState] = {}
    for state in TaskState:
        hyphenated = state.value.replace("_", "-")
        for word in (f"TASK_STATE_{state.name}", state.name, state.value, hyphenated):
            out.setdefault(word, state)
    for alias, value in ALIASES.items():
        out[alias.upper()] = out[alias] = TaskState(value)
    return out


STATE_SPELLINGS: dict[str, TaskState] = _spellings()
"""Every way a cassette may write a task state, and the state it means."""
