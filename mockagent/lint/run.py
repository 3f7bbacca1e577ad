"""`mockagent lint`: checks a cassette beyond its schema, for mistakes that load fine but replay
wrong.

Each finding names file, line and interaction and carries a short code:

* `load-error`: the cassette does not load, for the reason the loader gives (an unknown field,
  state, operation, predicate or error name, with the one likely meant; a follow-up `from` an
  interaction that is not there; …);
* `state-after-terminal`: a step after a terminal state step;
* `illegal-transition`: back to SUBMITTED, a follow-up that starts SUBMITTED, a follow-up
  matcher on a terminal state (messages to terminal tasks are refused);
* `append-without-artifact`, `chunk-after-last`: artifact `append`/`lastChunk` out of order;
* `unreachable-steps`: steps after an INPUT_REQUIRED or AUTH_REQUIRED stop that no follow-up
  (an interaction with `task: {from: …}` that fits the task) can continue, and a follow-up
  whose first step restates the interrupted state it finds the task in, so that it stops there
  again at once and its later steps wait; and a script that stops more often than the `times`
  of the follow-ups that can continue it allow messages;
* `unreachable-follow-up`: a follow-up whose task can never exist: its `from` creates no task
  (it answers with a message or an error, is a follow-up itself, or never answers: shadowed,
  or sent no message the agent gets), or no script of that origin (or of its follow-ups) ever
  reaches the INPUT_REQUIRED or AUTH_REQUIRED it answers in;
* `streaming-off`, `push-off`: interactions the card's capabilities make unreachable (and stream
  cuts on a card that does not stream);
* `extended-card-off`: a GetExtendedAgentCard interaction: the dialect answers it from the card
  (or refuses it when the card has no extended card), never by an interaction;
* `acp-type`: an Agentex interaction that matches only operations its agents' ACP types are
  never sent (SendEvent on a sync agent, SendMessage on an async one);
* `fault-never-fires`: a fault field that never acts where the interaction is reached: stream
  cuts (`dropAfter`, `errorAfter`, `closeAfter`) on calls that never stream, behind an HTTP
  `status`, behind a cut that ends the stream first, or beyond the events the reply streams;
  `body` without `status`; `error` without `errorAfter` (mockagent.lint.faults);
* `shadowed`: an earlier interaction with no `times` limit always wins: it is reached by every
  operation the later one is, and each of its matchers accepts what the later one's does
  (mockagent.lint.shadow);
* `slow-regex`: a matcher regex that runs out of its time bound on a short text: a call with
  such a text never matches it (mockagent.lint.regex).

Conservative by design: a finding is only reported when it is clearly true.

The same rules check what is added to a served agent (`MockAgent.expect`, the admin API's
`POST /_mockagent/interactions`): `check` runs them on any list of interactions, in the order
the engine tries them, under a cassette's card.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mockagent.cassette.loader import Loc, load_cassette
from mockagent.cassette.models import Cassette, Interaction, TaskState
from mockagent.errors import CassetteError
from mockagent.lint.faults import fault_findings
from mockagent.lint.reach import reachable, unreached
from mockagent.lint.regex import slow_regexes
from mockagent.lint.shadow import Shadows
from mockagent.lint.tasks import (
    INTERRUPTED,
    Around,
    continues,
    creates_no_task,
    fits,
    messages_left,
    operations,
    reachable_states,
    stops,
)
from mockagent.lint.tasks import steps_of as _steps
from mockagent.lint.tasks import task_states as _task_states
from mockagent.vocabulary import MESSAGE_OPERATIONS

__all__ = ["Finding", "cassette_files", "check", "lint", "lint_file", "operations"]

LineOf = Callable[[Loc], int | None]
"""The line of a location among the interactions checked (`("interactions", i, "match")`)."""


@dataclass(frozen=True)
class Finding:
    path: str
    line: int | None
    interaction: str | None
    code: str
    message: str
    shadowed_by: str | None = None  # `shadowed`: the interaction that takes every call
    # A gate only a follow-up opens, and none does yet: adding one later cures it (an
    # `expect()` cannot add a task and its follow-up at once, as a cassette does).
    awaits_follow_up: bool = False

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:" if self.line else f"{self.path}:"
        who = f" interaction {self.interaction!r}:" if self.interaction is not None else ""
        return f"{where if self.path else ''}{who} {self.code} {self.message}".lstrip()


def cassette_files(path: str | Path) -> list[Path]:
    """The file itself, or every `*.yaml` / `*.yml` in a folder and the folders below it, sorted;
    hidden files and folders (`.git`, an editor's `.#x.yaml`…) left out. A FIFO or a device so
    named is kept: its check says it cannot be read, where leaving it out would say nothing."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    found = [*path.rglob("*.yaml"), *path.rglob("*.yml")]
    return sorted(
        f
        for f in found
        if not f.is_dir() and not any(part.startswith(".") for part in f.relative_to(path).parts)
    )


def lint(path: str | Path) -> list[Finding]:
    """Every finding in the cassette file `path` (a folder: in each of its cassettes)."""
    return [finding for file in cassette_files(path) for finding in lint_file(file)]


def lint_file(path: str | Path) -> list[Finding]:
    """Every finding in one cassette file; a `load-error` per problem if it does not load."""
    try:
        loaded = load_cassette(path)
    except CassetteError as exc:
        # One finding per problem: the code says it does not load, the message says why (the
        # finding prints the file:line itself).
        return [
            Finding(str(path), problem.line, None, "load-error", problem.message)
            for problem in exc.problems
        ]
    found = check(loaded.cassette, loaded.cassette.interactions, loaded.path, loaded.line_of)
    return sorted(found, key=lambda f: f.line or 0)


def check(
    cassette: Cassette,
    interactions: Sequence[Interaction],
    path: str = "",
    line_of: LineOf | None = None,
    only: Collection[int] | None = None,
) -> list[Finding]:
    """Every finding about `interactions`, tried in this order, under `cassette`'s protocol and
    card (its own interactions aside); with `only`, about the interactions at those indexes
    (the others still count: an earlier one may shadow, a follow-up may continue). Findings
    name `path` and, with `line_of`, their lines."""
    return list(_Checker(cassette, interactions, path, line_of).run(only))


class _Checker:
    def __init__(
        self,
        cassette: Cassette,
        interactions: Sequence[Interaction],
        path: str,
        line_of: LineOf | None,
    ) -> None:
        self.cassette = cassette
        self.interactions = list(interactions)
        self.path = path
        self.line_of: LineOf = line_of or (lambda loc: None)
        self.reachable = reachable(cassette)  # the operations of calls that reach interactions
        self.by_name = {x.name: x for x in self.interactions}
        self.index = {id(x): k for k, x in enumerate(self.interactions)}
        self.shadows = Shadows(
            [x.match for x in self.interactions],
            [x.times for x in self.interactions],
            [self.reach(x) for x in self.interactions],
        )
        self._shadow: dict[int, int | None] = {}  # index → its shadow's, once worked out
        self.around = Around(self.interactions)

    def reach(self, interaction: Interaction) -> frozenset[str]:
        """The operations of the calls that may reach `interaction`."""
        return operations(interaction.match) & self.reachable

    def finding(
        self,
        loc: Loc,
        interaction: Interaction,
        code: str,
        message: str,
        shadowed_by: str | None = None,
        awaits_follow_up: bool = False,
    ) -> Finding:
        line = self.line_of(loc)
        return Finding(
            self.path, line, interaction.name, code, message, shadowed_by, awaits_follow_up
        )

    def run(self, only: Collection[int] | None = None) -> Iterator[Finding]:
        for i, interaction in enumerate(self.interactions):
            if only is not None and i not in only:
                continue
            yield from self.script(i, interaction)
            yield from self.unreachable(i, interaction)
            yield from self.never_matches(i, interaction)
            yield from self.matchers(i, interaction)
            yield from self.regexes(i, interaction)
            yield from self.capabilities(i, interaction)
            yield from self.faults(i, interaction)
            yield from self.shadowed(i, interaction)

    def script(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        match = interaction.match
        follow_up = match.task is not None
        live = _task_states(match)
        previous: TaskState | None = None  # the last state this script set
        terminal: TaskState | None = None
        seen = self.known_artifacts(interaction) if follow_up else set()
        closed: set[str] = set()
        for j, step in enumerate(_steps(interaction)):
            loc = ("interactions", i, "reply", "task", "steps", j)
            if terminal is not None:
                yield self.finding(
                    loc,
                    interaction,
                    "state-after-terminal",
                    f"step {j + 1} comes after the terminal state {terminal.name}; "
                    "a finished task changes no more",
                )
                continue  # one finding per step is enough
            if step.after is not None and step.after.finds and self.cassette.protocol != "agentex":
                yield self.finding(
                    loc,
                    interaction,
                    "finds-without-get-or-create",
                    f"step {j + 1} waits for get-or-creates (`after: {{finds}}`), which only an "
                    "Agentex agent answers: no call ever shows it",
                )
            state = step.task_state
            if state is not None:
                if (
                    state is TaskState.SUBMITTED
                    and previous is not None
                    and previous is not TaskState.SUBMITTED
                ):
                    yield self.finding(
                        loc,
                        interaction,
                        "illegal-transition",
                        f"step {j + 1} goes back to SUBMITTED after {previous.name}",
                    )
                elif (
                    state is TaskState.SUBMITTED
                    and previous is None
                    and follow_up
                    and not (live and all(s is TaskState.SUBMITTED for s in live))
                ):
                    yield self.finding(
                        loc,
                        interaction,
                        "illegal-transition",
                        "a follow-up continues a live task: it cannot start SUBMITTED again",
                    )
                previous = state
                if state.terminal:
                    terminal = state
            if step.artifact is not None:
                artifact_id = step.artifact["artifactId"]
                if step.append and artifact_id in closed:
                    yield self.finding(
                        loc,
                        interaction,
                        "chunk-after-last",
                        f"step {j + 1} appends to artifact {artifact_id!r} after its lastChunk",
                    )
                elif step.append and follow_up and seen is None:
                    pass  # a follow-up on any task: the artifact may come from anywhere
                elif step.append and artifact_id not in (seen or set()):
                    yield self.finding(
                        loc,
                        interaction,
                        "append-without-artifact",
                        f"step {j + 1} appends to artifact {artifact_id!r}, which no earlier "
                        "step created",
                    )
                if seen is not None:
                    seen.add(artifact_id)
                if step.lastChunk:
                    closed.add(artifact_id)

    def unreachable(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        """The first interrupted stop of a script that its later steps can never get past."""
        steps = _steps(interaction)
        task = interaction.match.task
        origin = interaction.name if task is None else task.from_
        found = stops(steps)
        if not found:
            return
        j, state = found[0], steps[found[0]].task_state
        assert state is not None
        one = j + 2 == len(steps)
        later = f"step {j + 2}" if one else f"steps {j + 2}-{len(steps)}"
        live = _task_states(interaction.match)
        if j == 0 and steps[0].message is None and live and all(s is state for s in live):
            yield self.finding(
                ("interactions", i, "reply", "task", "steps", 0),
                interaction,
                "unreachable-steps",
                f"step 1 restates {state.name}, the state this follow-up finds the task in: "
                f"the task stops there again at once, and {later} {'waits' if one else 'wait'} "
                "for another message; leave step 1 out (a returnImmediately answer then shows "
                "the task as it is)",
            )
        elif not self.continued(interaction, origin, state):
            yield self.finding(
                ("interactions", i, "reply", "task", "steps", j + 1),
                interaction,
                "unreachable-steps",
                f"{later} {'comes' if one else 'come'} after {state.name} (step {j + 1}), and "
                f"no follow-up continues the task: add an interaction that matches "
                f"`task: {{from: {origin or 'ORIGIN'}}}`, or end the script at step {j + 1}",
                awaits_follow_up=True,
            )
        else:
            yield from self.too_few_messages(i, interaction, origin, found)

    def too_few_messages(
        self, i: int, interaction: Interaction, origin: str | None, found: list[int]
    ) -> Iterator[Finding]:
        """A script that stops more often than its follow-ups' `times` let messages continue it:
        each stop takes one message, and each message uses up one `times` of the follow-up it
        matches."""
        steps = _steps(interaction)
        states = [s for j in found if (s := steps[j].task_state) is not None]
        left = messages_left(self.around(origin), interaction, origin, states)
        if left is None or left >= len(found):
            return
        j = found[left]
        state = steps[j].task_state
        assert state is not None
        one = j + 2 == len(steps)
        later = f"step {j + 2}" if one else f"steps {j + 2}-{len(steps)}"
        yield self.finding(
            ("interactions", i, "reply", "task", "steps", j + 1),
            interaction,
            "unreachable-steps",
            f"{later} {'comes' if one else 'come'} after {state.name} (step {j + 1}), stop "
            f"{left + 1} of {len(found)} in this script, but the follow-ups that continue the "
            f"task answer {left} message{'' if left == 1 else 's'} in all (their `times`): "
            f"raise a `times`, or end the script at step {j + 1}",
            awaits_follow_up=True,
        )

    def never_matches(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        """A follow-up whose task can never exist: its `from` creates no task, or no script of
        that origin (or of the follow-ups that continue it) reaches the state it waits for."""
        task = interaction.match.task
        if task is None or self.cassette.protocol != "a2a":
            return
        origin = self.by_name.get(task.from_) if task.from_ is not None else None
        why = self.never_starts(origin) if origin is not None else None
        if why is not None:
            yield self.finding(
                ("interactions", i, "match", "task", "from"),
                interaction,
                "unreachable-follow-up",
                f"can never match: its task would come from {task.from_!r}, which {why}",
            )
            return
        states = _task_states(interaction.match)
        if not states or not all(s in INTERRUPTED for s in states):
            return  # terminal states are `illegal-transition`; SUBMITTED and WORKING are reached
        reached = reachable_states(self.around(task.from_), task.from_)
        if not reached & set(states):
            names = " or ".join(s.name for s in states)
            scripts = f"of {task.from_!r} or its follow-ups" if task.from_ else "in this cassette"
            yield self.finding(
                ("interactions", i, "match", "task", "state"),
                interaction,
                "unreachable-follow-up",
                f"can never match: no script {scripts} reaches {names}, the state it answers in",
            )

    def never_starts(self, origin: Interaction) -> str | None:
        """Why `origin` never starts a task (the end of a sentence about it); None if it may."""
        why = creates_no_task(origin)
        if why is not None:
            return why
        if not self.reach(origin) & MESSAGE_OPERATIONS:
            return "answers no message this agent is ever sent"
        k = self.shadow(self.index[id(origin)])
        if k is None:
            return None
        return (
            f"never answers: interaction {self.named(k)} comes first, has no `times` limit "
            "and matches every call it does"
        )

    def continued(self, stopped: Interaction, origin: str | None, state: TaskState) -> bool:
        """Whether a follow-up may answer a message to a task that `stopped` left in `state`
        (interactions without a `task` matcher are taken to start tasks of their own)."""
        return any(
            continues(other, origin)
            and fits(other, [state])
            and not (other is stopped and other.times == 1)  # used up bringing the task here
            for other in self.around(origin)
        )

    def known_artifacts(self, follow_up: Interaction) -> set[str] | None:
        """Artifacts a follow-up's task may already have: those of its origin and of the origin's
        other follow-ups; None (unknown) for a follow-up without `from`."""
        task = follow_up.match.task
        origin = task.from_ if task is not None else None
        if origin is None:
            return None
        related = [
            x
            for x in self.around(origin)
            if x is not follow_up
            and (x.name == origin or (x.match.task is not None and x.match.task.from_ == origin))
        ]
        return {
            s.artifact["artifactId"] for x in related for s in _steps(x) if s.artifact is not None
        }

    def matchers(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        match = interaction.match
        loc = ("interactions", i)
        states = _task_states(match) or []
        dead = [s.name for s in states if s.terminal]
        if dead and operations(match) & MESSAGE_OPERATIONS:  # a task operation may match them
            yield self.finding(
                loc,
                interaction,
                "illegal-transition",
                f"match.task.state {', '.join(dead)} can never match: messages to a task "
                "in a terminal state are refused",
            )

    def regexes(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        """Regexes that backtrack without end on a short text."""
        for loc, message in slow_regexes(interaction.match):
            yield self.finding(
                ("interactions", i, "match", *loc), interaction, "slow-regex", message
            )

    def capabilities(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        """Operations the agent's card (A2A) or ACP types (Agentex) keep from the interaction."""
        for code, message in unreached(self.cassette, operations(interaction.match)):
            yield self.finding(("interactions", i), interaction, code, message)

    def faults(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        """Fault fields that never take effect where the interaction is reached."""
        ops = self.reach(interaction)
        if not ops:
            return  # never reached: `capabilities` says why
        for name, code, message in fault_findings(
            self.cassette, interaction, ops, self.interactions
        ):
            loc = ("interactions", i) if name is None else ("interactions", i, "fault", name)
            yield self.finding(loc, interaction, code, message)

    def shadow(self, i: int) -> int | None:
        """The first interaction before the one at `i` that takes every call it matches."""
        if i not in self._shadow:
            self._shadow[i] = self.shadows.first(i)
        return self._shadow[i]

    def named(self, k: int) -> str:
        """`'name' (line N)` of the interaction at `k`."""
        line = self.line_of(("interactions", k))
        return f"{self.interactions[k].name!r}" + (f" (line {line})" if line else "")

    def shadowed(self, i: int, interaction: Interaction) -> Iterator[Finding]:
        k = self.shadow(i)
        if k is None:
            return
        yield self.finding(
            ("interactions", i),
            interaction,
            "shadowed",
            f"can never match: interaction {self.named(k)} comes first, "
            "has no `times` limit and matches every call this one does",
            shadowed_by=self.interactions[k].name,
        )
