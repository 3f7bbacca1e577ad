"""Whether a live task verify polls is on its way to what the cassette shows, or has drifted.

A live agent works at its own pace: polled while it has not moved yet, while it is still in an
earlier state, or while it shows the expected task with less of it so far (polled faster than
the cassette was recorded, it shows each step on its own). One that stopped elsewhere, or moved
past, has drifted: polling on would take an agent that moves on polls beyond the drift.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mockagent.verify.compare import Exchange, differences, untimed

TERMINAL = (
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
)
HALTED = (*TERMINAL, "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED")
EARLY = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")  # states a task passes on its way


def result_of(exchange: Exchange, data: Any) -> Any:
    """What a JSON-RPC answer's `result` holds, or an HTTP+JSON answer's body."""
    if exchange.binding == "JSONRPC" and isinstance(data, dict):
        return data.get("result")
    return data


def task_view(exchange: Exchange) -> Any:
    """The task an answer shows, without timestamps as the comparison reads them (None for a
    stream or no task): two polls with the same view saw the task not move."""
    if exchange.events is not None:
        return None
    result = result_of(exchange, exchange.body)
    task = result.get("task", result) if isinstance(result, dict) else None
    return untimed(task) if isinstance(task, dict) and "status" in task else None


def state_of(exchange: Exchange) -> Any:
    """The state of the task an answer shows (None without one)."""
    view = task_view(exchange)
    return view.get("status", {}).get("state") if isinstance(view, dict) else None


def on_its_way(answer: Exchange, expected: Exchange, seen: Any) -> bool:
    """Whether a live task that does not show what the cassette expects may still get there:
    it has not moved since the last answer (and has not ended), or it moved to an earlier state
    (SUBMITTED or WORKING, while the cassette shows another). One that stopped, or moved within
    the expected state, has drifted."""
    state = state_of(answer)
    if task_view(answer) == seen:  # not moved yet; an interrupted task waits to move on
        return state not in TERMINAL
    if behind(answer, expected):
        return True
    return not halted(answer) and state in EARLY and state != state_of(expected)


def behind(answer: Exchange, expected: Exchange) -> bool:
    """Whether a GetTask answer shows the expected task, only less of it so far: the same
    status, and the first of its artifacts (the last of them with the first of its parts) and
    of its history. A live agent polled faster than the cassette was recorded shows each step on
    its own, where the recording's slower poll saw several at once: the next poll shows more."""
    live, want = result_of(answer, answer.body), result_of(expected, expected.body)
    if not (isinstance(live, dict) and isinstance(want, dict)):
        return False
    trimmed = {**want}
    for key in ("artifacts", "history"):
        have, full = live.get(key) or [], want.get(key) or []
        if not (isinstance(have, list) and isinstance(full, list)) or len(have) > len(full):
            return False
        trimmed[key] = list(full[: len(have)])
    artifacts = trimmed["artifacts"]
    have_last = (live.get("artifacts") or [{}])[-1]
    if artifacts and isinstance(artifacts[-1], dict) and isinstance(have_last, dict):
        parts = artifacts[-1].get("parts") or []
        artifacts[-1] = {**artifacts[-1], "parts": parts[: len(have_last.get("parts") or [])]}
    for key in ("artifacts", "history"):
        if not trimmed[key] and key not in live:
            del trimmed[key]  # an agent leaves an empty list out
    if untimed(trimmed) == untimed(want):
        return False  # not less of it: the same, or other
    shown = {**expected.body, "result": trimmed} if expected.binding == "JSONRPC" else trimmed
    return not differences([answer], [replace(expected, body=shown)])


def halted(exchange: Exchange) -> bool:
    """Whether a GetTask answer shows a task that moves on no more by itself (or no task)."""
    result = result_of(exchange, exchange.body)
    status = result.get("status") if isinstance(result, dict) else None
    return not isinstance(status, dict) or status.get("state") in HALTED
