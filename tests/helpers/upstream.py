"""A small real A2A agent built on the official `a2a-sdk` server, for recording round trips.

The agent answers by the user's text (the first rule that matches wins):

- a new message ending with "?"  -> a direct Message "Answer: <text>" (no task);
- contains "build"               -> a task: WORKING "Building", the artifact `build-log` in three
  chunks ("step 1\\n", "step 2\\n", "step 3\\n"; the 2nd and 3rd append, the 3rd is the last
  chunk), the data artifact `result` {"ok": true, "steps": 3}, then COMPLETED "Build done", with
  `delay` seconds between consecutive events;
- contains "ask"                 -> a task: WORKING, then INPUT_REQUIRED "Which branch?"; the next
  message on that task -> WORKING, the artifact `answer` "Using branch <text>", COMPLETED;
- contains "fail"                -> a task: WORKING, then FAILED "Something broke";
- anything else                  -> a task COMPLETED with the status message "Done: <text>".

Every task is first enqueued as a SUBMITTED `Task` (the SDK insists on a Task before the first
status update), so streams begin with a `task` event. Streaming and push notifications are on;
push uses the SDK's in-memory config store and its httpx-based sender.

`UpstreamAgent` serves it with uvicorn on 127.0.0.1 (a free port) in a daemon thread: JSON-RPC at
`POST /`, the HTTP+JSON (REST) routes under the same root, the card at
`/.well-known/agent-card.json`. Both card interfaces say `url` = the root, protocolVersion 1.0.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import uvicorn
from a2a.helpers import new_data_part, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette

DEFAULT_DELAY = 0.04
"""Seconds between consecutive events of a build (the brief asks for ~30-50 ms)."""

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


class UpstreamExecutor(AgentExecutor):
    """The agent's behaviour, by the text of the user's message."""

    def __init__(
        self, delay: float = DEFAULT_DELAY, app_factory: Callable[[str], Starlette] | None = None
    ) -> None:
        self.delay = delay
        # Another agent's app (given the URL its card must advertise) on the same server: its
        # `state.handler.aclose()` must end its open streams, as the SDK handler's does.
        self.app_factory = app_factory

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        assert context.task_id and context.context_id  # the SDK fills both in

        if task is None and text.rstrip().endswith("?"):
            await event_queue.enqueue_event(
                new_text_message(f"Answer: {text}", context_id=context.context_id)
            )
            return

        if task is None:
            assert context.message is not None
            task = Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message],
            )
            await event_queue.enqueue_event(task)
            follow_up = False
        else:
            follow_up = task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED

        updater = TaskUpdater(event_queue, context.task_id, context.context_id)

        def say(words: str) -> Message:
            return updater.new_agent_message([new_text_part(words)])

        if follow_up:
            await updater.start_work()
            await updater.add_artifact(
                [new_text_part(f"Using branch {text}")], artifact_id="answer", name="answer"
            )
            await updater.complete()
        elif "build" in text:
            await self._build(updater, say)
        elif "ask" in text:
            await updater.start_work()
            await updater.requires_input(say("Which branch?"))
        elif "fail" in text:
            await updater.start_work()
            await updater.failed(say("Something broke"))
        else:
            await updater.complete(say(f"Done: {text}"))

    async def _build(self, updater: TaskUpdater, say: Callable[[str], Message]) -> None:
        await updater.start_work(say("Building"))
        for n in (1, 2, 3):
            await asyncio.sleep(self.delay)
            await updater.add_artifact(
                [new_text_part(f"step {n}\n")],
                artifact_id="build-log",
                name="build-log",
                append=n > 1,
                last_chunk=n == 3,
            )
        await asyncio.sleep(self.delay)
        await updater.add_artifact(
            [new_data_part({"ok": True, "steps": 3})],
            artifact_id="result",
            name="result",
        )
        await asyncio.sleep(self.delay)
        await updater.complete(say("Build done"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel(updater.new_agent_message([new_text_part("Canceled")]))


def agent_card(url: str) -> AgentCard:
    """The card: JSON-RPC first, then HTTP+JSON, both at `url` (the server's root)."""
    return AgentCard(
        name="upstream",
        description="A real a2a-sdk agent for record-and-replay round-trip tests.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="upstream",
                name="Upstream behaviours",
                description=(
                    "'?' -> a message; 'build' -> streamed artifacts; 'ask' -> input-required; "
                    "'fail' -> failed; else completed."
                ),
                tags=["test"],
                examples=["What time is it?", "build it", "ask me", "fail now", "hello"],
            )
        ],
    )


