"""`mockagent verify` for an Agentex cassette: the calls a recorded client made, sent to the live
platform and to the cassette, and compared as for A2A (everything but ids and timestamps).

* A CreateTask interaction is a `task/create` to its agent (`where: {agent}`), of its name when
  it has one (`where: {name}`).
* A message interaction (`match: {text}`) is a `message/send` of that text to its agent, on the
  task its `task: {from}` interaction answered, streamed (NDJSON, compared line by line) when
  its script has `deltas` or `after: {ms}` gaps, else blocking.
* An event interaction (`operation: SendEvent`) is an `event/send` of its text to the task its
  `task: {from}` interaction answered, else to the latest task of its agent (the recorded client
  named one). With none, or that one ended (no event goes to an ended task), the task was one
  the replay's store made without an interaction: it is made on both sides first, with a
  `task/create` that is not compared.
* A cancel (`operation: CancelTask`) is a `task/cancel` of the task its `task: {from}`
  interaction answered (else the latest of its agent), by the task's name when its CreateTask
  interaction names it, else by its id. A refusal recorded on a CANCELED task whose cancel the
  store answered (no interaction) is preceded by that cancel, not compared.

The gates of a script are then opened as the recorded client did (`gates`): the
call that passes a gate is compared. Skipped, saying why: a turn whose content is not text (the
recording keeps its type only), and a cancel of a task the recording never saw (`task: {known:
false}`: the made-up id or name the client sent is not recorded).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from mockagent.cassette import Interaction
from mockagent.verify.agentex.calls import AgentexSide, task_id_of, task_of
from mockagent.verify.agentex.gates import ENDED, Gates, open_gates
from mockagent.verify.calls import example
from mockagent.verify.compare import Exchange, differences
from mockagent.verify.follow_ups import same_state

CALL = re.compile(r"call (\d+)(?: \([^)]*\))?:? ?")  # how `differences` starts a line
Found = tuple[list[str], str, str]  # differences, why skipped, how it was sent
UNKNOWN_TASK = (
    "a cancel of a task the recording never saw: the id or name the client made up is not recorded"
)
NOT_TEXT = "its content is not text: the recording keeps the content's type only"


class AgentexRun:
    """One verify run over an Agentex cassette: both sides, and which task each interaction was
    about, so that later calls go to the same task and are compared after its origin's."""

    def __init__(self, live: AgentexSide, replay: AgentexSide, only: str | None = None) -> None:
        self.sides = (live, replay)
        self.only = only  # the cassette's one agent: where a call that names none goes
        self.spans: dict[str, range] = {}  # interaction -> the numbers of its compared calls
        self.origin: dict[str, str] = {}  # interaction -> the one that answered its task first
        self.names: dict[str, str] = {}  # origin interaction -> its task's name
        self.latest: dict[str, str] = {}  # agent -> the origin of the task it last worked on
        self.canceled: set[str] = set()  # origins whose task verify canceled

    def one(self, interaction: Interaction) -> Found:
        """Verify one interaction: its differences from the live side's answers."""
        live, _ = self.sides
        made = len(live.exchanges)
        found = self._send(interaction)
        name = interaction.name
        self.spans[name] = range(made, len(live.exchanges))
        if found[1]:
            return found
        origin = self.origin.get(name)
        before = self.spans.get(origin) if origin is not None and origin != name else None
        return own_differences(self.sides, before, self.spans[name]), "", found[2]

    def _send(self, interaction: Interaction) -> Found:
        where = interaction.match.where
        agent, name = _plain(where.get("agent", self.only)), _plain(where.get("name"))
        operation = interaction.match.operation
        on = interaction.match.task
        if not isinstance(agent, str):
            return [], "no agent to send to: it names none, and the cassette has several", "block"
        if on is not None and not on.known:
            return [], UNKNOWN_TASK, "block"
        if operation == "CreateTask":
            return self._create(interaction, agent, name if isinstance(name, str) else None)
        if operation == "CancelTask":
            return self._cancel(interaction, agent)
        if operation in (None, "SendMessage", "SendEvent"):
            if not isinstance(example(interaction.match.text), str):
                return [], NOT_TEXT, "block"
            return self._turn(interaction, agent, operation == "SendEvent")
        return [], f"{operation} is not an Agentex call verify makes", "block"

    def _task(self, interaction: Interaction, agent: str) -> str | None:
        """The origin of the task a call of `interaction` goes to (None: no task known)."""
        on = interaction.match.task
        origin = on.from_ if on is not None and on.from_ else self.latest.get(agent)
        return origin if origin is not None and origin in self.sides[1].tasks else None

    def _ended(self, origin: str) -> bool:
        """Whether the task of `origin` was last seen ended on the replay side."""
        _, replay = self.sides
        seen = replay.seen.get(replay.tasks[origin])
        task = task_of(seen) if seen is not None else None
        return task is not None and task.get("status") in ENDED

    def _answered(
        self, interaction: str, agent: str, origin: str, exchanges: list[Exchange]
    ) -> None:
        """`interaction` answered (or worked on) the task of `origin`: each side's answer is in
        `exchanges`."""
        for side, exchange in zip(self.sides, exchanges, strict=True):
            task_id = task_id_of(exchange)
            if origin == interaction and task_id is not None:
                side.tasks[origin] = task_id
        if origin in self.sides[1].tasks:
            self.origin[interaction] = origin
            self.latest[agent] = origin

    def _create(self, interaction: Interaction, agent: str, name: str | None) -> Found:
        params = {"name": name} if name else {}
        made = [side.keep(side.rpc(agent, "task/create", params)) for side in self.sides]
        self._answered(interaction.name, agent, interaction.name, made)
        if name:
            self.names[interaction.name] = name
        gated, why = self._gates(interaction, agent, interaction.name, create=True)
        return [], why, "gated" if gated else "block"

    def _turn(self, interaction: Interaction, agent: str, event: bool) -> Found:
        steps = _steps(interaction)
        streamed = not event and any(
            s.deltas or (s.after is not None and s.after.ms) for s in steps
        )
        origin = self._task(interaction, agent)
        if event and (origin is None or self._ended(origin)):
            # the store made its task (an event goes to no task that ended): so does each side
            made = [side.rpc(agent, "task/create", {}) for side in self.sides]
            self._answered(interaction.name, agent, interaction.name, made)
            origin = interaction.name
        answers = []
        for side in self.sides:
            text = {"type": "text", "author": "user", "content": example(interaction.match.text)}
            params: dict[str, Any] = {"content": text}
            if origin is not None and (event or interaction.match.task is not None):
                # a live side that answered with no task is sent none: its answer differs
                params["task_id"] = side.tasks.get(origin)
            if streamed:
                params["stream"] = True
            answers.append(
                side.keep(side.rpc(agent, "event/send" if event else "message/send", params))
            )
        if origin is None or (not event and interaction.match.task is None):
            origin = interaction.name  # a message without a task makes one
        self._answered(interaction.name, agent, origin, answers)
        gated, why = self._gates(interaction, agent, origin, create=False)
        return [], why, "polls" if gated else "stream" if streamed else "block"

    def _cancel(self, interaction: Interaction, agent: str) -> Found:
        origin = self._task(interaction, agent)
        if origin is None:
            return [], "no task of its agent to cancel", "block"
        name = self.names.get(origin)
        states = interaction.match.task.state if interaction.match.task else None
        waits = states if isinstance(states, list) else [states]
        for side in self.sides:
            params = {"task_name": name} if name else {"task_id": side.tasks.get(origin)}
            if any(same_state(w, "CANCELED") for w in waits) and origin not in self.canceled:
                side.rpc(agent, "task/cancel", params)  # the store answered it: no interaction
            side.keep(side.rpc(agent, "task/cancel", params))
        self.canceled.add(origin)
        self._answered(interaction.name, agent, origin, [s.exchanges[-1] for s in self.sides])
        return [], "", "block"

    def _gates(
        self, interaction: Interaction, agent: str, origin: str, create: bool
    ) -> tuple[bool, str]:
        live, replay = self.sides
        if origin not in live.tasks:  # the live side answered with no task: nothing to poll
            return False, ""
        gates = Gates(agent, self.names.get(origin), live.tasks[origin], replay.tasks[origin])
        return open_gates(_steps(interaction), gates, live, replay, create)


