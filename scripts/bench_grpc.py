"""The bench's gRPC part: the same four calls as the HTTP rows, over the A2A gRPC binding, to
`mockagent serve --grpc-port` (one process, and `--workers 2` on Redis) and to the a2a-sdk stub on
the SDK's own gRPC transport (scripts/bench_a2a_grpc_stub.py).

The load generator is h2load (Debian's nghttp2-client), not a Python client, which would be the
bottleneck on two cores: a gRPC call is an HTTP/2 POST to `/lf.a2a.v1.A2AService/METHOD` whose
body is one length-prefixed protobuf message, so h2load replays a prebuilt body file. h2load
only sees HTTP statuses, and gRPC answers errors with status 200 and a `grpc-status` trailer.
So each call is checked once with grpcio before timing (status OK, the right answer), which also
gives its response size; a timed run whose responses carry fewer bytes than that counts the
missing answers as errors.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bench_targets as targets
from bench_report import SCENARIOS
from bench_wrk import Result, interleaved

SERVICE = "lf.a2a.v1.A2AService"
METHODS = {
    "direct": "SendMessage",
    "task": "SendMessage",
    "get": "GetTask",
    "stream": "SendStreamingMessage",
}
TEXTS = {"direct": "ping?", "task": "run task", "stream": "stream nine"}  # as BODIES says
METADATA = {"content-type": "application/grpc", "te": "trailers", "a2a-version": "1.0"}
MISSING_BYTES = 0.02
"""Share of the expected response bytes a run may lack before the gap counts as failed calls:
response sizes vary by a few bytes (timestamps are varints, a zero field is left out)."""


def frame(message: bytes) -> bytes:
    """One gRPC message on the wire: flag 0 (not compressed), a 4-byte big-endian length."""
    return b"\0" + len(message).to_bytes(4, "big") + message


def unframe(data: bytes) -> list[bytes]:
    """The messages of a gRPC body (the inverse of `frame` over several); ValueError if cut."""
    messages, at = [], 0
    while at < len(data):
        if len(data) - at < 5 or data[at] != 0:
            raise ValueError(f"not an uncompressed gRPC frame at byte {at}")
        size = int.from_bytes(data[at + 1 : at + 5], "big")
        if len(data) - at - 5 < size:
            raise ValueError(f"frame at byte {at} wants {size} bytes")
        messages.append(data[at + 5 : at + 5 + size])
        at += 5 + size
    return messages


def request(scenario: str, task_id: str = "") -> bytes:
    """The serialized request of a call: the JSON-RPC bodies' messages, as protobuf."""
    from a2a.types import a2a_pb2

    if scenario == "get":
        return a2a_pb2.GetTaskRequest(id=task_id).SerializeToString()
    message = a2a_pb2.Message(
        message_id="m1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=TEXTS[scenario])]
    )
    return a2a_pb2.SendMessageRequest(message=message).SerializeToString()


@dataclass
class H2load:
    """What one h2load run printed: calls done and answered 2xx, failures (non-2xx, stream
    errors, timeouts), DATA bytes received, and its requests/s."""

    done: int
    succeeded: int
    failed: int
    data: int
    rps: float


def parse(output: str) -> H2load:
    """h2load's summary; ValueError when a line is missing (it printed an error instead)."""
    found = {
        "requests": re.search(
            r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, "
            r"\d+ errored, (\d+) timeout",
            output,
        ),
        "traffic": re.search(r"traffic: .*\((\d+)\) data", output),
        "finished": re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", output),
    }
    missing = [k for k, v in found.items() if v is None]
    if missing:
        raise ValueError(f"h2load printed no {', '.join(missing)} line:\n{output[-2000:]}")
    done, succeeded, failed, timeout = (int(g) for g in found["requests"].groups())  # type: ignore[union-attr]
    return H2load(
        done=done,
        succeeded=succeeded,
        failed=failed + timeout,
        data=int(found["traffic"].group(1)),  # type: ignore[union-attr]
        rps=float(found["finished"].group(1)),  # type: ignore[union-attr]
    )


def percentiles(log: str) -> tuple[float, float]:
    """p50 and p99 in ms from h2load's --log-file (start µs, status, elapsed µs per call)."""
    elapsed = sorted(int(line.split("\t")[2]) for line in log.splitlines() if line.strip())
    if not elapsed:
        return 0.0, 0.0
    pick = lambda q: elapsed[min(len(elapsed) - 1, int(q * len(elapsed)))] / 1000  # noqa: E731
    return pick(0.5), pick(0.99)


def result(run: H2load, latency: tuple[float, float], size: int) -> Result:
    """A run as the bench's Result. `size` is one call's response DATA bytes from the check: when
    more than MISSING_BYTES of the expected bytes are missing, the missing calls are errors
    (a gRPC error is a 2xx response without a message)."""
    expected = run.succeeded * size
    short = expected - run.data
    grpc_errors = round(short / size) if size and short > MISSING_BYTES * expected else 0
    return Result(
        rps=run.rps,
        p50_ms=latency[0],
        p99_ms=latency[1],
        requests=run.done,
        non_2xx=grpc_errors,
        socket_errors=run.failed,
    )


LOG = targets.CACHE / "grpc" / "h2load.log"


