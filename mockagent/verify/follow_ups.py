"""Which follow-ups `mockagent verify --update` must move when it re-records what they follow.

A follow-up (`match.task: {from: origin, state: …}`) waits for the state a script stopped at:
its origin's, or, on a task asked more than once, that of the follow-up before it (every
follow-up of a task names the task's first interaction as `from`). The one it waits for is the
latest of those, before it, whose script as written stops at one of its states. When that one
was re-recorded and stops elsewhere now, the follow-up's state that named the old stop names the
new one (the others, in a list, stay); when it no longer stops, the follow-up is stranded.
States are compared as the cassette reads them, whatever their spelling (`input-required`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent.cassette.models import Step
from mockagent.cassette.states import STATE_SPELLINGS


@dataclass(frozen=True)
class Move:
    """Follow-up `index` now waits for `state`: its `task.state` becomes `value`, written by
    replacing `entry` (the written state that named the old stop; None: appended)."""

    index: int
    name: str
    state: str
    value: str | list[str]
    entry: str | None


def stop_state(interaction: dict[str, Any]) -> str | None:
    """The state an interaction's script stops at for a follow-up (its first interrupted state,
    as written), or None when it ends, or never stops, first."""
    for raw in ((interaction.get("reply") or {}).get("task") or {}).get("steps") or []:
        state = Step.model_validate(raw).task_state
        if state is not None and (state.interrupted or state.terminal):
            return str(raw["state"]) if state.interrupted else None
    return None


def same_state(one: Any, other: Any) -> bool:
    """Whether two written states are one state (`input-required`, `TASK_STATE_INPUT_REQUIRED`)."""
    return _state_of(one) is not None and _state_of(one) == _state_of(other)


def _state_of(spelling: Any) -> Any:
    return STATE_SPELLINGS.get(spelling) if isinstance(spelling, str) else None


def awaited(written: list[dict[str, Any]], index: int) -> int | None:
    """The index of the interaction whose stop follow-up `index` waits for (None: not one)."""
    task = (written[index].get("match") or {}).get("task") or {}
    origin, states = task.get("from"), task.get("state")
    if origin is None or states is None:
        return None
    states = states if isinstance(states, list) else [states]
    first = next((k for k, item in enumerate(written) if item.get("name") == origin), None)
    if first is None:
        return None
    for k in range(index - 1, first, -1):
        item = written[k]
        if ((item.get("match") or {}).get("task") or {}).get("from") != origin:
            continue
        stop = stop_state(item)
        if any(same_state(stop, state) for state in states):
            return k
    return first


def moves(
    written: list[dict[str, Any]], recorded: dict[str, dict[str, Any]]
) -> tuple[list[Move], list[str]]:
    """The follow-ups of the re-recorded interactions (`recorded`, by name) that must wait for
    another state now, and the names of those that can wait for none (stranded)."""
    out, stranded = [], []
    for index, item in enumerate(written):
        awaits = awaited(written, index)
        if awaits is None or written[awaits].get("name") not in recorded:
            continue
        now = stop_state(recorded[written[awaits]["name"]])
        if now is None:
            stranded.append(item["name"])
            continue
        old = item["match"]["task"]["state"]
        states = old if isinstance(old, list) else [old]
        if any(same_state(now, state) for state in states):
            continue
        was = stop_state(written[awaits])
        at = next((k for k, state in enumerate(states) if same_state(was, state)), None)
        if at is None and len(states) == 1:
            at = 0  # the one state it waited for, whatever the origin said
        entry = None if at is None else str(states[at])
        value: list[str] = [*states] if at is None else [*states[:at], now, *states[at + 1 :]]
        if at is None:
            value.append(now)
        out.append(Move(index, item["name"], now, value if isinstance(old, list) else now, entry))
    return out, stranded
