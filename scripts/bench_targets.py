"""The servers the bench times: start each on a free port, wait until it answers, stop it.

Every target speaks A2A v1.0 JSON-RPC at `POST /` on 127.0.0.1, so one set of request bodies
(`BODIES`) goes to all of them. Each runs in its own process session, so that stopping it also
stops its children (granian workers, mountebank's imposter) and nothing else.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".bench"
NODE = CACHE / "node"
PY = sys.executable
MOCKAGENT = str(Path(PY).with_name("mockagent"))


def _rpc(method: str, params: dict) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, separators=(",", ":")
    )


def _send(method: str, text: str) -> str:
    return _rpc(
        method, {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}
    )


BODIES = {  # scenario -> JSON-RPC body; GetTask's is made per target once it has a task id
    "direct": _send("SendMessage", "ping?"),
    "task": _send("SendMessage", "run task"),
    "stream": _send("SendStreamingMessage", "stream nine"),
}
HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}


def get_task_body(task_id: str) -> str:
    return _rpc("GetTask", {"id": task_id})


def free_port() -> int:
    # Bind-and-release: another process could take it before the server does, which the
    # readiness poll would notice as a dead process.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, body: str, timeout: float = 5.0) -> tuple[int, str, str]:
    """POST `body`; (status, content type, text)."""
    req = urllib.request.Request(url, data=body.encode(), headers=HEADERS, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()


def serve_threads() -> int:
    """`mockagent serve`'s default thread count, so the Flask baseline gets the same."""
    text = subprocess.run([MOCKAGENT, "serve", "--help"], capture_output=True, text=True).stdout
    found = re.search(r"--threads.*?default:\s*(\d+)", text, re.S)
    return int(found.group(1)) if found else 32


def serve_options() -> set[str]:
    text = subprocess.run([MOCKAGENT, "serve", "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"(--[a-z][a-z-]*)", text))


@dataclass
class Target:
    """One server process (plus helpers such as Redis); `url` is its JSON-RPC endpoint."""

    name: str
    label: str
    command: list[str]
    port: int
    cwd: Path = ROOT
    helpers: list[subprocess.Popen] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # on top of the bench's own environment
    proc: subprocess.Popen | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, timeout: float = 60.0) -> Target:
        self.log = CACHE / f"{self.name}.log"
        CACHE.mkdir(exist_ok=True)  # a target started alone (a test) before the bench made it
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, **self.env},
            )
        deadline = time.monotonic() + timeout
        while True:  # ready = answers the direct-reply call (see ready); no fixed sleeps
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label} exited ({self.proc.returncode}); see {self.log}")
            if self.ready():
                return self
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{self.label} did not answer within {timeout:.0f} s; see {self.log}"
                )
            time.sleep(0.05)

    def ready(self) -> bool:
        """Whether the server answers the direct-reply call (each poll of `start`)."""
        try:
            return post(self.url, BODIES["direct"], timeout=2)[0] == 200
        except OSError:
            return False

    def stop(self) -> None:
        for proc in [p for p in [self.proc, *self.helpers] if p is not None]:
            stop_process(proc)
        self.proc, self.helpers = None, []


def stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM the process's own session (it leads it), then SIGKILL after 5 s."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def start_redis() -> tuple[subprocess.Popen, int]:
    """A throwaway redis-server: no snapshots, no AOF, on a free port."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc, port
        except OSError:
            time.sleep(0.02)
    stop_process(proc)
    raise RuntimeError("redis-server did not start")


def mockagent(cassette: Path, workers: int = 0) -> Target:
    """`mockagent serve`, or with `workers` granian worker processes sharing a Redis store."""
    port = free_port()
    cmd = [MOCKAGENT, "serve", str(cassette), "--port", str(port), "--pace", "instant"]
    if not workers:
        return Target("mockagent", "mockagent serve", cmd, port)
    redis, redis_port = start_redis()
    cmd += ["--workers", str(workers), "--store", f"redis://127.0.0.1:{redis_port}/0"]
    return Target(
        f"mockagent-w{workers}", f"mockagent serve --workers {workers}", cmd, port, helpers=[redis]
    )


def flask(canned: Path, threads: int) -> Target:
    port = free_port()
    return Target(
        "flask",
        f"bare Flask (same server, {threads} threads)",
        [PY, str(ROOT / "scripts" / "bench_flask.py"), str(port), str(threads), str(canned)],
        port,
    )


def a2a_sdk() -> Target:
    port = free_port()
    return Target(
        "a2a-sdk",
        "a2a-sdk server (uvicorn)",
        [PY, str(ROOT / "scripts" / "bench_a2a_stub.py"), str(port)],
        port,
    )


def mountebank(canned: dict) -> Target:
    """mountebank with one imposter whose stubs answer the bench's calls with mockagent's bytes."""
    admin, port = free_port(), free_port()
    json_headers = {"Content-Type": "application/json"}
    sse = "".join(f"data: {line}\n\n" for line in canned["stream"])

    def stub(contains: str | None, body: str, headers: dict) -> dict:
        predicates = [{"contains": {"body": contains}}] if contains else []
        return {
            "predicates": predicates,
            "responses": [{"is": {"statusCode": 200, "headers": headers, "body": body}}],
        }

    imposter = {
        "port": port,
        "protocol": "http",
        "stubs": [  # first match wins, so the default last
            stub('"SendStreamingMessage"', sse, {"Content-Type": "text/event-stream"}),
            stub('"GetTask"', canned["get"], json_headers),
            stub('"run task"', canned["task"], json_headers),
            stub(None, canned["direct"], json_headers),
        ],
    }
    config = CACHE / "mountebank.json"
    config.write_text(json.dumps({"imposters": [imposter]}))
    mb = NODE / "node_modules" / "mountebank" / "bin" / "mb"
    cmd = [
        "node",
        str(mb),
        "start",
        "--port",
        str(admin),
        "--configfile",
        str(config),
        "--noParse",
        "--nologfile",
        "--loglevel",
        "warn",
        "--pidfile",
        str(CACHE / "mb.pid"),
    ]
    return Target("mountebank", "mountebank (1 imposter)", cmd, port)


AIMOCK_SCRIPT = """\
// Generated by scripts/bench: CopilotKit's A2AMock with the bench's three canned replies.
import { A2AMock } from "@copilotkit/aimock";
const port = Number(process.argv[2]);
const mock = new A2AMock({ port, host: "127.0.0.1" });
mock.registerAgent({ name: "bench", capabilities: { streaming: true } });
mock.onMessage("bench", "ping?", [{ text: "pong" }]);
mock.onTask("bench", "run task", [
  { artifactId: "report", name: "report.txt", parts: [{ text: "all good\\n" }] }]);
const chunks = [1, 2, 3, 4, 5, 6].map((n) => ({ type: "artifact", name: "log.txt",
  parts: [{ text: `chunk ${n}\\n` }], append: n > 1, lastChunk: n === 6 }));
mock.onStreamingTask("bench", "stream nine", [{ type: "status", state: "TASK_STATE_SUBMITTED" },
  { type: "status", state: "TASK_STATE_WORKING" }, ...chunks,
  { type: "status", state: "TASK_STATE_COMPLETED" }], 0);
await mock.start();
"""


def aimock() -> Target:
    port = free_port()
    script = NODE / "bench-aimock.mjs"  # beside node_modules, so the import resolves
    script.write_text(AIMOCK_SCRIPT)
    return Target("aimock", "CopilotKit aimock A2AMock", ["node", str(script), str(port)], port)
