"""The protocol vocabulary: the names the dialects, the engine, the proxy, `lint` and the command
line share, each defined here once. Imports nothing, so the pytest plugin may use it for free."""

from __future__ import annotations

CARD_PATH = "/.well-known/agent-card.json"
"""Where an A2A agent's public card is served, below the agent's URL."""

AGENTS_PATH = "/agents"
"""An Agentex platform's agent list: what tells it from an A2A agent, which serves a card."""

RECORD_MODES = ("none", "once", "new_episodes", "all")
"""VCR.py's record modes: replay only, record when missing, record what is new, record anew."""

RECORDING_MODES = RECORD_MODES[1:]
"""The record modes that record (`mockagent record --mode`): all but `none`."""

HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
"""Every method a catch-all route takes: the dialects answer an unknown one themselves."""

MESSAGE_OPERATIONS = frozenset({"SendMessage", "SendStreamingMessage", "SendEvent"})
"""Operations that carry a message to the agent: interactions answer them."""

STREAMING_OPERATIONS = frozenset({"SendStreamingMessage", "SubscribeToTask"})
"""A2A operations answered with a stream (a card with `streaming: false` refuses them)."""

PUSH_OPERATIONS = frozenset(
    {
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    }
)
"""The push-notification config operations (a card with `pushNotifications: false` refuses them)."""

CARD_OPERATION = "GetExtendedAgentCard"
"""The A2A operation the dialect answers from the card (`agent.extendedCard`) itself: no
interaction is ever asked."""

A2A_OPERATIONS = (
    frozenset(
        {
            "SendMessage",
            "GetTask",
            "ListTasks",
            "CancelTask",
            CARD_OPERATION,
        }
    )
    | STREAMING_OPERATIONS
    | PUSH_OPERATIONS
)
"""Every A2A v1.0 operation (JSON-RPC method names are the operation names)."""

AGENTEX_OPERATIONS = frozenset(
    {
        "SendMessage",
        "SendStreamingMessage",
        "SendEvent",
        "CreateTask",
        "CancelTask",
        "InterruptTask",
        "GetTask",
        "ListTasks",
        "SubscribeToTask",  # what the engine sees of Agentex's GET /tasks/{id}/stream
    }
)
"""The operations the Agentex dialect turns its RPC methods and routes into."""

ACP_OPERATIONS = {
    "sync": frozenset({"SendMessage", "SendStreamingMessage", "CreateTask", "InterruptTask"}),
    "async": frozenset({"SendEvent", "CreateTask", "CancelTask", "InterruptTask"}),
    "agentic": frozenset({"SendEvent", "CreateTask", "CancelTask", "InterruptTask"}),
}
"""The operations an Agentex agent's RPC takes, by its ACP type: the platform's allowed RPC
methods (message/send is SendMessage, or SendStreamingMessage with `stream: true`); the others
are refused, whatever the cassette says."""

AGENTEX_ROUTE_OPERATIONS = frozenset(
    {"GetTask", "ListTasks", "SubscribeToTask", "CancelTask", "InterruptTask"}
)
"""The operations Agentex's REST routes make, for an agent of any ACP type."""

OPERATIONS = {"a2a": A2A_OPERATIONS, "agentex": AGENTEX_OPERATIONS}
"""The operations of each cassette `protocol`."""

TASK_OPERATIONS = (
    frozenset(
        {
            "GetTask",
            "CancelTask",
            "ListTasks",
            "CreateTask",
            "InterruptTask",
        }
    )
    | PUSH_OPERATIONS
)
"""Operations on tasks the engine answers by itself, without an interaction."""

ADMIN_PREFIX = "/_mockagent"
"""Where the admin API, the inspector and the journal are served, beside every agent."""
