"""`serve --workers 2 --store redis://… --grpc-port 0`: every worker serves gRPC on the one port
(SO_REUSEPORT, the kernel spreads the connections), and any worker answers for any task."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx
from a2a.types import a2a_pb2

from mockagent.cli.main import READY
from tests.helpers.grpc_calls import DIFF_PART, VERSION, stub
from tests.helpers.paths import KIT


def listeners(port: int) -> int:
    """How many sockets listen on `port` (from /proc/net/tcp and tcp6: state 0A is LISTEN)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local, state = row.split()[1], row.split()[3]
                count += state == "0A" and int(local.rsplit(":", 1)[1], 16) == port
    return count


def test_every_worker_serves_grpc_from_the_shared_store(redis_url: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--port", "0"]
        + ["--grpc-port", "0", "--workers", "2", "--store", redis_url, "--pace", "instant"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        while not (line := proc.stdout.readline()).startswith(READY):
            assert line, f"serve exited early: {proc.wait()} {proc.stderr.read()}"  # type: ignore[union-attr]
        found = re.match(rf"{READY} on (http://\S+) and gRPC on (\S+) with 2 workers", line)
        assert found, line
        root, target = found.groups()
        ids = []
        for i in range(6):  # a channel each: a new connection, to whichever worker
            message = a2a_pb2.Message(
                message_id=f"m-{i}",
                role=a2a_pb2.ROLE_USER,
                parts=[a2a_pb2.Part(text="Please review"), DIFF_PART],
            )
            request = a2a_pb2.SendMessageRequest(tenant="code-reviewer", message=message)
            with stub(target) as a2a:
                ids.append(a2a.SendMessage(request, metadata=VERSION, timeout=10).task.id)

        assert len(set(ids)) == 6
        for task_id in ids:
            got = httpx.get(f"{root}/code-reviewer/tasks/{task_id}", headers={"A2A-Version": "1.0"})
            assert got.json()["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        # Both workers listen on the port; the parent's reservation does not.
        assert listeners(int(target.rsplit(":", 1)[1])) == 2
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
