"""What `mockagent lint` knows of the dialects in front of the engine: which calls reach an
interaction, and which fields of its fault can ever take effect.

A call reaches the interactions only when its dialect lets it through: an A2A card that does
not stream refuses SendStreamingMessage and SubscribeToTask, one without push notifications
the push-config operations, and GetExtendedAgentCard is answered from the card itself; an
Agentex agent's RPC takes the methods of its ACP type only (a sync agent gets message/send, an
async one event/send), its REST routes the task operations.

A fault's stream cuts (`dropAfter`, `errorAfter`, `closeAfter`) act on streams only
(SendStreamingMessage, SubscribeToTask); they count the events sent, the first answer included
(mockagent/dialects/faults.py), and the first cut to come ends the stream. An HTTP `status`
answers before any stream; `body` is the body of that status, `error` the event `errorAfter`
sends.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mockagent.cassette.models import Cassette, Fault, Interaction, Match
from mockagent.lint_tasks import INTERRUPTED, operations, steps_of, stops
from mockagent.vocabulary import (
    A2A_OPERATIONS,
    ACP_OPERATIONS,
    AGENTEX_ROUTE_OPERATIONS,
    CARD_OPERATION,
    PUSH_OPERATIONS,
    STREAMING_OPERATIONS,
)

CUTS = ("dropAfter", "closeAfter", "errorAfter")
"""The fault fields that cut a stream."""
AFTER_EVENTS = ("closeAfter", "dropAfter", "errorAfter")  # who wins a tie at N >= 1 …
AT_ZERO = ("dropAfter", "errorAfter", "closeAfter")  # … and at 0 (dialects/faults.py)

Problem = tuple[str, str]
"""(the fault's field, why it never takes effect)."""


def reachable(cassette: Cassette) -> frozenset[str]:
    """The operations of the calls that reach `cassette`'s interactions."""
    if cassette.protocol == "agentex":
        by_type = (ACP_OPERATIONS[agent.acp_type] for agent in cassette.agents)
        return AGENTEX_ROUTE_OPERATIONS.union(*by_type)
    ops = A2A_OPERATIONS - {CARD_OPERATION}  # the card answers it: no interaction is asked
    capabilities = cassette.agent.capabilities if cassette.agent is not None else None
    if capabilities is not None and not capabilities.streaming:
        ops -= STREAMING_OPERATIONS
    if capabilities is not None and not capabilities.pushNotifications:
        ops -= PUSH_OPERATIONS
    return ops


def reach(match: Match, cassette: Cassette) -> frozenset[str]:
    """The operations of the calls that may reach an interaction with matchers `match`."""
    return operations(match) & reachable(cassette)


def cuts(fault: Fault) -> list[str]:
    """The fault's stream cuts, in a fixed order."""
    return [name for name in CUTS if getattr(fault, name) is not None]


def first_cut(fault: Fault) -> str | None:
    """The cut that ends the stream, however long it is (the others never fire): the smallest
    count; at a tie, `closeAfter` (it ends the stream right after the event it counts), then
    `dropAfter`, then `errorAfter` (checked in that order before the next event); at 0, before
    any event, `dropAfter`, `errorAfter`, `closeAfter`."""
    found = cuts(fault)
    if not found:
        return None

    def rank(name: str) -> tuple[int, int]:
        count = getattr(fault, name)
        order = AT_ZERO if count == 0 else AFTER_EVENTS
        return count, order.index(name)

    return min(found, key=rank)


def most_events(
    interaction: Interaction, interactions: Sequence[Interaction]
) -> tuple[int, str] | None:
    """The most events an A2A SendStreamingMessage answered by `interaction` sends, its first
    answer included, and why; None when no bound is sure.

    A direct message is one event. A task sends its first answer and one event per step, up to
    the step that ends the stream (a terminal or interrupted state). That holds only for a new
    task whose script runs whole within the call, with no other steps put on it: so no step of
    any script waits (`after`) or follows a stop, and no CancelTask plays a script."""
    reply = interaction.reply
    if reply is None or reply.error is not None:
        return None
    if reply.message is not None:
        return 1, "a message is one event"
    if interaction.match.task is not None or not _steady(interactions):
        return None
    for j, step in enumerate(steps_of(interaction)):
        state = step.task_state
        if state is not None and (state.terminal or state in INTERRUPTED):
            why = f"the first answer, then one per step up to step {j + 1}, {state.name}"
            return j + 2, why
    return None  # a task left WORKING: a cancel or a later message may add events


def _steady(interactions: Sequence[Interaction]) -> bool:
    """Whether every task script runs to its end in the call that starts it, untouched."""
    for interaction in interactions:
        steps = steps_of(interaction)
        if any(step.after is not None for step in steps) or stops(steps):
            return False
        if "CancelTask" in operations(interaction.match) and steps:
            return False
    return True


def fault_problems(
    fault: Fault, ops: frozenset[str], most: tuple[int, str] | None
) -> Iterator[Problem]:
    """The fields of `fault` that never take effect, on an interaction that calls of `ops`
    reach (not empty) and whose stream sends at most `most` events (`most_events`; None:
    unknown)."""
    if fault.body is not None and fault.status is None:
        yield (
            "body",
            "fault.body is the body of an HTTP `status`: without fault.status it is never sent",
        )
    if fault.error is not None and fault.errorAfter is None:
        yield (
            "error",
            "fault.error is the event errorAfter sends: without fault.errorAfter it is never sent",
        )
    found = cuts(fault)
    if not found:
        return
    named = ", ".join(f"fault.{name}" for name in found)
    if fault.status is not None:
        verb = "fires" if len(found) == 1 else "fire"
        yield (
            found[0],
            f"{named} never {verb}: fault.status {fault.status} answers the call before any "
            "stream opens",
        )
        return
    streams = ops & STREAMING_OPERATIONS
    if not streams:
        return  # `never_streams` says why
    first = first_cut(fault)
    assert first is not None
    for name in found:
        if name != first:
            yield (
                name,
                f"fault.{name} ({getattr(fault, name)}) never fires: fault.{first} "
                f"({getattr(fault, first)}) ends the stream first",
            )
    count = getattr(fault, first)
    if most is None or streams != {"SendStreamingMessage"}:
        return  # a subscription sends what every later call to its task adds
    events, why = most
    if events < count or (first == "closeAfter" and events <= count):
        ends = " (and ends there anyway)" if first == "closeAfter" else ""
        yield (
            first,
            f"fault.{first}: {count} never fires: the stream sends at most {events} "
            f"event{'' if events == 1 else 's'}{ends}: {why}",
        )


def never_streams(fault: Fault, ops: frozenset[str]) -> str | None:
    """The message for a fault with stream cuts on an interaction that no stream reaches (it
    answers `ops` only); None when a stream does, or the fault cuts nothing."""
    found = cuts(fault)
    if not found or fault.status is not None or ops & STREAMING_OPERATIONS:
        return None
    verb = "applies" if len(found) == 1 else "apply"
    named = ", ".join(f"fault.{name}" for name in found)
    return (
        f"{named} only {verb} to streams (SendStreamingMessage, SubscribeToTask), "
        f"and this interaction answers only {', '.join(sorted(ops))}"
    )
