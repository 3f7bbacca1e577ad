"""A task's own metadata (`reply.task.metadata`) is recorded, and `verify --update` keeps it when
it rewrites a streamed script: a replay is the live agent field for field."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mockagent.cassette import load_cassette
from mockagent.cli.main import main
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import serve_in_thread

LIVE = """\
version: 1
agent: {name: streamer, capabilities: {streaming: true}}
interactions:
  - name: chunks
    match:
      text: {contains: chunks}
    reply:
      task:
        metadata: {team: blue, priority: 2}
        steps:
          - state: TASK_STATE_WORKING
            message: Starting
          - artifact: {artifactId: out, parts: [{text: "part one\\n"}]}
            after: {ms: 100}
          - state: TASK_STATE_COMPLETED
            message: Done
            after: {ms: 100}
"""
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "chunks"}]}},
}


def test_record_keeps_the_tasks_metadata(tmp_path: Path) -> None:
    live = tmp_path / "live.yaml"
    live.write_text(LIVE)
    path = tmp_path / "recorded.yaml"
    with serve_in_thread(live, pace="instant") as agent:
        app = create_recording_app(agent.url, path, "all")
        answer = app.test_client().post("/", json=SEND, headers={"A2A-Version": "1.0"})
        assert answer.get_json()["result"]["task"]["metadata"] == {"team": "blue", "priority": 2}
        finish_recording(app)
    (recorded,) = load_cassette(path).cassette.interactions
    # before: None (the task's metadata was not written)
    assert recorded.reply is not None and recorded.reply.task is not None
    assert recorded.reply.task.metadata == {"team": "blue", "priority": 2}


def test_update_of_a_streamed_script_keeps_the_tasks_metadata(tmp_path: Path) -> None:
    live = tmp_path / "live.yaml"
    live.write_text(LIVE)
    path = tmp_path / "stream.yaml"
    path.write_text(LIVE.replace("part one", "part 1"))
    with serve_in_thread(live, pace="recorded") as agent:
        updated = CliRunner().invoke(
            main, ["verify", str(path), "--upstream", agent.url, "--update"]
        )
        again = CliRunner().invoke(main, ["verify", str(path), "--upstream", agent.url])
    # before: `metadata: {team: blue, priority: 2}` taken out, and the next verify a drift
    assert path.read_text() == LIVE, updated.output
    assert updated.exit_code == 0, updated.output
    assert again.output.splitlines() == ["ok chunks (streamed)"], again.output
