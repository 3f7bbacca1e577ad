"""`mockagent verify --upstream URL` refuses a URL where no agent answers (a wrong path): it
compares nothing, names the URL, exits 1 and, with --update, leaves the cassette untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cli import main
from mockagent.server.thread import serve_in_thread

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
