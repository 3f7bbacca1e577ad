"""`mockagent serve --grpc-port`: gRPC beside HTTP from the same engines, in serve's worker; and
a clear exit without the gRPC extra."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from a2a.types import a2a_pb2

from mockagent.cli.main import READY
from tests.helpers.grpc_calls import DIFF_PART, VERSION, stub
from tests.helpers.paths import KIT

WITHOUT_GRPC = """\
import sys
sys.modules["grpc"] = None  # as if grpcio were not installed: importing it raises ImportError
from mockagent.cli.main import run
sys.argv = ["mockagent", *sys.argv[1:]]
run()
"""


def test_grpc_port_without_the_extra_says_which_to_install(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_GRPC, "serve", str(KIT), "--port", "0", "--grpc-port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 2, done.stderr
    assert "pip install 'mockagent-server[grpc]'" in done.stderr
    assert "Traceback" not in done.stderr and READY not in done.stdout


def _ready(proc: subprocess.Popen[str]) -> tuple[list[str], str]:
    """The lines before the ready line, and the ready line."""
    printed = []
    assert proc.stdout is not None
    while not (line := proc.stdout.readline()).startswith(READY):
        assert line, f"serve exited early: {proc.wait()} {proc.stderr.read()}"  # type: ignore[union-attr]
        printed.append(line)
    return printed, line


def test_serve_answers_grpc_and_http_from_the_same_engines() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--port", "0"]
        + ["--grpc-port", "0", "--pace", "instant"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        printed, ready = _ready(proc)
        found = re.match(rf"{READY} on (http://\S+) and gRPC on (\S+) \(", ready)
        assert found, ready
        root, target = found.groups()
        assert printed[-1].split() == ["gRPC", target, "(tenants:", "code-reviewer,"] + [
            "deployer,",
            "test-runner)",
        ]
        message = a2a_pb2.Message(
            message_id="m-1",
            role=a2a_pb2.ROLE_USER,
            parts=[a2a_pb2.Part(text="Please review"), DIFF_PART],
        )
        request = a2a_pb2.SendMessageRequest(tenant="code-reviewer", message=message)
        with stub(target) as a2a:
            task = a2a.SendMessage(request, metadata=VERSION, timeout=10).task
        # The task made over gRPC is the one HTTP+JSON sees: one engine for both bindings.
        got = httpx.get(
            f"{root}/code-reviewer/tasks/{task.id}", headers={"A2A-Version": "1.0"}
        ).json()
        assert (got["id"], got["status"]["state"]) == (task.id, "TASK_STATE_INPUT_REQUIRED")
        card = httpx.get(f"{root}/code-reviewer/.well-known/agent-card.json").json()
        assert card["supportedInterfaces"][-1] == {
            "url": target,
            "protocolBinding": "GRPC",
            "protocolVersion": "1.0",
            "tenant": "code-reviewer",
        }
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert proc.stdout.read() == "mockagent stopped\n"  # type: ignore[union-attr]
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
