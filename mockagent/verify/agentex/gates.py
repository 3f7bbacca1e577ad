"""The gates of an Agentex script, opened in `mockagent verify` as the recorded client did.

A gate is a step with `after: {finds: N}` (N get-or-creates: `task/create` of the task's name)
or `after: {polls: N}` (N polls); the steps without `after` that follow it show with it. One
poll showed the group: a `GET /messages?task_id=` when it says messages (`say`), a
`GET /tasks/{id}` when it is a state (the replay counts both as polls, as the platform's clients
use either). In a CreateTask script only `strict` polls gates wait (the others play as the task
is created). The cassette is asked as often as the gate waits for and the call that passes it
is compared: the calls before it saw the recorded agent's pace, not what it answers.

The live platform is asked while its answer is not the expected one but its task is on its way
there, for at most `POLL_TIMEOUT_S` (a platform moves a task on in its own time, or on polls):
it shows fewer messages than expected (the one that differs is then compared among all of
them), or its task has not changed since before the gate and has not ended. Asking past that
would move such a platform beyond the drift.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockagent.verify.agentex.calls import AgentexSide, task_of
from mockagent.verify.calls import POLL_GAP_S, POLL_TIMEOUT_S
from mockagent.verify.compare import Exchange, differences, untimed
from mockagent.verify.follow_ups import same_state

ENDED = ("COMPLETED", "CANCELED", "FAILED", "TERMINATED", "TIMED_OUT")
NO_NAME = "its get-or-creates need the task's name, which the recording does not name"


@dataclass(frozen=True)
class Gates:
    """The task whose script's gates are opened: its agent, its name (None: not recorded), and
    its id on each side."""

    agent: str
    name: str | None
    live_id: str
    replay_id: str


def kinds(steps: list[Any], create: bool) -> list[tuple[str, int]]:
    """(how, count) of each gate, up to where the script ends: `finds`, or the poll that shows
    it, `messages` or `tasks`."""
    out = []
    for step in steps[1:] if create else steps:
        after = step.after
        if after is not None and after.finds:
            out.append(("finds", after.finds))
        elif after is not None and after.polls and (after.strict or not create):
            out.append(("messages" if step.say is not None else "tasks", after.polls))
        if any(same_state(step.state, ended) for ended in ENDED):
            break
    return out


def open_gates(
    steps: list[Any], gates: Gates, live: AgentexSide, replay: AgentexSide, create: bool
) -> tuple[bool, str]:
    """Open the gates of `steps` on both sides, keeping the call that passes each: (whether
    there was one, why the rest could not be opened)."""
    found = kinds(steps, create)
    for how, count in found:
        if how == "finds" and gates.name is None:
            return bool(found), NO_NAME

        def ask(side: AgentexSide, task_id: str, how: str = how) -> Exchange:
            if how == "finds":
                return side.rpc(gates.agent, "task/create", {"name": gates.name})
            if how == "messages":
                return side.get(f"/messages?task_id={task_id}")
            return side.get(f"/tasks/{task_id}")

        _compare(ask, count, gates, live, replay)
    if found and settles(steps, create):
        _compare(lambda side, task_id: side.get(f"/tasks/{task_id}"), 1, gates, live, replay)
    return bool(found), ""


def _compare(
    ask: Callable[[AgentexSide, str], Exchange],
    count: int,
    gates: Gates,
    live: AgentexSide,
    replay: AgentexSide,
) -> None:
    """Ask the cassette `count` times and keep the last answer, and the live platform's once
    it is there or will not get there (`until`)."""
    before = live.seen.get(gates.live_id)
    for _ in range(count - 1):
        ask(replay, gates.replay_id)
    expected = replay.keep(ask(replay, gates.replay_id))
    live.keep(until(lambda: ask(live, gates.live_id), expected, before))


def settles(steps: list[Any], create: bool) -> bool:
    """Whether the script has a gate: then, after its last one, the task as it settles (its
    state) is asked for and compared too, as a client that polls the task to its end sees it
    (a final state written, or left out, after the last gate comes with it)."""
    return any(
        step.after is not None
        and (step.after.finds or (step.after.polls and (step.after.strict or not create)))
        for step in (steps[1:] if create else steps)
    )


def until(ask: Callable[[], Exchange], expected: Exchange, before: Exchange | None) -> Exchange:
    """Ask the live platform while its answer is not `expected` but on its way there (see
    above; `before`: the last answer that showed its task), for at most POLL_TIMEOUT_S."""
    deadline = time.monotonic() + POLL_TIMEOUT_S
    answer = ask()
    while (
        differences([answer], [expected])
        and on_its_way(answer, expected, before)
        and time.monotonic() < deadline
    ):
        time.sleep(POLL_GAP_S)
        answer = ask()
    return answer


def on_its_way(answer: Exchange, expected: Exchange, before: Exchange | None) -> bool:
    """Whether a live answer that is not the expected one may still get there."""
    shown, wanted = answer.body, expected.body
    if isinstance(shown, list) and isinstance(wanted, list):  # messages: fewer than expected
        return len(shown) < len(wanted)
    task, seen = task_of(answer), task_of(before) if before is not None else None
    if task is None or task.get("status") in ENDED:
        return False
    return seen is not None and untimed(task) == untimed(seen)
