"""The A2A gRPC binding served by grpcio's asyncio server, over the agents of a `Mounts`: the
same engines as the HTTP app, so one cassette answers every binding with the same tasks and ids.

grpc.aio rather than grpcio's thread-pool server: a call there passes between grpcio's polling
thread and a pool thread several times, and each pass costs a GIL handoff; on an event loop a
call that does not wait is answered where it arrives. scripts/bench has the figures.

A single cassette is the agent of every call (its `tenant` passes to the engine, as an HTTP+JSON
tenant prefix does); in a folder, the request's `tenant` names the agent (the file's stem), as
the mount path does over HTTP, and the card's GRPC interface carries it. Needs `mockagent[grpc]`:
import this module only when gRPC is asked for.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import grpc

from mockagent import errors
from mockagent.dialects.a2a.grpc_binding import Target, generic_handler
from mockagent.server.app import Mounts
from mockagent.server.host import bound

EXTRA = "mockagent[grpc]"
"""What to install for gRPC (grpcio and the a2a-sdk's generated stubs)."""
T = TypeVar("T")
STOP_GRACE_S = 1.0
"""How long a stop waits for calls under way (open streams have already been ended)."""


def target_of(host: str, port: int) -> str:
    """`host:port` as a gRPC target (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class GrpcServer:
    """grpc.aio's server for the agents in `mounts`, on an event loop in its own thread,
    listening from construction on (call `start()`). `http_root` is the HTTP server's root URL:
    the cards' other interfaces. `threads` run what may wait: a stream waiting for its next
    event holds one, and with a shared store every call takes one."""

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
        shared = any(engine.tasks.shared for engine in mounts.agents.values())
        handler = generic_handler(self.resolve, self._threads, shared)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mockagent-grpc-loop", daemon=True
        )
        self._thread.start()
        try:
            self._server, self.port = self._on_loop(self._bind(handler, host, port, reuse_port))
        except BaseException:
            self._end_loop()
            raise
        self.host = host
        self.target = target_of(host, self.port)

    @staticmethod
    async def _bind(
        handler: grpc.GenericRpcHandler, host: str, port: int, reuse_port: bool
    ) -> tuple[grpc.aio.Server, int]:
        # SO_REUSEPORT only where `serve` asks for it (its workers share the port it reserved);
        # elsewhere a port in use must be an error, not a second server on it.
        options = [("grpc.so_reuseport", 1 if reuse_port else 0)]
        server = grpc.aio.server(handlers=[handler], options=options)
        try:
            bound = server.add_insecure_port(target_of(host, port))
        except RuntimeError as exc:  # grpcio's way of saying the port is taken
            raise OSError(f"cannot listen on {target_of(host, port)} for gRPC: {exc}") from None
        if bound == 0:  # older grpcio: 0 instead of an exception
            raise OSError(f"cannot listen on {target_of(host, port)} for gRPC")
        return server, bound

    def _on_loop(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the server's event loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def _end_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
        self._threads.shutdown(wait=False, cancel_futures=True)

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
        self._on_loop(self._server.start())
        self.mounts.serve_grpc(self.target)
        return self

    def stop(self) -> None:
        """Stop taking calls; return once the calls under way have ended (the caller ends the
        open streams first, with `mounts.close()`), at most STOP_GRACE_S."""
        if self._loop.is_closed():
            return
        try:
            self._on_loop(self._server.stop(STOP_GRACE_S))
        finally:
            self._end_loop()


def reserve(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` with SO_REUSEPORT, not listening: it holds the port (the
    real one of port 0) for `serve`'s workers, whose gRPC servers bind it too. Connections go to
    listening sockets only, so it never takes one. OSError when the port is taken."""
    return bound(host, port, (socket.SOL_SOCKET, socket.SO_REUSEPORT))


def wait_listening(host: str, port: int, timeout_s: float) -> bool:
    """Whether something accepts connections on `host`:`port` within `timeout_s` (polled)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