def available() -> str | None:
    """None when h2load is installed, else why the gRPC part is n/a."""
    if shutil.which("h2load") is None:
        return "h2load is not installed (Debian: apt-get install nghttp2-client)"
    return None


def h2load_version() -> str:
    out = subprocess.run(["h2load", "--version"], capture_output=True, text=True).stdout
    return out.strip() or "?"


def run(
    port: int, method: str, body: Path, size: int, conns: int, seconds: float, log: Path = LOG
) -> Result:
    """h2load with one thread, `conns` connections of one stream each (as wrk's connections);
    `log` holds its per-call log while it runs."""
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)  # h2load appends to it
    headers = [arg for k, v in METADATA.items() for arg in ("-H", f"{k}: {v}")]
    out = subprocess.run(
        [
            "h2load",
            "-t1",
            f"-c{conns}",
            "-m1",
            f"-D{max(1, round(seconds))}",
            "-d",
            str(body),
            *headers,
            "--log-file",
            str(log),
            f"http://127.0.0.1:{port}/{SERVICE}/{method}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return result(parse(out), percentiles(log.read_text()), size)


@dataclass
class GrpcTarget(targets.Target):
    """A server whose gRPC port is `grpc_port`; ready once it answers the direct call there."""

    grpc_port: int = 0

    def ready(self) -> bool:
        try:
            call(self.grpc_port, "direct", request("direct"), timeout=2)
            return True
        except (OSError, ValueError):
            return False


def call(port: int, scenario: str, body: bytes, timeout: float = 5.0) -> list[bytes]:
    """One call with grpcio, the body's bytes as they are; the response messages, or ValueError
    naming the status when it is not OK."""
    import grpc

    path = f"/{SERVICE}/{METHODS[scenario]}"
    metadata = (("a2a-version", METADATA["a2a-version"]),)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            if scenario == "stream":
                return list(channel.unary_stream(path)(body, timeout=timeout, metadata=metadata))
            return [channel.unary_unary(path)(body, timeout=timeout, metadata=metadata)]
        except grpc.RpcError as exc:
            raise ValueError(f"{exc.code()}: {exc.details()}") from None


def check(port: int, scenario: str, body: bytes, task_id: str = "") -> list[bytes]:
    """Send one call and check the answer's shape, as bench_wrk.check does over HTTP."""
    from a2a.types import a2a_pb2

    answers = call(port, scenario, body)
    if scenario == "stream":
        kinds = [a2a_pb2.StreamResponse.FromString(a).WhichOneof("payload") for a in answers]
        if len(kinds) != 9 or kinds[0] != "task" or kinds[-1] != "status_update":
            raise ValueError(f"stream: {kinds} (want 9 events, the task first)")
        return answers
    if scenario == "get":
        if a2a_pb2.Task.FromString(answers[0]).id != task_id:
            raise ValueError("GetTask answered another task")
        return answers
    reply = a2a_pb2.SendMessageResponse.FromString(answers[0])
    if scenario == "direct" and not reply.message.parts:
        raise ValueError(f"direct reply without a message: {reply}")
    done = a2a_pb2.TASK_STATE_COMPLETED
    if scenario == "task" and (reply.task.status.state != done or not reply.task.artifacts):
        raise ValueError(f"task not COMPLETED with an artifact: {reply}")
    return answers


Cell = tuple[Path, int]  # the body file and one response's DATA bytes


def prepare(running: dict[str, GrpcTarget], notes: list[str]) -> dict[tuple[str, str], Cell]:
    """Check each target's answers and write its body files; a wrong answer drops the cell."""
    from a2a.types import a2a_pb2

    folder = targets.CACHE / "grpc"
    folder.mkdir(parents=True, exist_ok=True)
    cells: dict[tuple[str, str], Cell] = {}
    for name, target in running.items():
        for scenario in SCENARIOS:
            try:
                task_id = ""
                if scenario == "get":  # GetTask on a task this target really made
                    made = check(target.grpc_port, "task", request("task"))[0]
                    task_id = a2a_pb2.SendMessageResponse.FromString(made).task.id
                body = request(scenario, task_id)
                answers = check(target.grpc_port, scenario, body, task_id)
            except ValueError as exc:
                notes.append(f"{name} answered {scenario} over gRPC wrongly, not timed: {exc}")
                continue
            path = folder / f"{name}-{scenario}.bin"
            path.write_bytes(frame(body))
            cells[(name, scenario)] = path, sum(len(frame(a)) for a in answers)
    return cells


def rounds(
    running: dict[str, GrpcTarget],
    cells: dict[tuple[str, str], Cell],
    count: int,
    seconds: float,
    log: Callable[[str], None],
) -> dict[tuple[str, str, int], Result]:
    """Interleaved rounds as bench_wrk.rounds: every target warmed with 1 s of 16 connections
    on each call, then every cell of a round before the next; the best round wins."""

    def time(name: str, scenario: str, conns: int, secs: float) -> Result:
        body, size = cells[(name, scenario)]
        port = running[name].grpc_port
        return run(port, METHODS[scenario], body, size, conns, secs)

    for name, scenario in cells:
        time(name, scenario, 16, 1)
    return interleaved(list(running), set(cells), count, seconds, time, log, "gRPC ")
