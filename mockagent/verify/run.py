"""`mockagent verify`: does a live agent still answer what a cassette recorded?

Each interaction's request is rebuilt from its matchers (the text, and the parts' data, media
types and file names a recording keeps) and sent, in the cassette's order, both to the live agent
and to the cassette served in-process; a follow-up (`match.task.from`) goes to the task that
side answered for the interaction it follows. The answers are compared with
`compare.differences`: everything but ids and timestamps. A message is sent the way its script
was recorded: streamed (SendStreamingMessage, compared event by event) when the script has
`after: {ms}` gaps or a `first:`; with returnImmediately, then GetTask polls (as many as the
script's polls gates need; the poll that passes a gate is compared) when it has `after: {polls}`
gates; else blocking. A streamed or polled script with `after: {subscribers: N}` gates has N
subscriptions opened on its task on both sides as soon as the answer names the task, as the
recorded client did (the cassette's stream would wait for them forever); what they say is not
compared. Interactions for other operations, with nothing recorded to send, following up on a
task no interaction before them answered, or whose rebuilt request the cassette answers with
another interaction (a matcher verify cannot satisfy: comparing would test that one), are
skipped.
`mockagent.verify.update` re-records the interactions that drifted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from mockagent.cassette import Interaction, load_cassette
from mockagent.cassette.models import Step
from mockagent.server.app import create_app
from mockagent.verify.agent_probe import check_upstream, routed
from mockagent.verify.agentex.calls import AgentexSide
from mockagent.verify.agentex.run import Watch, own_differences, verify_agentex
from mockagent.verify.calls import Send, Side, example, http_sender, wsgi_sender
from mockagent.verify.compare import differences
from mockagent.verify.timing import fewer_polls, gate_drift
from mockagent.verify.verdict import Verdict

TIMEOUT = 60.0
SENT = frozenset({"SendMessage", "SendStreamingMessage"})  # what verify sends
NOTHING_TO_SEND = "no recorded request to send"
PART_FIELD = re.compile(r"message\.parts\[(\d+)\]\.(data|mediaType|filename)")


def nothing_to_send(interaction: Interaction) -> str:
    """Why an interaction has no request verify can send: a text matched by a pattern (a
    `regex`, say: no text it was recorded from is kept), or no text or data at all."""
    text = interaction.match.text
    if isinstance(text, dict):
        return f"{NOTHING_TO_SEND}: its text is matched by `{', '.join(text)}`, not a text"
    return f"{NOTHING_TO_SEND}: its matchers name no text, nor parts as a recording writes them"


def part_of(predicate: Any) -> dict[str, Any] | None:
    """A part that satisfies a `parts: {any: {…}}` matcher (`{any: {mediaType: text/x-diff}}`
    is a text part of that type), or None. A guess: an interaction the cassette does not answer
    it with is skipped (see `_run`)."""
    wanted = predicate.get("any") if isinstance(predicate, dict) and len(predicate) == 1 else None
    if not isinstance(wanted, dict):
        return None
    part: dict[str, Any] = {}
    for key, value in wanted.items():
        if key == "data" and isinstance(value, dict) and set(value) == {"subset"}:
            value = {"equals": value["subset"]}
        found = example(value)
        if key not in ("text", "data", "mediaType", "filename") or found is None:
            return None
        part[key] = found
    return part if "text" in part or "data" in part else {"text": "verify", **part}


def request_message(interaction: Interaction) -> dict[str, Any] | None:
    """The message an interaction was recorded from, as far as its matchers tell (its text,
    parts, a part a `parts: {any}` matcher asks for, and the message id a `where:
    {message.messageId}` names)."""
    parts: dict[int, dict[str, Any]] = {}
    for path, predicate in interaction.match.where.items():
        found = PART_FIELD.fullmatch(path)
        value = example(predicate)
        if found and value is not None:
            parts.setdefault(int(found[1]), {})[found[2]] = value
    text = example(interaction.match.text)
    if isinstance(text, str):
        free = next((i for i in sorted(parts) if "data" not in parts[i]), None)
        index = free if free is not None else (max(parts) + 1 if parts else 0)
        parts.setdefault(index, {})["text"] = text
    sent = [parts[i] for i in sorted(parts) if "text" in parts[i] or "data" in parts[i]]
    wanted = part_of(interaction.match.parts)
    if wanted is not None:
        sent.append(wanted)
    message_id = example(interaction.match.where.get("message.messageId"))
    if isinstance(message_id, str):  # told apart by its id (the TCK's prefixes): any text will do
        return {"role": "ROLE_USER", "parts": sent or [{"text": "verify"}], "messageId": message_id}
    return {"role": "ROLE_USER", "parts": sent} if sent else None


def operations(interaction: Interaction) -> frozenset[str]:
    """The message operations an interaction answers that verify can send."""
    ops = interaction.match.operation
    return SENT if ops is None else SENT & frozenset([ops] if isinstance(ops, str) else ops)


def _steps(interaction: Interaction) -> list[Step]:
    reply = interaction.reply
    return list(reply.task.steps) if reply is not None and reply.task is not None else []


def mode_of(interaction: Interaction) -> str:
    """How to send an interaction's message: `polls` for a script recorded from polls (`after:
    {polls}` gates), `stream` for one recorded from a stream (its steps have `after: {ms}` gaps or
    `after: {subscribers}` gates, or it says how its stream opens with `first:`), else `block`."""
    ops = operations(interaction)
    reply = interaction.reply
    steps = _steps(interaction)
    first = reply is not None and reply.task is not None and reply.task.first is not None
    gaps = any(s.after is not None and s.after.ms is not None and not s.after.polls for s in steps)
    if subscribers(interaction) and "SendStreamingMessage" in ops:
        # only a streamed task's script waits for subscribers; a polls gate beside one came
        # from the subscription that saw the step first (it waits for the client there)
        return "stream"
    if "SendMessage" in ops and gates(interaction):
        # polls gates win over `first:`: a returnImmediately answer is recorded as `task-as-is`
        return "polls"
    if "SendMessage" not in ops or ((first or gaps) and "SendStreamingMessage" in ops):
        return "stream"
    return "block"


def gates(interaction: Interaction) -> list[int]:
    """The polls each polls gate of the script waits for, up to where the script stops."""
    out = []
    for step in _steps(interaction):
        if step.after is not None and step.after.polls:
            out.append(step.after.polls)
        state = step.task_state
        if state is not None and (state.terminal or state.interrupted):
            break
    return out


def subscribers(interaction: Interaction) -> int:
    """The subscriptions the script's `after: {subscribers}` gates wait for (the most any
    gate counts: each counts the subscriptions opened on the task so far)."""
    return max(
        (s.after.subscribers or 0 for s in _steps(interaction) if s.after is not None), default=0
    )


def _poll(interaction: Interaction, live: Side, replay: Side) -> list[str]:
    """GetTask on both sides, gate by gate. The cassette is polled as often as each gate waits
    for and the poll that passes it is compared: a poll that saw no change saw the recorded
    agent's pace, not what it answers. The live agent is polled while it is on its way to the
    same (see `Side.poll`): an agent that moves on polls is not polled on past a drift. A gate
    the live agent passed in fewer polls is a drift (`timing`): its line."""
    out = []
    for k, polls in enumerate(gates(interaction), start=1):
        tasks = live.tasks.get(interaction.name), replay.tasks.get(interaction.name)
        if tasks[0] is None or tasks[1] is None:
            break  # one side answered with no task: the first call's difference says so
        for _ in range(polls - 1):
            replay.get_task(tasks[1]["taskId"])
        expected = replay.get_task(tasks[1]["taskId"])
        replay.exchanges.append(expected)
        took = live.poll(tasks[0]["taskId"], expected)
        if fewer_polls(polls, took) and not differences([live.exchanges[-1]], [expected]):
            out.append(
                f"poll {k}: the live task showed this after {took} poll(s), "
                f"`after: {{polls: {polls}}}` in the cassette"
            )
    return out


def verify_cassette(path: str | Path, upstream: str, binding: str = "JSONRPC") -> list[Verdict]:
    """Send the requests of the cassette at `path` to `upstream` and to the cassette; a verdict
    per interaction (an Agentex cassette's as `verify_agentex` sends them; `binding` is A2A's).
    Raises CassetteError for an unreadable cassette, UpstreamError when `upstream` is no agent."""
    agentex = load_cassette(path).cassette.protocol == "agentex"
    with httpx.Client(timeout=TIMEOUT, trust_env=False) as http:
        check_upstream(http, upstream, agentex)
        return run(path, http_sender(http, upstream), binding)


def run(path: str | Path, send: Send, binding: str, watch: Watch | None = None) -> list[Verdict]:
    """Verify the cassette at `path` against the live agent `send` reaches (an A2A agent over
    `binding`, or an Agentex platform); `watch` sees each interaction's calls."""
    loaded = load_cassette(path)
    app = create_app(path, pace="instant", admin=False)
    try:
        interactions = loaded.cassette.interactions
        if loaded.cassette.protocol == "agentex":
            agents = [agent.name for agent in loaded.cassette.agents]
            found = verify_agentex(
                interactions, AgentexSide(send), AgentexSide(wsgi_sender(app)), watch, agents
            )
            return [
                Verdict(name, differences=diffs, skipped=why, mode=mode)
                for name, diffs, why, mode in found
            ]
        mounts = app.extensions["mockagent"]

        def answered() -> str | None:  # the interaction that answered the cassette's last message
            calls = [
                e for m in mounts.agents.values() for e in m.journal.entries if e.operation in SENT
            ]
            return calls[-1].interaction if calls else None

        sides = Side(send, binding), Side(wsgi_sender(app), binding)
        return _run(interactions, *sides, watch, answered)
    finally:
        app.extensions["mockagent"].close()


def _run(
    interactions: list[Interaction],
    live: Side,
    replay: Side,
    watch: Watch | None,
    answered: Callable[[], str | None],
) -> list[Verdict]:
    verdicts: list[Verdict] = []
    spans: dict[str, range] = {}  # interaction name -> the numbers of its calls (from 0)
    for interaction in interactions:
        message = request_message(interaction)
        if not operations(interaction):
            verdicts.append(Verdict(interaction.name, skipped="not a message"))
            continue
        if message is None:
            verdicts.append(Verdict(interaction.name, skipped=nothing_to_send(interaction)))
            continue
        origin = _origin(interaction)
        if origin is not None and origin not in replay.tasks:
            # sent as a new message, it would be answered by another interaction: no test
            why = f"a follow-up of {origin}, which has no task before it to follow up on"
            verdicts.append(Verdict(interaction.name, skipped=why))
            continue
        mode = mode_of(interaction)
        made = len(live.exchanges)
        if watch is not None:
            watch.begin()
        # a blocking answer plays through subscribers gates: no subscription to open for it
        opened = subscribers(interaction) if mode != "block" else 0
        for side in (live, replay):
            # both ids, as the official clients send them on a follow-up
            follow_up = side.tasks.get(origin or "", {})
            side.message(interaction.name, {**message, **follow_up}, mode, opened)
        if not origin:  # a follow-up's 404 may be a task the agent lost: a drift
            routed(interaction.name, live.exchanges[made], replay.exchanges[made])
        other = answered()
        if other != interaction.name:
            # what verify rebuilt of its request is another's: comparing would test that one
            if watch is not None:
                watch.end(interaction.name)
            for side in (live, replay):
                side.tasks.pop(interaction.name, None)
            by = f"by {other}" if other else "by no interaction"
            why = f"its request, as verify rebuilds it from its matchers, is answered {by}"
            verdicts.append(Verdict(interaction.name, skipped=why))
            continue
        moved = _poll(interaction, live, replay) if mode == "polls" else []
        if watch is not None:
            watch.end(interaction.name)
        spans[interaction.name] = range(made, len(live.exchanges))
        verdict = Verdict(interaction.name, mode=mode)
        verdict.differences = _compare(live, replay, spans.get(origin or ""), spans[verdict.name])
        verdict.differences += moved
        if mode == "stream":
            verdict.differences += _paced(interaction, live, replay, made)
        verdicts.append(verdict)
    return verdicts


def _paced(interaction: Interaction, live: Side, replay: Side, made: int) -> list[str]:
    """The `ms` gates of a streamed script the live agent is far off (`timing`), when
    both sides sent as many events."""
    events = live.exchanges[made].events, replay.exchanges[made].events
    if events[0] is None or events[1] is None or len(events[0]) != len(events[1]):
        return []
    gates = []
    for step in _steps(interaction):
        gates.append(step.after.ms if step.after is not None else None)
        state = step.task_state
        if state is not None and (state.terminal or state.interrupted):
            break  # a stream closes there
    return gate_drift(gates, live.arrivals.get(made, []))


def _origin(interaction: Interaction) -> str | None:
    return interaction.match.task.from_ if interaction.match.task else None


def _compare(live: Side, replay: Side, before: range | None, calls: range) -> list[str]:
    """The differences of an interaction's calls, compared after those of the interaction that
    created its task (a follow-up must answer on the same task; see `own_differences`)."""
    return own_differences((live, replay), before, calls, later="poll {k}: ")
