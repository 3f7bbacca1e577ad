"""`mockagent verify CASSETTE --upstream URL`: a fresh recording of the a2a-sdk agent still
matches it (exit 0); an edited cassette drifts (exit 1) and the diff names the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cli import main
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread
from tests.helpers.recording import A2A, closed_port, message, task_id_of
from tests.helpers.upstream import UpstreamAgent, serve_upstream


@pytest.fixture(scope="module")
def agent() -> Iterator[UpstreamAgent]:
    with serve_upstream() as running:
        yield running


@pytest.fixture(scope="module")
def cassette(agent: UpstreamAgent, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of a direct answer, a completed task, and a question with its follow-up."""
    path = tmp_path_factory.mktemp("verify") / "agent.yaml"
    app = create_recording_app(agent.url, path, "all")
    proxy = ServerThread(app).start()
    try:
        client = A2A(proxy.url, "JSONRPC")
        client.send(message("What time is it?"))
        client.send(message("hello"))
        asked = task_id_of(*client.send(message("ask me")))
        client.send(message("main", task_id=asked, message_id="m2"))
    finally:
        proxy.stop()
    assert finish_recording(app) == path
    return path


def verify(path: Path, url: str, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url, *options])
    return result.exit_code, result.output


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_fresh_recording_still_matches_the_agent(cassette, agent, binding):
    code, output = verify(cassette, agent.url, "--binding", binding)
    assert output.splitlines() == [
        "ok what-time-is-it",
        "ok hello",
        "ok ask-me",
        "ok main",
    ]
    assert code == 0


def test_an_edited_cassette_drifts_and_the_diff_names_the_field(cassette, agent, tmp_path):
    edited = tmp_path / "edited.yaml"
    text = cassette.read_text()
    assert text.count("Done: hello") == 1
    edited.write_text(text.replace("Done: hello", "Done: goodbye"))
    code, output = verify(edited, agent.url)
    assert code == 1
    assert output.splitlines() == [
        "ok what-time-is-it",
        "drift hello",
        '    body.result.task.status.message.parts[0].text: "Done: hello" ≠ "Done: goodbye"',
        "ok ask-me",
        "ok main",
    ]


def test_an_agent_that_is_not_there_is_an_error(cassette, tmp_path):
    code, output = verify(cassette, f"http://127.0.0.1:{closed_port()}")
    assert code == 1 and "mockagent:" in output
