"""The bench's a2a-sdk stub agent (scripts/bench_a2a_stub.py) on the SDK's own gRPC transport:
the same executor and request handler behind `a2a.server.request_handlers.GrpcHandler` on a
`grpc.aio` server, so the gRPC rows compare mockagent with the SDK's gRPC serving path.

Run as `python scripts/bench_a2a_grpc_stub.py PORT`; it serves `lf.a2a.v1.A2AService` on
127.0.0.1:PORT (plaintext) until killed.
"""

from __future__ import annotations

import asyncio
import sys

import grpc
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.types import a2a_pb2_grpc
from bench_a2a_stub import card, handler


async def serve(port: int) -> None:
    server = grpc.aio.server()
    found = card(f"127.0.0.1:{port}", "GRPC")
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler(found)), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def main() -> None:
    asyncio.run(serve(int(sys.argv[1])))


if __name__ == "__main__":
    main()
