"""scripts/bench's gRPC part: the request bodies h2load replays, what it reads from h2load's
output, how a run's gRPC failures are counted when h2load sees only HTTP 200s, and the README
splicing of `--grpc-only`; then one real h2load run against mockagent's gRPC port."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("grpc")
ROOT = Path(__file__).resolve().parents[2]
BENCH_CASSETTE = str(ROOT / "bench" / "cassettes" / "bench.yaml")

# What h2load 1.52 printed for 1578 calls answered with a gRPC error (status 200, no DATA).
OUTPUT = """\
starting benchmark...
spawning thread #0: 2 total client(s). Timing-based test with 0s of warm-up time and 1s of \
main duration for measurements.
Application protocol: h2c

finished in 1.00s, 1578.00 req/s, 4.38MB/s
requests: 1578 total, 1580 started, 1578 done, 1578 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 1578 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 4.38MB (4595487) total, 4.35MB (4560508) headers (space savings 17.00%), 0B (0) data
                     min         max         mean         sd        +/- sd
time for request:      405us      8.26ms      1.25ms       689us    87.77%
"""


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    return importlib.import_module("bench_grpc")


@pytest.fixture
def section(bench: ModuleType) -> ModuleType:
    return importlib.import_module("bench_grpc_section")


def test_a_body_is_the_message_behind_a_five_byte_prefix(bench):
    assert bench.frame(b"abc") == b"\x00\x00\x00\x00\x03abc"
    body = bench.request("direct")
    assert bench.unframe(bench.frame(body) + bench.frame(b"")) == [body, b""]
    with pytest.raises(ValueError, match="wants 9 bytes"):
        bench.unframe(b"\x00\x00\x00\x00\x09abc")
    with pytest.raises(ValueError, match="not an uncompressed"):
        bench.unframe(b"\x01\x00\x00\x00\x00")


def test_requests_carry_the_http_bodies_messages(bench):
    from a2a.types import a2a_pb2

    sent = a2a_pb2.SendMessageRequest.FromString(bench.request("stream"))
    assert [p.text for p in sent.message.parts] == ["stream nine"]
    assert sent.message.role == a2a_pb2.ROLE_USER
    assert a2a_pb2.GetTaskRequest.FromString(bench.request("get", "t-1")).id == "t-1"


def test_h2loads_summary_is_read_and_a_missing_line_is_an_error(bench):
    run = bench.parse(OUTPUT)
    assert (run.done, run.succeeded, run.failed, run.data, run.rps) == (1578, 1578, 0, 0, 1578.0)
    with pytest.raises(ValueError, match="no requests, traffic, finished line"):
        bench.parse("connect: Connection refused\n")


def test_latency_percentiles_come_from_the_log_file(bench):
    log = "".join(f"17961621196{n:05d}\t200\t{n * 1000}\n" for n in range(1, 101))
    assert bench.percentiles(log) == (51.0, 100.0)
    assert bench.percentiles("") == (0.0, 0.0)


def test_calls_without_their_answer_bytes_count_as_errors(bench):
    run = bench.parse(OUTPUT)
    assert bench.result(run, (1.0, 2.0), 93).errors == 1578  # every call a gRPC error
    half = bench.H2load(done=100, succeeded=100, failed=2, data=50 * 93, rps=100.0)
    assert bench.result(half, (1.0, 2.0), 93).non_2xx == 50
    assert bench.result(half, (1.0, 2.0), 93).socket_errors == 2
    # answers a few bytes shorter than the checked one (a zero timestamp field left out) are fine
    close = bench.H2load(done=100, succeeded=100, failed=0, data=100 * 480 - 300, rps=1.0)
    assert bench.result(close, (1.0, 2.0), 480).errors == 0


README = """\
# mockagent benchmark

## Targets

| measurement | value | target | result |
|---|---|---|---|
| a row | 1 | ≥ 1 | pass |
| GetTask over gRPC: mockagent ÷ a2a-sdk gRPC (16 conns) | 0.5× | ≥ 4× | **FAIL** |

## Throughput

<!-- servers: begin -->
servers
<!-- servers: end -->
"""


def test_grpc_only_replaces_its_rows_and_its_section(section):
    from bench_report import Row

    rows = [
        Row("GetTask over gRPC: mockagent ÷ a2a-sdk gRPC (16 conns)", "5×", "≥ 4×", True),
        Row("new over gRPC", "n/a", "≥ 4×", None),
    ]
    text = section.replace_rows(README, rows)
    assert "| a row | 1 | ≥ 1 | pass |\n| GetTask over gRPC: mockagent" in text
    assert "| 5× | ≥ 4× | pass |\n| new over gRPC | n/a | ≥ 4× | n/a |\n\n## Throughput" in text
    assert "0.5×" not in text
    first = section.place(text, f"{section.BEGIN}\none\n{section.END}")
    assert first.index("one") < first.index("<!-- servers: begin -->")  # where a full run puts it
    again = section.place(first, f"{section.BEGIN}\ntwo\n{section.END}")
    assert "one" not in again and again.count(section.BEGIN) == 1 and "servers" in again


@pytest.mark.skipif(shutil.which("h2load") is None, reason="needs h2load (nghttp2-client)")
@pytest.mark.mockagent(BENCH_CASSETTE, grpc=True)
def test_h2load_times_mockagents_grpc_port_and_sees_grpc_errors(bench, mockagent, tmp_path):
    port = int(mockagent.grpc_url.rsplit(":", 1)[1])
    body = bench.request("direct")
    size = sum(len(bench.frame(a)) for a in bench.check(port, "direct", body))
    path = tmp_path / "direct.bin"
    path.write_bytes(bench.frame(body))
    good = bench.run(port, "SendMessage", path, size, 2, 1, tmp_path / "h2load.log")
    assert good.requests > 10 and good.errors == 0 and 0 < good.p50_ms <= good.p99_ms
    # GetTask of a task nobody made: HTTP 200 every time, grpc-status NOT_FOUND in the trailers
    path.write_bytes(bench.frame(bench.request("get", "no-such-task")))
    bad = bench.run(port, "GetTask", path, size, 2, 1, tmp_path / "h2load.log")
    assert bad.requests > 10 and bad.non_2xx == bad.requests


def test_the_floor_server_answers_every_call_as_the_bench_checks_it(section):
    floor = section.floor()
    floor.start()
    try:
        port = floor.grpc_port
        made = section.bench_grpc.check(port, "task", section.bench_grpc.request("task"))
        task_id = floor_task_id(made[0])
        for scenario in ("direct", "task", "stream"):
            section.bench_grpc.check(port, scenario, section.bench_grpc.request(scenario))
        got = section.bench_grpc.request("get", task_id)
        section.bench_grpc.check(port, "get", got, task_id)
    finally:
        floor.stop()


def floor_task_id(raw: bytes) -> str:
    from a2a.types import a2a_pb2

    return a2a_pb2.SendMessageResponse.FromString(raw).task.id
