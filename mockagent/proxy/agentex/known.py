"""What an Agentex recording knows of the platform's tasks: each task's scripts and what the
client has seen of it, by upstream id and by name. The recording (`agentex.recording`) and its
task/create and task/cancel rules (`agentex.tasks`) both work on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockagent.proxy.recorder import RecordedTask
from mockagent.proxy.session import Session


@dataclass
class AgentexTask:
    """One upstream task: its recorded script (if a message or event created one) and what the
    client has seen of it."""

    record: RecordedTask | None = None  # None until a recorded turn runs on it
    created: RecordedTask | None = None  # the script of the CreateTask interaction that makes it
    # A named task the replay's store makes by itself: the CreateTask interaction to write (after
    # the interaction it followed) should a get-or-create find it moved on (agentex.tasks).
    unwritten: dict[str, Any] | None = None
    from_message: bool = False  # created by a recorded message/send: follow-ups match `task.from`
    seen: set[str] = field(default_factory=set)  # message ids the client has seen
    state: str = "RUNNING"
    reason: str | None = None  # its `status_reason`, as the client last saw it
    scripted: bool = True  # polls still add to the script (not after a cancel)
    origin: str = ""  # the interaction that creates it on replay ("": the task store)
    turn: dict[str, Any] | None = None  # the interaction of its latest user turn


class KnownTasks:
    """The upstream's tasks a recording has seen, in `session`."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.tasks: dict[str, AgentexTask] = {}  # upstream task id → what we know
        self.names: dict[str, str] = {}  # task name → upstream task id

    def task(self, task_id: str, name: Any = None) -> AgentexTask:
        """What the recording knows of the upstream task `task_id` (known by `name` too)."""
        task = self.tasks.setdefault(task_id, AgentexTask())
        if isinstance(name, str) and name:
            self.names[name] = task_id
        return task