def create_app(url: str, delay: float = DEFAULT_DELAY, card: AgentCard | None = None) -> Starlette:
    """The agent as a Starlette app whose card (`card`, default `agent_card(url)`) advertises
    `url`."""
    card = card or agent_card(url)
    push_http = httpx.AsyncClient(timeout=5.0)
    push_store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=UpstreamExecutor(delay),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(push_http, push_store),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await handler.aclose()
            await push_http.aclose()

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.handler = handler  # UpstreamAgent.stop closes it early, to end open streams
    return app


class UpstreamAgent:
    """The agent served by uvicorn on 127.0.0.1, port 0, in a daemon thread.

    The listening socket is bound before the app is built, so the card carries the real URL
    from the first request on.
    """

    def __init__(
        self, delay: float = DEFAULT_DELAY, app_factory: Callable[[str], Starlette] | None = None
    ) -> None:
        self.delay = delay
        # Another agent's app (given the URL its card must advertise) on the same server: its
        # `state.handler.aclose()` must end its open streams, as the SDK handler's does.
        self.app_factory = app_factory
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._app: Starlette | None = None

    @property
    def card_url(self) -> str:
        return self.url + "/.well-known/agent-card.json"

    def start(self) -> UpstreamAgent:
        """Serve; return once the server accepts connections."""
        if self._thread is not None:
            raise RuntimeError("already started")
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections only when the
        # listening socket's proto says TCP; with the default proto 0, Nagle holds each response
        # body behind its headers for a delayed ACK (~40 ms a request).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self._app = (
            self.app_factory(self.url) if self.app_factory else create_app(self.url, self.delay)
        )
        config = uvicorn.Config(
            self._app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run,
            kwargs={"sockets": [sock]},
            name=f"upstream-agent-{port}",
            daemon=True,
        )
        self._server, self._thread, self._sock = server, thread, sock
        thread.start()
        # Poll `started`; joining with a short timeout doubles as the wait and notices a thread
        # that died during startup (uvicorn calls sys.exit on startup failures).
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            thread.join(0.005)
            if not thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"upstream agent did not start on {self.url}")
        return self

    def stop(self) -> None:
        """Stop serving; return once the server thread has ended."""
        server, thread, sock, app = self._server, self._thread, self._sock, self._app
        self._server, self._thread, self._sock, self._app = None, None, None, None
        running = server is not None and server.started and thread is not None and thread.is_alive()
        if running and server is not None and app is not None:
            # End the agent's tasks first: that closes open streams (a subscription to a task
            # waiting for input never ends by itself), which uvicorn would otherwise wait
            # `timeout_graceful_shutdown` for and then cancel noisily.
            loop = server.servers[0].get_loop()
            done = asyncio.run_coroutine_threadsafe(app.state.handler.aclose(), loop)
            with contextlib.suppress(Exception):
                done.result(STOP_TIMEOUT)
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(STOP_TIMEOUT)
            if thread.is_alive():
                if server is not None:
                    server.force_exit = True
                thread.join(STOP_TIMEOUT)
        if sock is not None:
            sock.close()

    def __enter__(self) -> UpstreamAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def serve_upstream(delay: float = DEFAULT_DELAY) -> Iterator[UpstreamAgent]:
    """An `UpstreamAgent`, started for the block and stopped after it."""
    agent = UpstreamAgent(delay).start()
    try:
        yield agent
    finally:
        agent.stop()


if __name__ == "__main__":  # pragma: no cover - manual use: python -m tests.helpers.upstream
    with serve_upstream() as running:
        print(f"upstream agent at {running.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
