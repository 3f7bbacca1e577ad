"""The A2A gRPC binding served by grpcio's own servers, over the agents of a `Mounts`: the same
engines as the HTTP app, so one cassette answers every binding with the same tasks and ids.

A single cassette is the agent of every call (its `tenant` passes to the engine, as an HTTP+JSON
tenant prefix does); in a folder, the request's `tenant` names the agent (the file's stem), as
the mount path does over HTTP, and the card's GRPC interface carries it. Needs
`mockagent-server[grpc]`: import this module only when gRPC is asked for.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import grpc

from mockagent import errors
from mockagent.dialects.a2a.grpc_aio import aio_handler
from mockagent.dialects.a2a.grpc_binding import Target
from mockagent.server.mounts import Mounts
from mockagent.server.sockets import target_of

EXTRA = "mockagent-server[grpc]"
"""What to install for gRPC (grpcio and the a2a-sdk's generated stubs)."""
T = TypeVar("T")
STOP_GRACE_S = 1.0
"""How long a stop waits for calls under way (open streams have already been ended)."""


class GrpcServer:
    """grpc.aio's server for the agents in `mounts`, listening from construction on (call
    `start()`), on an event loop in a thread of its own. `http_root` is the HTTP server's root
    URL: the cards' other interfaces.

    In memory a call that does not wait is answered on the loop where it arrives (no thread
    handoff, which is most of what a call costs on grpcio's thread-pool server). On a shared
    store every call waits for the store, and runs on one of `threads`; a stream holds one of
    them while it waits for its next event (see `dialects.a2a.grpc_aio`)."""

    def __init__(
        self,
        mounts: Mounts,
        http_root: str,
        host: str = "127.0.0.1",
        port: int = 0,
        threads: int = 128,
        reuse_port: bool = False,
    ) -> None:
        self.mounts = mounts
        self.http_root = http_root.rstrip("/")
        self._threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="mockagent-grpc")
        # SO_REUSEPORT only where `serve` asks for it (its workers share the port it reserved);
        # elsewhere a port in use must be an error, not a second server on it.
        options = [("grpc.so_reuseport", 1 if reuse_port else 0)]
        waits = any(engine.tasks.shared for engine in mounts.agents.values())
        self._loop = _Loop()
        try:
            self._aio, self.port = self._loop.run(self._bind(host, port, options, waits))
        except BaseException:
            self._loop.end()
            raise
        self.host = host
        self.target = target_of(host, self.port)

    async def _bind(
        self, host: str, port: int, options: list[tuple[str, Any]], waits: bool
    ) -> tuple[grpc.aio.Server, int]:
        handler = aio_handler(self.resolve, self._threads, waits)
        server = grpc.aio.server(handlers=[handler], options=options)
        return server, _add_port(server, host, port)

    def resolve(self, tenant: str) -> Target:
        """The agent of a call whose `tenant` field is `tenant`."""
        mounts = self.mounts
        if mounts.single:
            service = mounts.a2a_service("")
            if service is None:
                raise errors.UnsupportedOperation("This cassette is not an A2A agent")
            return Target(service, self.http_root, tenant or None)
        service = mounts.a2a_service(tenant) if tenant else None
        if service is None:
            names = [n for n in mounts.agents if mounts.a2a_service(n) is not None]
            raise errors.MethodNotFound(
                f"No A2A agent has tenant {tenant!r}: over gRPC, a folder's agents are "
                f"tenants named as their cassettes ({', '.join(names)})",
                metadata={"tenant": tenant},
            )
        return Target(service, self.http_root + mounts.prefix(tenant).rstrip("/"), None)

    def start(self) -> GrpcServer:
        """Take calls, and list the GRPC interface in the agents' cards."""
        self._loop.run(self._aio.start())
        self.mounts.serve_grpc(self.target)
        return self

    def stop(self) -> None:
        """Stop taking calls; return once the calls under way have ended (the caller ends the
        open streams first, with `mounts.close()`), at most STOP_GRACE_S."""
        if not self._loop.ended:
            try:
                self._loop.run(self._aio.stop(STOP_GRACE_S))
            finally:
                self._loop.end()
        self._threads.shutdown(wait=False, cancel_futures=True)


def _add_port(server: grpc.aio.Server, host: str, port: int) -> int:
    """Bind `server` to `host`:`port`; the port bound (the real one of port 0)."""
    try:
        bound = server.add_insecure_port(target_of(host, port))
    except RuntimeError as exc:  # grpcio's way of saying the port is taken
        raise OSError(f"cannot listen on {target_of(host, port)} for gRPC: {exc}") from None
    if bound == 0:  # older grpcio: 0 instead of an exception
        raise OSError(f"cannot listen on {target_of(host, port)} for gRPC")
    return bound


class _Loop:
    """An event loop running in a daemon thread of its own."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mockagent-grpc-loop", daemon=True
        )
        self._thread.start()
        self.ended = False

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def end(self) -> None:
        """Stop the loop and its thread."""
        self.ended = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
