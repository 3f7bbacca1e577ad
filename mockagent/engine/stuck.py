"""Live tasks that can never finish, and why, in words the tasks view shows.

A replayed task moves only as its script says: a step behind a gate that no call can open, a stop
at INPUT_REQUIRED that no interaction answers, or a script that ends in WORKING holds it short of
a terminal state forever, and a client polling it waits until its own timeout. This says so while
it happens. Conservative, as `lint` is: only what is clearly true is reported; a step the clock
or a poll brings is never a reason. A2A only: an Agentex task stays RUNNING between turns by
design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mockagent.cassette.models import Interaction, Step, TaskState
from mockagent.engine.tasks import Task
from mockagent.vocabulary import MESSAGE_OPERATIONS


@dataclass(frozen=True)
class AgentFacts:
    """What the answer depends on besides the task: the agent's interactions as they are now."""

    interactions: Sequence[Interaction]
    uses: Sequence[int]
    protocol: str = "a2a"
    streaming: bool = True  # the card's capabilities.streaming: SubscribeToTask is refused
    repeats: bool = False  # every interaction answers as often as it matches


def never_finishes(task: Task, agent: AgentFacts) -> str | None:
    """Why `task` can never reach a terminal state; None when it may (or has)."""
    if agent.protocol != "a2a" or task.state.terminal:
        return None
    if task.waiting:
        return _unanswered(task.state, task.origin, agent, "the task waits")
    state, steps = task.state, list(task.script)
    for k, step in enumerate(steps):
        which = "the next step" if k == 0 else f"step {k + 1} of the {len(steps)} left"
        gate = _closed_gate(step, task, agent)
        if gate is not None:
            return f"{which} waits for {gate}: the task never finishes"
        if step.task_state is None:
            continue
        state = step.task_state
        if state.terminal:
            return None
        if state.interrupted:  # what comes after depends on the follow-up that answers
            return _unanswered(state, task.origin, agent, f"{which} stops the task")
    if state.interrupted:  # a follow-up came, and a message answered it: another may come
        return _unanswered(state, task.origin, agent, "the task waits")
    if any(_left(i, agent) for i in _fitting(state, task.origin, agent)):
        return None  # an interaction is there to continue it (an uncommon, deliberate script)
    return (
        f"the script ends in {spelled(state)}: no step is left, so the task never finishes "
        "(unless a client cancels it); end the script in a terminal state"
    )


def spelled(state: TaskState) -> str:
    """The state as a cassette spells it (`TASK_STATE_WORKING`)."""
    return f"TASK_STATE_{state.name}"


def _closed_gate(step: Step, task: Task, agent: AgentFacts) -> str | None:
    """The gate of `step` that no call can open, in words; None when a call or the clock may."""
    after = step.after
    if after is None:
        return None
    if after.finds:
        return (
            f"{_count(after.finds, 'get-or-create')} (`after: {{finds}}`), which only an "
            "Agentex agent answers"
        )
    if after.subscribers and not agent.streaming and task.subscriptions < after.subscribers:
        more = _count(after.subscribers - task.subscriptions, "more subscription")
        return (
            f"{more} (`after: {{subscribers}}`), but the card says capabilities.streaming: "
            "false, so SubscribeToTask is refused"
        )
    return None


def _unanswered(state: TaskState, origin: str, agent: AgentFacts, what: str) -> str | None:
    """Why no follow-up message can move a task of `origin` on from `state`; None if one can."""
    fitting = _fitting(state, origin, agent)
    if any(_left(i, agent) for i in fitting):
        return None
    if fitting:
        names = ", ".join(repr(agent.interactions[i].name) for i in fitting)
        return (
            f"{what} in {spelled(state)} for a follow-up message, but every interaction that "
            f"answers one is used up ({names}): raise {'its' if len(fitting) == 1 else 'a'} "
            "`times`"
        )
    return (
        f"{what} in {spelled(state)} for a follow-up message, but no follow-up interaction "
        f"answers one: add one that matches `task: {{from: {origin}}}`"
    )


def _left(i: int, agent: AgentFacts) -> bool:
    """Whether interaction `i` may still answer."""
    times = agent.interactions[i].times
    return agent.repeats or times is None or agent.uses[i] < times


def _fitting(state: TaskState, origin: str, agent: AgentFacts) -> list[int]:
    """The follow-ups (indexes) that answer a message on a task of `origin` in `state` and move
    it on (no error, no status fault), used up or not. As `lint` counts them: an interaction
    with a `task` matcher (one without is meant for new conversations)."""
    out = []
    for i, x in enumerate(agent.interactions):
        ops = x.match.operation
        ops_set = {ops} if isinstance(ops, str) else set(ops or MESSAGE_OPERATIONS)
        on = x.match.task
        if not ops_set & MESSAGE_OPERATIONS or x.reply is None or x.reply.error is not None:
            continue
        if x.fault is not None and x.fault.status is not None:
            continue
        if on is not None and on.known and on.from_ in (None, origin):
            states = on.state
            if states is None or state in {TaskState.parse(s) for s in states}:
                out.append(i)
    return out


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
