"""Which finished tasks a store forgets once it keeps more than its cap, and what it says of them.

A long run must not grow without bound: past `cap` finished tasks (completed, failed, canceled,
rejected), the one that finished longest ago is evicted. A call that names an evicted task gets
TaskNotFound saying so, never a bare "not found": the last `REMEMBERED` evicted ids are kept for
that, and an older one is told that tasks were evicted and that it may be among them.
"""

from __future__ import annotations

from collections import OrderedDict

from mockagent import errors

TASK_CAP = 100_000
"""How many finished tasks a store keeps by default (`serve --task-cap`)."""
REMEMBERED = 10_000
"""How many evicted task ids are remembered to name them in TaskNotFound."""


class Eviction:
    """The ids of finished tasks, oldest first, and those evicted past `cap`."""

    def __init__(self, cap: int = TASK_CAP) -> None:
        if cap < 1:
            raise ValueError(f"the task cap must keep 1 finished task or more, not {cap}")
        self.cap = cap
        self._finished: OrderedDict[str, None] = OrderedDict()
        self._gone: OrderedDict[str, None] = OrderedDict()  # the last REMEMBERED evicted ids
        self.count = 0  # tasks evicted since the last reset

    def finished(self, task_id: str) -> list[str]:
        """Task `task_id` reached a terminal state: the ids to evict now (the oldest finished
        past the cap), each forgotten here as evicted."""
        self._finished[task_id] = None  # a second terminal step keeps its first place
        out = []
        while len(self._finished) > self.cap:
            gone, _ = self._finished.popitem(last=False)
            out.append(gone)
            self._gone[gone] = None
            if len(self._gone) > REMEMBERED:
                self._gone.popitem(last=False)
            self.count += 1
        return out

    def not_found(self, task_id: object) -> errors.TaskNotFound | None:
        """TaskNotFound for an id the store does not have, saying it was (or may have been)
        evicted; None when no task was evicted, so the plain "not found" is the whole truth."""
        if not self.count:
            return None
        cap = f"{self.cap:,}"
        metadata = {"taskId": str(task_id or "")}
        if isinstance(task_id, str) and task_id in self._gone:
            return errors.TaskNotFound(
                f"Task {task_id} was evicted: more than {cap} finished tasks; raise --task-cap",
                metadata=metadata,
            )
        return errors.TaskNotFound(
            f"Task {task_id} not found; {self.count:,} finished tasks were evicted (more than "
            f"{cap}), so it may have been one of them; raise --task-cap",
            metadata=metadata,
        )
