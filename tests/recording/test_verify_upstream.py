"""`mockagent verify --upstream URL` refuses a URL where no agent answers (a wrong path): it
compares nothing, names the URL, exits 1 and, with --update, leaves the cassette untouched; so
does one whose card is there but whose A2A endpoint is not (a 404 for the message)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask

from mockagent.cli.main import main
from mockagent.server.thread import ServerThread, serve_in_thread
from mockagent.vocabulary import CARD_PATH

CASSETTES = Path(__file__).parents[2] / "cassettes"


@pytest.mark.parametrize("update", [[], ["--update"]])
@pytest.mark.parametrize("cassette", ["kit/test-runner.yaml", "agentex/async-agent.yaml"])
def test_a_wrong_upstream_path_is_refused_and_the_cassette_untouched(
    tmp_path: Path, cassette: str, update: list[str]
) -> None:
    source = CASSETTES / cassette
    path = tmp_path / source.name
    path.write_text(source.read_text())
    with serve_in_thread(source, pace="instant") as agent:
        wrong = agent.url.rstrip("/") + "/nonexistent/"
        result = CliRunner().invoke(main, ["verify", str(path), "--upstream", wrong, *update])
    # before: both interactions rewritten to `error: {name: Internal, message: "No A2A route
    # for POST /nonexistent/"}` and exit 0
    assert path.read_text() == source.read_text(), result.output
    assert result.exit_code == 1, result.output
    assert f"mockagent: {wrong} is not the agent to verify against (GET " in result.output
    assert "nothing was compared or changed" in result.output
    assert "updated" not in result.output and "wrote" not in result.output


def card_only() -> Flask:
    """A server with an agent card and no A2A endpoint: Flask's 404 for everything else."""
    app = Flask("card-only")
    app.add_url_rule(CARD_PATH, "card", lambda: {"name": "test-runner", "version": "1"})
    return app


@pytest.mark.parametrize("update", [[], ["--update"]])
def test_a_card_without_an_a2a_endpoint_is_refused_and_the_cassette_untouched(
    tmp_path: Path, update: list[str]
) -> None:
    source = CASSETTES / "kit" / "test-runner.yaml"
    path = tmp_path / source.name
    path.write_text(source.read_text())
    server = ServerThread(card_only()).start()
    try:
        result = CliRunner().invoke(main, ["verify", str(path), "--upstream", server.url, *update])
    finally:
        server.stop()
    # before: each interaction a drift (HTTP 404 ≠ 200) and, with --update, rewritten to the 404
    assert path.read_text() == source.read_text(), result.output
    assert result.exit_code == 1, result.output
    # (through --update's recording proxy, the 404 page is "not JSON": InvalidAgentResponse)
    assert "'s message with HTTP 404: " in result.output or "-32006 (the upstream" in result.output
    assert "--upstream is not its A2A endpoint, or --binding" in result.output
    assert "nothing was changed" in result.output
