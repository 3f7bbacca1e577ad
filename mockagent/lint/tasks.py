"""What `mockagent lint` knows of the tasks a cassette's scripts make: which interaction can
create a task, which states its tasks can reach, and how many follow-up messages they can get.

The engine creates a task only for a message that matches an interaction without a `task`
matcher and answers it with a `task:` script; the task keeps that interaction's name as its
origin, which is what a follow-up's `task: {from: …}` compares. A task stopped at INPUT_REQUIRED
or AUTH_REQUIRED moves on only when a follow-up message matches, and each match uses up one of
that follow-up's `times`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mockagent.cassette.models import Interaction, Match, Step, TaskState
from mockagent.vocabulary import MESSAGE_OPERATIONS

INTERRUPTED = (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED)


def operations(match: Match) -> frozenset[str]:
    """The operations an interaction answers (message operations when unset), as the engine
    reads it; which of them ever reach it is `lint.reach.reachable`'s (by card, ACP type)."""
    ops = match.operation
    return frozenset([ops] if isinstance(ops, str) else ops or MESSAGE_OPERATIONS)


def steps_of(interaction: Interaction) -> list[Step]:
    reply = interaction.reply
    return list(reply.task.steps) if reply is not None and reply.task is not None else []


def task_states(match: Match) -> list[TaskState] | None:
    """The states a follow-up matcher accepts; None when it accepts any."""
    if match.task is None or match.task.state is None:
        return None
    states = match.task.state
    return [TaskState(s) for s in ([states] if isinstance(states, str) else states)]


def creates_no_task(interaction: Interaction) -> str | None:
    """Why the engine never creates a task with `interaction` as its origin; None if it may."""
    if interaction.match.task is not None:
        return "is a follow-up itself: it answers on a task another interaction created"
    if not operations(interaction.match) & MESSAGE_OPERATIONS:
        return "answers no message, so it creates no task"
    reply = interaction.reply
    if reply is None or reply.task is None:
        answer = "a message" if reply is not None and reply.message is not None else "an error"
        return f"answers with {answer}, not a task"
    return None


def continues(follow_up: Interaction, origin: str | None) -> bool:
    """Whether `follow_up` may continue a task of `origin` (None: of any origin): it answers
    messages on a task and its answer does not leave the task where it was."""
    task = follow_up.match.task
    if task is None or not operations(follow_up.match) & MESSAGE_OPERATIONS:
        return False
    reply, fault = follow_up.reply, follow_up.fault
    if reply is None or reply.error is not None or (fault is not None and fault.status is not None):
        return False  # an error or an HTTP fault answers without touching the task
    return task.from_ is None or origin is None or task.from_ == origin


def fits(follow_up: Interaction, states: Iterable[TaskState]) -> bool:
    """Whether `follow_up` accepts a task in one of `states`."""
    accepted = task_states(follow_up.match)
    return accepted is None or any(state in accepted for state in states)


def reachable_states(interactions: list[Interaction], origin: str | None) -> set[TaskState]:
    """Every state a step may put a task of `origin` in: the origin's steps and those of every
    follow-up that may continue its tasks (None: a task of any origin, any script's)."""
    scripts = [
        x for x in interactions if origin is None or x.name == origin or continues(x, origin)
    ]
    return {s.task_state for x in scripts for s in steps_of(x) if s.task_state is not None}


def stops(steps: list[Step]) -> list[int]:
    """Indexes of the interrupted steps that later steps come after (each needs a message)."""
    return [j for j, s in enumerate(steps[:-1]) if s.task_state in INTERRUPTED]


def messages_left(
    interactions: list[Interaction], stopped: Interaction, origin: str | None, at: list[TaskState]
) -> int | None:
    """How many follow-up messages a task `stopped` left at one of the states `at` can still
    get, by the `times` of the follow-ups that fit it; None when one of them has no limit."""
    total = 0
    for other in interactions:
        if not continues(other, origin) or not fits(other, at):
            continue
        if other.times is None:
            return None
        total += other.times - (1 if other is stopped else 0)  # one use brought the task here
    return total


class Around:
    """`around(origin)`: the interactions that bear on the tasks of `origin`, found by name where
    a scan of the whole cassette per task made lint quadratic: the interactions named `origin`,
    and those with a `task` matcher from it or from any origin. Every question above
    (`continues`, `reachable_states`, `messages_left`, the artifacts a follow-up may find) is
    answered from them alone, as from the whole list."""

    def __init__(self, interactions: Sequence[Interaction]) -> None:
        self.interactions = list(interactions)
        self._by: dict[str, list[int]] = {}  # origin → indexes of its interactions
        self._anyone: list[int] = []  # follow-ups without `from`: on a task of any origin
        for k, x in enumerate(self.interactions):
            self._by.setdefault(x.name, []).append(k)
            task = x.match.task
            origin = task.from_ if task is not None else None
            if task is not None and origin is None:
                self._anyone.append(k)
            elif origin is not None and origin != x.name:
                self._by.setdefault(origin, []).append(k)
        self._found: dict[str, list[Interaction]] = {}

    def __call__(self, origin: str | None) -> list[Interaction]:
        """Those of the interactions that bear on the tasks of `origin`, in cassette order; all
        of them for None (a task of any origin)."""
        if origin is None:
            return self.interactions
        if origin not in self._found:
            indexes = sorted({*self._by.get(origin, []), *self._anyone})
            self._found[origin] = [self.interactions[k] for k in indexes]
        return self._found[origin]
