"""Where an engine keeps the state that several server processes must share.

Tasks, the journal, the use counts of interactions, and the counters behind the clock and the id
factory. `TaskStore` keeps them in this process (the default). A shared store
(`mockagent.engine.store.redis.RedisStore`) reads what a call needs as it begins and writes what it
changed as it ends, refused when another process changed it meanwhile (see
`engine/store/transactions.py`), so `serve --workers N` and several hosts behind a load balancer
answer as one agent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from mockagent import errors
from mockagent.engine.clock import Clock
from mockagent.engine.ids import IdFactory
from mockagent.engine.journal import JOURNAL_BYTES, JOURNAL_SIZE, Journal
from mockagent.engine.journal_cut import size
from mockagent.engine.store.eviction import TASK_BYTES, TASK_CAP, Eviction
from mockagent.engine.tasks import Task
from mockagent.errors import StoreError


class Counters(Protocol):
    """What a store saves besides tasks: the engine's clock, id factory and reset generation."""

    clock: Clock
    ids: IdFactory
    generation: int


class TaskStore:
    """Tasks by id in creation order, the journal and use counts: in this process's memory."""

    shared = False
    kind = "memory"
    """What `GET /_mockagent/health` calls the store: `memory` or `redis`."""
    poll_s: float | None = None
    """How often a stream looks again for events made elsewhere (None: it is told of every one)."""
    wait_s: float = 0.0
    """A shared store: how long a call may take to be written before it is Unavailable."""

    def __init__(self, interactions: int) -> None:
        self._size = interactions
        self.journal_size = JOURNAL_SIZE
        self.task_cap = TASK_CAP
        self.clear()

    def bound(self, journal_size: int, task_cap: int) -> None:
        """Keep the last `journal_size` calls and at most `task_cap` tasks (before the
        first call: it starts afresh); ValueError for a negative size or a cap under 1."""
        self.journal_size, self.task_cap = journal_size, task_cap
        self.clear()

    def clear(self) -> None:
        """Forget every task, journal entry and use."""
        self._tasks: dict[str, Task] = {}
        self._made = 0  # tasks added since the last reset, evicted ones included
        self._eviction = Eviction(self.task_cap, TASK_BYTES)
        self._charged: dict[str, int] = {}  # task id → about the bytes of what clients sent it
        self._bytes = 0
        self.journal = Journal(self.journal_size, JOURNAL_BYTES)
        self._counts = [0] * self._size
        self.uses: Sequence[int] = self._counts  # read only: a use is counted with `use()`

    def use(self, index: int) -> None:
        """Count one use of interaction `index`."""
        self._counts[index] += 1

    def unlimited(self) -> None:
        """Uses go past `times` (the engine's allow_repeats): a shared store stops checking."""

    def renumber(self, kept: Sequence[int | None]) -> None:
        """The engine's interactions changed while it serves: interaction i is the one that was
        at `kept[i]` (None: a new one, unused). Only an in-process store allows it."""
        if self.shared:
            raise StoreError("a shared store keeps the interactions it was started with")
        self._counts[:] = [0 if old is None else self._counts[old] for old in kept]
        self._size = len(kept)

    def attach(self, counters: Counters) -> None:
        """Called once the engine has its counters; a shared store starts them or joins them."""

    def begin(self, counters: Counters, task_id: Any = None, fresh: bool = False) -> None:
        """A transaction begins (the engine's lock is held): a shared store reads what the call
        needs, the task it names (`task_id`, if any) among it, into `counters` and its copies
        (`fresh`: the counters too, though it has a copy: the transaction is not computed again)."""

    def commit(self, counters: Counters) -> None:
        """The transaction ends, also after an error: a shared store writes what it changed.
        `transactions.Again` when it refused (nothing written): the call is computed again."""

    def add(self, task: Task) -> None:
        """Keep `task`: past the cap, the task that finished longest ago is evicted, or when
        none has finished, the oldest."""
        self._made += 1
        self._tasks[task.id] = task
        self.charge(task, task.params)

    def charge(self, task: Task, sent: Any) -> None:
        """`task` now holds `sent` (a message or params from a client): past the cap or the
        bytes, tasks other than `task` are evicted, the one that finished longest ago first."""
        if sent is not None:
            cost = size(sent)
            self._charged[task.id] = self._charged.get(task.id, 0) + cost
            self._bytes += cost
        while len(self._tasks) > 1 and (
            len(self._tasks) > self.task_cap or self._bytes > self._eviction.budget
        ):
            full = len(self._tasks) <= self.task_cap
            gone = self._eviction.oldest_finished(self._terminal, keep=task.id)
            if gone is None:  # the oldest but `task`
                gone = next(i for i in self._tasks if i != task.id)
            old_task = self._tasks.pop(gone)
            self._bytes -= self._charged.pop(gone, 0)
            unfinished = "" if old_task.state.terminal else old_task.state.value
            self._eviction.evicted(gone, unfinished, full)

    def _terminal(self, task_id: str) -> bool:
        task = self._tasks.get(task_id)
        return task is not None and task.state.terminal

    def next_seq(self) -> int:
        """The creation number of the next task (from 1; evicted tasks keep theirs)."""
        return self._made + 1

    def finished(self, task: Task) -> None:
        """`task` reached a terminal state: it is evicted before any unfinished task."""
        self._eviction.finished(task.id)

    def not_found(self, task_id: Any) -> errors.TaskNotFound | None:
        """Why no task has this id, if it was (or may have been) evicted; None otherwise."""
        return self._eviction.not_found(task_id)

    def get(self, task_id: Any) -> Task | None:
        return self._tasks.get(task_id) if isinstance(task_id, str) else None

    def notes(self, wake: Callable[[], None]) -> Callable[[str], int] | None:
        """A shared store: how many times each task was written elsewhere, by id (a stream reads
        its task again when the count moves), and `wake` called when one was. None here: every
        change is made in this process, whose streams are told of each event."""
        return None

    def peek(self, task_id: str) -> Task | None:
        """The task as it is now, read outside a transaction (streams and subscriptions)."""
        return self._tasks.get(task_id)

    def named(self, name: Any) -> Task | None:
        """The task with this name (names are unique), or None."""
        return next(
            (t for t in self._tasks.values() if t.name is not None and t.name == name), None
        )

    def all(self) -> list[Task]:
        return list(self._tasks.values())

    def __len__(self) -> int:
        return len(self._tasks)

    def ping(self, timeout_s: float) -> None:
        """Whether the store answers, within `timeout_s`: StoreError when it does not (a
        shared store whose server is gone). This process's memory always does."""

    def close(self) -> None:
        """Let go of connections (a shared store)."""


StoreFactory = Callable[[str, Any], TaskStore]
"""Makes an engine's store from a key (unique per cassette) and the cassette's interactions."""


def memory_store(key: str, interactions: Any) -> TaskStore:
    """The default: everything in this process."""
    return TaskStore(len(interactions))
