"""What an Agentex recording knows of the platform's tasks: each task's scripts and what the
client has seen of it, by upstream id and by name, and the user turns that run on them. The
recording (`agentex.recording`), its streamed turns (`agentex.stream_turn`) and its task/create
and task/cancel rules (`agentex.tasks`) all work on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockagent.proxy.recorder import RecordedTask
from mockagent.proxy.session import Session

RpcCall = tuple[str | None, str, dict[str, Any], Any]
"""(agent name, method, params, request id) of an RPC call."""

# What a string `say` step stands for (cassette.models.Step): no other field, not even `style`.
PLAIN_TEXT_SAY = {"type": "text", "author": "agent", "format": "plain"}


def say(content: dict[str, Any]) -> Any:
    """A TaskMessageContent as a `say` step writes it: a string when the replay expands that
    string to exactly this content, else the mapping as the agent sent it (its `null` fields too:
    the client saw them), the default `author: agent` left out."""
    if content == {**PLAIN_TEXT_SAY, "content": content.get("content")} and isinstance(
        content.get("content"), str
    ):
        return content["content"]
    return {k: v for k, v in content.items() if k != "author" or v != "agent"}


def turn_match(
    content: Any, agent: str | None, operation: str | None
) -> tuple[dict[str, Any], str]:
    """The matchers of a user turn (as the replay dialect sees it) and the text its name is made
    of."""
    match: dict[str, Any] = {}
    if operation:
        match["operation"] = operation
    where: dict[str, Any] = {}
    text = ""
    if isinstance(content, dict):
        if content.get("type", "text") == "text" and isinstance(content.get("content"), str):
            text = content["content"]
            match["text"] = text
        else:
            where["content.type"] = content.get("type")
    if agent:
        where["agent"] = agent
    if where:
        match["where"] = where
    return match, text or str(
        (content or {}).get("type", "") if isinstance(content, dict) else ""
    ) or "event"


def state_step(status: str, reason: Any) -> dict[str, Any]:
    """A state step as the platform showed the task: its status, and its `status_reason`."""
    step: dict[str, Any] = {"state": status}
    if isinstance(reason, str):
        step["statusReason"] = reason
    return step


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

    def open_turn(
        self, agent: str | None, params: dict[str, Any], operation: str | None, task_id: str
    ) -> AgentexTask | None:
        """The interaction of a user turn, its script empty; the task it runs on."""
        ref_id = params.get("task_id") if isinstance(params.get("task_id"), str) else None
        ref_name = params.get("task_name") if isinstance(params.get("task_name"), str) else None
        task_id = task_id or ref_id or self.names.get(ref_name or "", "")
        if not task_id:
            return None
        known = self.tasks.get(task_id)
        follow_up = known.record if known is not None and known.from_message and ref_id else None
        match, text = turn_match(params.get("content"), agent, operation)
        recorder = self.session.recorder
        interaction = recorder.add_interaction(
            {"parts": [{"text": text}]}, {"task": {"steps": []}}, follow_up, match=match
        )
        task = self.task(task_id, ref_name)
        task.turn = interaction
        if known is None:  # first seen in this turn: on replay, this interaction creates it
            task.origin = interaction["name"]
        steps = interaction["reply"]["task"]["steps"]
        if task.record is None:
            task.from_message = known is None and operation is None
            task.record = RecordedTask(origin=interaction["name"], steps=steps)
        task.record.steps = steps
        task.record.polls = 0
        task.record.finds = 0
        task.scripted = True
        return task

    def close_turn(self, task: AgentexTask) -> None:
        """A script must have a step: a turn in which the agent said nothing shows the task's
        state."""
        if task.record is not None and not task.record.steps:
            task.record.placeholder = state_step(task.state, task.reason)
            task.record.steps.append(task.record.placeholder)