def _steps(interaction: Interaction) -> list[Any]:
    reply = interaction.reply
    return list(reply.task.steps) if reply is not None and reply.task is not None else []


def _plain(predicate: Any) -> Any:
    """The value a matcher names exactly (a plain value, or `{equals: …}`), else None."""
    if isinstance(predicate, dict):
        return predicate.get("equals")
    return predicate


def own_differences(
    sides: tuple[Any, Any], before: range | None, calls: range, later: str = "call {n}: "
) -> list[str]:
    """The differences of an interaction's calls (`calls`, numbers into both sides' exchanges),
    compared after those of the interaction that answered its task first (`before`): ids are
    named in order over those calls only, so a drift elsewhere does not rename this
    interaction's ids, and a refusal that names the task names the same one. A line about the
    interaction's first call is bare, one about a later call starts with `later` (`n`: 2…)."""
    live, replay = sides
    numbers = [*(before or []), *calls]
    lines = differences(
        [live.exchanges[n] for n in numbers], [replay.exchanges[n] for n in numbers]
    )
    own = len(numbers) - len(calls)  # the origin's calls come first
    out = []
    for line in lines:
        found = CALL.match(line)
        k = int(found[1]) - 1 - own if found else -1
        if found and k >= 0:
            out.append(later.format(n=k + 1, k=k) * bool(k) + line[found.end() :])
    return out


class Watch(Protocol):
    """Told when an interaction's calls begin and end (a recording of the live side)."""

    def begin(self) -> None: ...

    def end(self, name: str) -> None: ...


def verify_agentex(
    interactions: list[Interaction],
    live: AgentexSide,
    replay: AgentexSide,
    watch: Watch | None = None,
    agents: list[str] | None = None,
) -> list[tuple[str, list[str], str, str]]:
    """(name, differences, why skipped, mode) per interaction, in the cassette's order; `watch`
    sees each interaction's calls. An interaction that names no agent goes to the cassette's
    only one (of `agents`, their names), as the cassette answers any agent with it."""
    only = agents[0] if agents is not None and len(agents) == 1 else None
    run = AgentexRun(live, replay, only)
    out = []
    for interaction in interactions:
        if watch is not None:
            watch.begin()
        found = run.one(interaction)
        if watch is not None:
            watch.end(interaction.name)
        out.append((interaction.name, *found))
    return out
