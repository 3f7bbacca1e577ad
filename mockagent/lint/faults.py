"""What `mockagent lint` knows of scripted faults: which fields of an interaction's `fault` can
ever take effect where the interaction is reached.

A fault's stream cuts (`dropAfter`, `errorAfter`, `closeAfter`) act on streams only
(SendStreamingMessage, SubscribeToTask); they count the events sent, the first answer included,
and the first cut to come ends the stream (mockagent/engine/faults.py plays them). An HTTP
`status` answers before any stream opens; `body` is the body of that status, `error` the event
`errorAfter` sends.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mockagent.cassette.models import Cassette, Fault, Interaction
from mockagent.lint.tasks import INTERRUPTED, operations, steps_of, stops
from mockagent.vocabulary import STREAMING_OPERATIONS

CUTS = ("dropAfter", "closeAfter", "errorAfter")
"""The fault fields that cut a stream."""
AFTER_EVENTS = ("closeAfter", "dropAfter", "errorAfter")  # who wins a tie at N >= 1 …
AT_ZERO = ("dropAfter", "errorAfter", "closeAfter")  # … and at 0 (engine/faults.py)

Problem = tuple[str | None, str, str]
"""(the fault's field, None for the whole interaction; the finding's code; its message)."""


def fault_findings(
    cassette: Cassette,
    interaction: Interaction,
    ops: frozenset[str],
    interactions: Sequence[Interaction],
) -> Iterator[Problem]:
    """What in `interaction`'s fault never takes effect, when calls of `ops` (not none) reach
    it among `interactions`, under `cassette`'s card."""
    fault = interaction.fault
    if fault is None:
        return
    found = cuts(fault)
    if found and fault.status is None and not ops & STREAMING_OPERATIONS:
        named = ", ".join(f"fault.{name}" for name in found)
        verb = "applies" if len(found) == 1 else "apply"
        agent = cassette.agent
        if agent is not None and not agent.capabilities.streaming:
            why = "but the card says capabilities.streaming: false"
            yield None, "streaming-off", f"{named} only {verb} to streams, {why}"
        else:
            why = f"and this interaction answers only {', '.join(sorted(ops))}"
            where = "streams (SendStreamingMessage, SubscribeToTask)"
            yield found[0], "fault-never-fires", f"{named} only {verb} to {where}, {why}"
    most = most_events(interaction, interactions) if cassette.protocol == "a2a" else None
    for name, message in fault_problems(fault, ops, most):
        yield name, "fault-never-fires", message


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
) -> Iterator[tuple[str, str]]:
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
        return  # `fault_findings` says why
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
