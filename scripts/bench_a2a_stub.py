"""A stub agent on the official `a2a-sdk` 1.x server (uvicorn), the bench's "real agent" baseline.

It answers the bench's three messages the way bench/cassettes/bench.yaml does, so that wrk sends
every target the same bytes:

- "ping?"       -> a direct Message "pong" (no task);
- "run task"    -> a task: SUBMITTED, WORKING, the `report` artifact, COMPLETED (blocking
                   SendMessage returns the completed task, GetTask finds it in the task store);
- "stream nine" -> the same kind of task with six `log` chunks: nine stream events in all.

Run as `python scripts/bench_a2a_stub.py PORT`; it serves JSON-RPC at `POST /` until killed.
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from a2a.helpers import new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette


class StubExecutor(AgentExecutor):
    """Canned behaviour keyed on the user's text; no sleeps, so only the SDK's own cost is timed."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        assert context.task_id and context.context_id and context.message is not None
        if text.endswith("?"):
            await event_queue.enqueue_event(new_text_message("pong", context_id=context.context_id))
            return
        # The SDK wants the Task itself enqueued before any status update.
        await event_queue.enqueue_event(
            Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message],
            )
        )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work(updater.new_agent_message([new_text_part("Working")]))
        if "stream" in text:
            for n in range(1, 7):
                await updater.add_artifact(
                    [new_text_part(f"chunk {n}\n")],
                    artifact_id="log",
                    name="log.txt",
                    append=n > 1,
                    last_chunk=n == 6,
                )
        else:
            await updater.add_artifact(
                [new_text_part("all good\n")],
                artifact_id="report",
                name="report.txt",
                last_chunk=True,
            )
        await updater.complete(updater.new_agent_message([new_text_part("Done")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("the bench never cancels")


def handler(agent_card: AgentCard) -> DefaultRequestHandler:
    """The SDK's request handler over the stub executor and an in-memory task store;
    scripts/bench_a2a_grpc_stub.py serves the same one over gRPC."""
    return DefaultRequestHandler(
        agent_executor=StubExecutor(), task_store=InMemoryTaskStore(), agent_card=agent_card
    )


def card(url: str, binding: str = "JSONRPC") -> AgentCard:
    """The stub's agent card, with one interface: `binding` at `url`."""
    return AgentCard(
        name="bench-stub",
        description="a2a-sdk stub for scripts/bench",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="bench", name="Bench", description="Canned answers.", tags=["bench"])
        ],
    )


def create_app(url: str) -> Starlette:
    """The stub as a Starlette app: card routes and JSON-RPC at `/`."""
    found = card(url)
    return Starlette(
        routes=[
            *create_agent_card_routes(found),
            *create_jsonrpc_routes(handler(found), rpc_url="/"),
        ]
    )


def main() -> None:
    port = int(sys.argv[1])
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on connections accepted from a socket
    # whose proto says TCP; without it Nagle delays each keep-alive response by ~40 ms.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    app = create_app(f"http://127.0.0.1:{port}")
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
