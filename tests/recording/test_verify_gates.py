"""`mockagent verify` on cassettes whose scripts carry the gates a recording writes for what the
client did beside its message: `after: {subscribers: N}` (a subscription opened while the task
was streamed). Verify opens those subscriptions as the recorded client did, so the cassette's
stream does not wait for them forever, and reports ok when nothing drifted."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mockagent.cli.main import main
from tests.helpers.fidelity import run_scenario, sdk_taking_turns
from tests.helpers.quirky_app import serve_quirky
from tests.helpers.recording import recording


@pytest.fixture(scope="module")
def subscribed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The official client streams a new message and subscribes to its task once the Task came;
    the quirky agent takes each step when the test says, so the subscription saw every step."""
    path = tmp_path_factory.mktemp("gates") / "subscribed.yaml"
    step = threading.Semaphore(0)
    with serve_quirky(stepwise=step) as agent, recording(agent.url, path) as rec:
        _, error = asyncio.run(run_scenario(rec.url, "JSONRPC", sdk_taking_turns(step)))
        rec.finish()
    assert error == "", error
    return path


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_stream_that_waited_for_a_subscription_verifies_ok(subscribed: Path, binding: str):
    [interaction] = yaml.safe_load(subscribed.read_text())["interactions"]
    assert any(
        (step.get("after") or {}).get("subscribers") == 1
        for step in interaction["reply"]["task"]["steps"]
    )
    with serve_quirky() as agent:  # the same agent, at its own pace
        result = CliRunner().invoke(
            main, ["verify", str(subscribed), "--upstream", agent.url, "--binding", binding]
        )
    # before: the cassette's stream waited for a subscription verify never opened (it hung,
    # or drifted where the stream gave up)
    assert result.output.splitlines() == ["ok build-it (streamed)"]
    assert result.exit_code == 0
