"""Which tasks a store forgets once it keeps more than its cap, and what it says of them.

A long run must not grow without bound: past `cap` tasks, or once the messages clients sent the
tasks take more than TASK_BYTES, the task that finished longest ago (completed, failed,
canceled, rejected) is evicted; when none has finished (a client that sends `returnImmediately`
and never polls), the oldest unfinished task is, and the server log says so.
A call that names an evicted task gets TaskNotFound saying so, never a bare "not found": the last
`REMEMBERED` evicted ids are kept for that, and an older one is told that tasks were evicted and
that it may be among them.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable

from mockagent import errors

TASK_CAP = 100_000
"""How many tasks a store keeps by default (`serve --task-cap`)."""
TASK_BYTES = 128 * 2**20
"""About how much of what clients sent (messages, params) a store's tasks hold (128 MB)."""
REMEMBERED = 10_000
"""How many evicted task ids are remembered to name them in TaskNotFound."""

log = logging.getLogger("mockagent")


class Eviction:
    """The ids of finished tasks, oldest first, and those evicted past `cap` tasks or `budget`
    bytes of client messages."""

    def __init__(self, cap: int = TASK_CAP, budget: int = TASK_BYTES) -> None:
        if cap < 1:
            raise ValueError(f"the task cap must keep 1 task or more, not {cap}")
        self.cap, self.budget = cap, budget
        self._finished: OrderedDict[str, None] = OrderedDict()
        # the last REMEMBERED evicted ids, each with why: "evicted[ unfinished (state)]: …"
        self._gone: OrderedDict[str, str] = OrderedDict()
        self.count = 0  # tasks evicted since the last reset
        self.unfinished = 0  # of which had not finished

    def finished(self, task_id: str) -> None:
        """Task `task_id` reached a terminal state (a second terminal step keeps its place)."""
        self._finished.setdefault(task_id, None)

    def oldest_finished(self, still: Callable[[str], bool], keep: str = "") -> str | None:
        """The id of the task that finished longest ago, but `keep`, that `still` has finished
        (one a scripted cancel revived has not, one evicted otherwise is gone), forgotten here
        with those found stale; None when there is none."""
        stale, found = [], None
        for task_id in self._finished:  # oldest first
            if task_id == keep:
                continue
            if still(task_id):
                found = task_id
                break
            stale.append(task_id)
        for task_id in stale:
            del self._finished[task_id]
        if found is not None:
            del self._finished[found]
        return found

    def evicted(self, task_id: str, unfinished: str = "", full: bool = False) -> None:
        """Task `task_id` was evicted; `unfinished`: its state if it had not finished; `full`:
        for the bytes the tasks held, not their count."""
        why = evicted_why(self.cap, unfinished, self.budget if full else None)
        self._gone[task_id] = why
        if len(self._gone) > REMEMBERED:
            self._gone.popitem(last=False)
        self.count += 1
        if unfinished:
            self.unfinished += 1
            n = self.unfinished
            if n & (n - 1) == 0:  # the 1st, 2nd, 4th, 8th…: never silent, never a flood
                log.warning(
                    "mockagent: task %s %s (%s unfinished tasks evicted so far)",
                    task_id,
                    why,
                    f"{n:,}",
                )

    def not_found(self, task_id: object) -> errors.TaskNotFound | None:
        """TaskNotFound for an id the store does not have, saying it was (or may have been)
        evicted; None when no task was evicted, so the plain "not found" is the whole truth."""
        if not self.count:
            return None
        why = self._gone.get(task_id) if isinstance(task_id, str) else None
        return evicted_not_found(task_id, self.count, self.cap, why)


def evicted_why(cap: int, unfinished: str = "", budget: int | None = None) -> str:
    """Why a task was evicted: past `cap` tasks, or past `budget` bytes of client messages;
    `unfinished`: its state, if it had not finished."""
    why = (
        f"the tasks held more than {budget / 2**20:.3g} MB of client messages"
        if budget is not None
        else f"more than {cap:,} tasks"
    )
    if unfinished:
        why = f"evicted unfinished ({unfinished}): {why} and none finished"
    else:
        why = f"evicted: {why}"
    # the byte budget is fixed; a cap the user can raise
    return why + (" (a fixed budget)" if budget is not None else "; raise --task-cap")


def evicted_not_found(
    task_id: object, count: int, cap: int, why: str | None
) -> errors.TaskNotFound:
    """TaskNotFound for an id a store that evicted `count` tasks does not have: `why` it was
    evicted, when it is known to have been, or that it may have been."""
    metadata = {"taskId": str(task_id or "")}
    if why is not None:
        return errors.TaskNotFound(f"Task {task_id} was {why}", metadata=metadata)
    return errors.TaskNotFound(
        f"Task {task_id} not found; {count:,} tasks were evicted (more than {cap:,}, or "
        "too many bytes), so it may have been one of them; raise --task-cap",
        metadata=metadata,
    )
