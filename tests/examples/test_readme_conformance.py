"""README.md's "Conformance" block: one server per conformance cassette, each serving gRPC too,
and one TCK run per server."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import httpx

from tests.helpers.readme import ROOT, Readme, start


def test_each_tck_run_has_its_cassette_served_over_every_binding(
    readme: Readme, tmp_path: Path
) -> None:
    block = readme.block("sh", "run_tck.py").text
    serves = [shlex.split(line) for line in block.splitlines() if "mockagent serve" in line]
    ports = {}
    for args in serves:
        assert args[0] == ".venv/bin/mockagent" and args[-1] == "&"
        assert args[3] == "--port" and args[5] == "--grpc-port", args
        cassette = Path(args[2])
        ports[args[4]] = cassette.stem
        served = start(["serve", str(cassette), "--port", "0", "--grpc-port", "0"], tmp_path / "e")
        try:
            card = httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=5).json()
        finally:
            served.stop()
        assert card["name"] == cassette.stem
        bindings = [i["protocolBinding"] for i in card["supportedInterfaces"]]
        assert bindings == ["JSONRPC", "HTTP+JSON", "GRPC"], "the TCK runs every binding listed"
    runs = re.findall(r"--sut-host http://127\.0\.0\.1:(\d+)\s", block)
    assert sorted(ports[port] for port in runs) == sorted(
        p.stem for p in (ROOT / "cassettes" / "conformance").glob("*.yaml")
    ), "one TCK run per conformance cassette, at its server"
