"""The tasks one call of a shared store reads and writes, and a copy of each task this process
last read or wrote, by version.

A task is kept in Redis as its JSON (`tasks`), its version (`versions`: how often it was written)
and its poll count apart (`polls`), so that a GetTask that shows no step writes no new version of
the task, only an increment of its polls, and calls on other workers keep their copies. Every
task a call read by id is checked by its write script (CHECKED): unchanged, or the call is
computed again. So a call on a task this process has a copy of needs no read round trip; the
script finds out if the copy is stale. The polls count is checked too when the task waits for
polls (`after: {polls}`), so a gate opens on exactly the poll that reaches it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from mockagent import errors
from mockagent.cassette.models import TaskState
from mockagent.engine.codec import StepTable, dump_task, load_task
from mockagent.engine.store.client import Client, Command
from mockagent.engine.store.commit import CAPPED, CHECKED, FREE, VERSIONED
from mockagent.engine.store.eviction import REMEMBERED, TASK_CAP, evicted_not_found, evicted_why
from mockagent.engine.tasks import Task

Read = tuple[str, int, int]
"""A task as read from Redis: its JSON, its version, its polls."""
COPIES = 1000
"""Tasks this process keeps a copy of (the last used): a call on one of them reads nothing."""
CHUNK = 500  # fields per write command: a script's commands have a bounded number of arguments


class TaskTable:
    """The tasks under `prefix` (`tasks`, `versions`, `polls`, `order`: ids by creation number,
    `finished`: ids in the order they finished, `names`) as one call sees them."""

    def __init__(self, client: Client, prefix: str, steps: StepTable) -> None:
        self._redis = client
        names = ("tasks", "versions", "polls", "order", "finished", "gone")
        self._keys = {name: prefix + name for name in names}
        self._names = prefix + "names"
        self._changed = prefix + "changed"
        self._steps = steps
        self._copies: OrderedDict[str, Read] = OrderedDict()
        self.cap = TASK_CAP  # past it, tasks are evicted, those that finished longest ago first
        self.wiped = False  # a reset in this call: nothing stored counts
        self.forget()

    def forget(self) -> None:
        """A call begins: nothing read or made yet (the copies stay)."""
        self._loaded: dict[str, Task] = {}
        self._saved: dict[str, Read] = {}  # each loaded task as read
        self._fetched: dict[str, Read] = {}  # read, not loaded yet
        self._got: set[str] = set()  # read by id: checked as the call is written
        self._gated: set[str] = set()  # waiting for polls as read: its polls are checked
        self._ended: set[str] = set()  # finished as read
        self._written: dict[str, Read] = {}
        self.created: list[Task] = []
        self.wiped = False

    def again(self) -> None:
        """The call is computed again from what it read."""
        fetched = {**self._fetched, **self._saved}
        self.forget()
        self._fetched = fetched

    def reads(self, task_id: str) -> list[Command]:
        """The reads that fetch `task_id` for a call on it; none when a copy is at hand (the
        call's script checks that it is current)."""
        copy = self._copies.get(task_id)
        if copy is not None:
            self._copies.move_to_end(task_id)
            self._fetched[task_id] = copy
            return []
        return [("HGET", self._keys[key], task_id) for key in ("tasks", "versions", "polls")]

    def fetched(self, task_id: str, replies: list[Any]) -> None:
        """The replies to `reads(task_id)`."""
        text, version, polls = replies
        if text is not None:
            self._fetched[task_id] = (text, int(version or 0), int(polls or 0))

    def get(self, task_id: Any) -> Task | None:
        if not isinstance(task_id, str):
            return None
        if task_id not in self._loaded:
            if task_id not in self._fetched and not self.wiped:
                reads = self.reads(task_id)
                if reads:
                    self.fetched(task_id, self._redis.pipeline(*reads))
            read = self._fetched.pop(task_id, None)
            if read is None:
                return None
            self._keep(task_id, read)
            self._got.add(task_id)
        return self._loaded[task_id]

    def _keep(self, task_id: str, read: Read) -> None:
        task = self._loaded[task_id] = load_task(read[0], self._steps)
        task.polls = read[2]
        self._saved[task_id] = read
        if task.state.terminal:
            self._ended.add(task_id)
        after = task.script[0].after if task.script else None
        if after is not None and after.polls:
            self._gated.add(task_id)

    def add(self, task: Task) -> None:
        self._loaded[task.id] = task
        self.created.append(task)

    def named(self, name: Any) -> Task | None:
        known = next((t for t in self.created if t.name is not None and t.name == name), None)
        if known is not None or not isinstance(name, str) or self.wiped:
            return known
        task_id = self._redis.call("HGET", self._names, name)
        return None if task_id is None else self.get(task_id)

    def all(self) -> list[Task]:
        """Every task, oldest first (read as they are: a listing checks none of them)."""
        keys = self._keys
        ids = [] if self.wiped else self._redis.call("ZRANGE", keys["order"], 0, -1)
        missing = [i for i in ids if i not in self._loaded]
        if missing:
            texts, versions, polls = self._redis.pipeline(
                *[("HMGET", keys[k], *missing) for k in ("tasks", "versions", "polls")]
            )
            for task_id, text, version, count in zip(missing, texts, versions, polls, strict=True):
                if text is not None:
                    self._keep(task_id, (text, int(version or 0), int(count or 0)))
        return [self._loaded[i] for i in ids if i in self._loaded] + self.created

    def not_found(self, task_id: Any) -> errors.TaskNotFound | None:
        """Why no task has this id, if tasks were evicted (a round trip, on a miss only)."""
        gone = self._keys["gone"]
        name = task_id if isinstance(task_id, str) else ""
        count, state = self._redis.pipeline(("GET", gone + ":count"), ("HGET", gone, name))
        if not count:
            return None
        why = None
        if state is not None:
            unfinished = "" if TaskState(state).terminal else state
            why = evicted_why(self.cap, unfinished)
        return evicted_not_found(task_id, int(count), self.cap, why)

    def count(self) -> int:
        saved = 0 if self.wiped else int(self._redis.call("ZCARD", self._keys["order"]))
        return saved + len(self.created)

    def peek(self, task_id: str) -> Task | None:
        """The task as saved (not as an open call changed it: its write may yet be refused)."""
        text = self._redis.call("HGET", self._keys["tasks"], task_id)
        return None if text is None else load_task(text, self._steps)

    def writes(self) -> list[Command]:
        """What the call changed, each task with the version it was read at (new: 0), checking
        those it read by id and did not change; the new tasks' order and names."""
        keys = self._keys
        self._written = {}
        changed: list[Any] = []
        checked: list[Any] = []
        polls_checked: list[Any] = []
        polls: list[Command] = []
        for task_id, task in self._loaded.items():
            text = dump_task(task, self._steps)
            saved, version, counted = self._saved.get(task_id, (None, 0, 0))
            dirty = text != saved
            if dirty:
                changed += (task_id, version, text)
            elif task_id in self._got:
                checked += (task_id, version)
            if dirty or task_id in self._got:
                self._written[task_id] = (text, version + dirty, task.polls)
            if task.polls == counted:
                continue
            if task_id in self._gated:  # the count decided what the call showed
                polls_checked += (task_id, counted)
            if not dirty and task_id not in self._gated:
                polls.append(("HINCRBY", keys["polls"], task_id, task.polls - counted))
            else:
                polls.append(("HSET", keys["polls"], task_id, task.polls))
        writes: list[Command] = []
        if checked:
            writes.append((CHECKED, keys["versions"], *checked))
        if polls_checked:
            writes.append((CHECKED, keys["polls"], *polls_checked))
        if changed:
            writes.append((VERSIONED, keys["tasks"], keys["versions"], *changed))
            # Streams of these tasks, in every process, read them again (`redis_changes`).
            writes.append(("PUBLISH", self._changed, " ".join(changed[::3])))
        writes += polls
        made = [f for task in self.created for f in (task.seq, task.id)]  # by creation number
        writes += _chunked(("ZADD", keys["order"]), made, 2)
        named = [f for t in self.created if t.name is not None for f in (t.name, t.id)]
        if named and not self.wiped:  # each was read as free: another process may have taken it
            writes.append((FREE, self._names, *named[::2]))
        writes += _chunked(("HSET", self._names), named, 2)
        ended = [i for i, t in self._loaded.items() if t.state.terminal and i not in self._ended]
        writes += _chunked(("RPUSH", keys["finished"]), ended, 1)
        if self.created:
            tasks = [keys[k] for k in ("tasks", "versions", "polls")]
            ends = (keys["order"], keys["finished"], self.cap, keys["gone"], REMEMBERED)
            writes.append((CAPPED, *tasks, self._names, *ends))
        return writes

    def kept(self) -> None:
        """The call was written: its tasks as written are this process's copies now."""
        if self.wiped:
            self._copies.clear()
        for task_id, read in self._written.items():
            self._copies[task_id] = read
            self._copies.move_to_end(task_id)
        while len(self._copies) > COPIES:
            self._copies.popitem(last=False)

    def stale(self, everything: bool = False) -> None:
        """The call's write was refused: its copies (`everything`: all) are not to be trusted."""
        if everything:
            self._copies.clear()
        for task_id in [*self._saved, *self._fetched]:
            self._copies.pop(task_id, None)


def _chunked(command: Command, items: list[Any], size: int) -> list[Command]:
    """`command` with `items` appended, split so that no command has more than CHUNK of them
    (`size`: items that belong together, such as a field and its value)."""
    step = CHUNK * size
    return [command + tuple(items[i : i + step]) for i in range(0, len(items), step)]
