"""The gRPC rows' floor: a `grpc.aio` server whose handlers answer the bench's four calls with
prebuilt bytes (no engine, no conversion), shaped as the bench cassette's answers so that
bench_grpc.check accepts them. What it serves is what grpcio's Python server costs per call on
this machine, which bounds any Python gRPC server, mockagent's and the a2a-sdk's alike.

Run as `python scripts/bench_grpc_floor.py PORT`; it serves `lf.a2a.v1.A2AService` on
127.0.0.1:PORT (plaintext) until killed.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import grpc
from a2a.types import a2a_pb2

SERVICE = "lf.a2a.v1.A2AService"
COMPLETED = a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_COMPLETED)


def _task(task_id: str) -> a2a_pb2.Task:
    report = a2a_pb2.Artifact(artifact_id="report", parts=[a2a_pb2.Part(text="all good\n")])
    return a2a_pb2.Task(id=task_id, context_id="c", status=COMPLETED, artifacts=[report])


def _stream() -> list[bytes]:
    submitted = a2a_pb2.Task(
        id="s", context_id="c", status=a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_SUBMITTED)
    )
    working = a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_WORKING)
    events = [a2a_pb2.StreamResponse(task=submitted)]
    events.append(a2a_pb2.StreamResponse(status_update={"task_id": "s", "status": working}))
    for n in range(1, 7):
        chunk = a2a_pb2.Artifact(artifact_id="log", parts=[a2a_pb2.Part(text=f"chunk {n}\n")])
        update = a2a_pb2.TaskArtifactUpdateEvent(task_id="s", artifact=chunk, append=n > 1)
        events.append(a2a_pb2.StreamResponse(artifact_update=update))
    events.append(a2a_pb2.StreamResponse(status_update={"task_id": "s", "status": COMPLETED}))
    return [e.SerializeToString() for e in events]


DIRECT = a2a_pb2.SendMessageResponse(
    message=a2a_pb2.Message(message_id="r", role=a2a_pb2.ROLE_AGENT, parts=[{"text": "pong"}])
).SerializeToString()
TASK = a2a_pb2.SendMessageResponse(task=_task("floor-task")).SerializeToString()
STREAM = _stream()
GOT: dict[str, bytes] = {}


async def send(request: a2a_pb2.SendMessageRequest, context: Any) -> bytes:
    return DIRECT if request.message.parts[0].text == "ping?" else TASK


async def get(request: a2a_pb2.GetTaskRequest, context: Any) -> bytes:
    found = GOT.get(request.id)
    if found is None:
        found = GOT[request.id] = _task(request.id).SerializeToString()
    return found


async def stream(request: a2a_pb2.SendMessageRequest, context: Any) -> None:
    for event in STREAM:
        await context.write(event)


async def serve(port: int) -> None:
    def same(raw: bytes) -> bytes:
        return raw

    handlers = {
        "SendMessage": grpc.unary_unary_rpc_method_handler(
            send, a2a_pb2.SendMessageRequest.FromString, same
        ),
        "GetTask": grpc.unary_unary_rpc_method_handler(
            get, a2a_pb2.GetTaskRequest.FromString, same
        ),
        "SendStreamingMessage": grpc.unary_stream_rpc_method_handler(
            stream, a2a_pb2.SendMessageRequest.FromString, same
        ),
    }
    server = grpc.aio.server(handlers=[grpc.method_handlers_generic_handler(SERVICE, handlers)])
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def main() -> None:
    asyncio.run(serve(int(sys.argv[1])))


if __name__ == "__main__":
    main()
