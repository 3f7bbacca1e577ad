"""Recording an agent that also serves gRPC: the proxy records HTTP only, so its card leaves the
GRPC interface out (a client that took it would bypass the recording), the cassette keeps GRPC
in `bindings` (the replay lists it where the agent did), and `record` refuses a gRPC upstream."""

from __future__ import annotations

from pathlib import Path

import httpx
from click.testing import CliRunner

from mockagent.cassette.loader import load_cassette
from mockagent.cli.main import main
from mockagent.server.thread import serve_in_thread
from tests.helpers.paths import KIT
from tests.helpers.recording import recording


def test_the_proxy_card_leaves_grpc_out_and_the_cassette_keeps_it(tmp_path: Path) -> None:
    cassette = tmp_path / "recorded.yaml"
    with serve_in_thread(KIT / "code-reviewer.yaml", grpc_port=0) as upstream:
        live = httpx.get(upstream.card_url()).json()
        with recording(upstream.agent_url(), cassette) as rec:
            card = httpx.get(f"{rec.url}/.well-known/agent-card.json").json()
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {
                        "messageId": "m-1",
                        "role": "ROLE_USER",
                        "parts": [{"text": "Which languages do you review?"}],
                    }
                },
            }
            httpx.post(rec.url, json=body, headers={"A2A-Version": "1.0"}).raise_for_status()
            rec.finish()

    assert [i["protocolBinding"] for i in live["supportedInterfaces"]][-1] == "GRPC"
    assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == ["JSONRPC", "HTTP+JSON"]
    agent = load_cassette(cassette).cassette.agent
    assert agent is not None and agent.bindings == ["JSONRPC", "HTTP+JSON", "GRPC"]


def test_record_says_a_grpc_upstream_is_not_supported_yet(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["record", "--upstream", "127.0.0.1:50051", "--cassette", str(tmp_path / "c.yaml")],
    )

    assert result.exit_code == 2
    assert "recording a gRPC upstream is not supported yet" in result.output
    assert not (tmp_path / "c.yaml").exists()
