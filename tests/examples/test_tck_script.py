"""scripts/tck, which runs the A2A conformance kit by hand (docs/conformance.md): it serves every
conformance cassette over every binding, and its count across the runs says what is left."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.helpers.docs import ROOT

SKIP = '<skipped message="{}"/>'
FAIL = '<failure message="{}"/>'


@pytest.fixture(scope="module")
def tck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tck_run", ROOT / "scripts" / "tck_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_conformance_cassette_is_served_over_every_binding(
    tck: ModuleType, tmp_path: Path
) -> None:
    cassettes = sorted((ROOT / "cassettes" / "conformance").glob("*.yaml"))
    assert sorted(tck.CASSETTES) == sorted(c.stem for c in cassettes), "one set of runs each"
    for cassette in cassettes:
        proc, url = tck.serve(cassette, tmp_path / f"{cassette.stem}.log")
        try:
            card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=5).json()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        assert card["name"] == cassette.stem
        bindings = [i["protocolBinding"] for i in card["supportedInterfaces"]]
        assert bindings == ["JSONRPC", "HTTP+JSON", "GRPC"], "the kit runs every binding listed"


def junit(path: Path, cases: dict[str, str]) -> Path:
    """A JUnit report: test id (`module::Class::name`) → its outcome's XML ("" = passed)."""
    body = "".join(
        f'<testcase classname="{test.rsplit("::", 1)[0]}" name="{test.rsplit("::", 1)[1]}">'
        f"{outcome}</testcase>"
        for test, outcome in cases.items()
    )
    path.write_text(f"<testsuites><testsuite>{body}</testsuite></testsuites>")
    return path


CARD = "tests.compatibility.test_agent_card.TestCard::test_card"
STREAM = "tests.compatibility.grpc.test_streaming.TestGrpcStreaming::test_stream"
PLACEHOLDER = "tests.compatibility.test_requirements::test_should[no-requirements-grpc]"


def reports(tmp_path: Path, no_capabilities: dict[str, str]) -> dict[tuple[str, str], Path]:
    """gRPC runs: on tck.yaml the stream test passes and the placeholder skips."""
    runs = {
        "tck": {CARD: "", STREAM: "", PLACEHOLDER: SKIP.format("No requirements at this level")},
        "tck-no-capabilities": no_capabilities,
        "tck-required-extension": {CARD: ""},
    }
    return {(n, "grpc"): junit(tmp_path / f"{n}.xml", cases) for n, cases in runs.items()}


def test_a_skip_for_a_capability_turned_off_counts_as_the_pass_of_another_run(
    tck: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skipped = {CARD: "", STREAM: SKIP.format("streaming not supported")}
    assert tck.report(reports(tmp_path, skipped)) is True
    out = capsys.readouterr().out
    assert (
        "| grpc | 2 / 0 / 1 | 1 / 0 / 1 | 1 / 0 / 0 | 2 of 3 passed, 0 failed, 1 skipped |" in out
    )


def test_a_failure_in_one_run_is_listed_even_when_another_run_passes(
    tck: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = {CARD: "", STREAM: FAIL.format("expected UNIMPLEMENTED")}
    assert tck.report(reports(tmp_path, failed)) is True
    out = capsys.readouterr().out
    assert "Failed in a run, passed in another:\n  grpc: failed (tck-no-capabilities)" in out


def test_a_failure_in_every_run_or_a_skip_of_ours_is_left_over(
    tck: ModuleType, tmp_path: Path
) -> None:
    failed = {CARD: FAIL.format("no Last-Modified"), STREAM: ""}
    runs = reports(tmp_path, failed)
    junit(runs["tck", "grpc"], {CARD: FAIL.format("no Last-Modified"), STREAM: ""})
    junit(runs["tck-required-extension", "grpc"], {CARD: FAIL.format("no Last-Modified")})
    assert tck.report(runs) is False
    skipped = {STREAM: SKIP.format("gRPC transport not configured")}
    for name in tck.CASSETTES:
        junit(runs[name, "grpc"], skipped)
    assert tck.report(runs) is False


def test_each_test_counts_for_the_binding_it_exercises(tck: ModuleType) -> None:
    assert tck.binding_of(STREAM) == "grpc"
    assert tck.binding_of(CARD) is None  # every binding
    assert tck.binding_of("tests.x.test_data_model.TestSerial::test_one") == "json"
    assert tck.binding_of("tests.x.test_errors::test_cancel[TASK-jsonrpc]") == "jsonrpc"
    assert (
        tck.binding_of("tests.x.test_transport_behavior.TestRestStreaming::test_ct") == "http_json"
    )
