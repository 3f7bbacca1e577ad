"""What `mockagent lint` knows of the dialects in front of the engine: which calls reach an
interaction.

A call reaches the interactions only when its dialect lets it through: an A2A card that does
not stream refuses SendStreamingMessage and SubscribeToTask, one without push notifications
the push-config operations, and GetExtendedAgentCard is answered from the card itself (or
refused); an Agentex agent's RPC takes the methods of its ACP type only (a sync agent gets
message/send, an async one event/send), its REST routes the task operations.
"""

from __future__ import annotations

from collections.abc import Iterator

from mockagent.cassette.models import Cassette
from mockagent.vocabulary import (
    A2A_OPERATIONS,
    ACP_OPERATIONS,
    AGENTEX_ROUTE_OPERATIONS,
    CARD_OPERATION,
    MESSAGE_OPERATIONS,
    PUSH_OPERATIONS,
    STREAMING_OPERATIONS,
)

Unreached = tuple[str, str]
"""(a finding's code, its message)."""


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


def unreached(cassette: Cassette, ops: frozenset[str]) -> Iterator[Unreached]:
    """Why calls of some of `ops` (an interaction's operations) never reach it: the card's
    capabilities (A2A) or the agents' ACP types (Agentex)."""
    if cassette.protocol == "agentex":
        if not ops & reachable(cassette):
            types = sorted({agent.acp_type for agent in cassette.agents})
            takes = set().union(*(ACP_OPERATIONS[t] for t in types)) & MESSAGE_OPERATIONS
            yield (
                "acp-type",
                (
                    f"matches only {', '.join(sorted(ops))}, which an agent of ACP type "
                    f"{' or '.join(types)} is never sent (its RPC refuses the method; of the "
                    f"message operations it takes {', '.join(sorted(takes))})"
                ),
            )
        return
    agent = cassette.agent
    if agent is None:
        return
    if not agent.capabilities.streaming and ops <= STREAMING_OPERATIONS:
        yield (
            "streaming-off",
            (
                f"matches only {', '.join(sorted(ops))}, but the card says "
                "capabilities.streaming: false"
            ),
        )
    push = sorted(ops & PUSH_OPERATIONS)
    if push and not agent.capabilities.pushNotifications:
        yield (
            "push-off",
            (f"matches {', '.join(push)}, but the card says capabilities.pushNotifications: false"),
        )
    if CARD_OPERATION in ops:
        if not agent.capabilities.extendedAgentCard:
            why = "but the card says capabilities.extendedAgentCard: false"
        elif agent.extendedCard is None:
            why = "but the cassette has no agent.extendedCard: the call is refused"
        else:
            why = "which the agent answers from its card (agent.extendedCard), not an interaction"
        yield "extended-card-off", f"matches {CARD_OPERATION}, {why}"
