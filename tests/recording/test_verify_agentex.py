"""`mockagent verify` on an Agentex cassette: the task/create and message/send calls a recorded
client made, sent to the live platform and to the cassette, and the gates of a task's script
opened as the client did (`after: {finds}` by get-or-creates, `after: {polls, strict}` by
polls), the live platform asked again while its task is on its way. Reports ok when nothing
drifted, and the field when something did."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import ServerThread
from tests.helpers.agentex_fidelity import record_and_replay, sync_blocking, sync_streamed
from tests.helpers.agentex_platform import Platform, create_platform_app
from tests.helpers.agentex_unseen import timed_out_before_any_turn, timed_out_while_polled


def verify(path: Path, url: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url])
    return result.exit_code, result.output.splitlines()


def settle_when_made(platform: Platform, status: str, stop: threading.Event) -> None:
    """Time the platform's first task out once it exists, as the recorded one did unseen (the
    platform's own timeout), a moment after verify created it."""
    while not stop.is_set() and not platform.tasks:
        time.sleep(0.01)
    time.sleep(0.2)
    for task in list(platform.tasks.values()):
        platform.settle(task, status)


@pytest.fixture
def timing_out() -> Iterator[str]:
    """A live platform whose first task times out by itself soon after it is created."""
    app = create_platform_app()
    stop = threading.Event()
    thread = threading.Thread(
        target=settle_when_made,
        args=(app.extensions["platform"], "TIMED_OUT", stop),
        daemon=True,
    )
    thread.start()
    server = ServerThread(app).start()
    try:
        yield server.url
    finally:
        stop.set()
        server.stop()
        thread.join(5)


def recorded(tmp_path: Path, scenario: Any) -> Path:
    path = tmp_path / "recorded.yaml"
    record_and_replay(path, scenario)
    return path


def test_a_finds_gate_is_opened_by_get_or_creates_and_verifies_ok(tmp_path, timing_out):
    path = recorded(tmp_path, timed_out_before_any_turn)
    code, lines = verify(path, timing_out)
    # before: verify refused every Agentex cassette ("verify speaks A2A")
    assert lines == [
        "ok create-worker (gated)",
        "ok cancel-create-worker",  # refused by name, on the task that timed out
    ]
    assert code == 0


def test_a_strict_polls_gate_is_opened_by_polls_and_verifies_ok(tmp_path, timing_out):
    path = recorded(tmp_path, timed_out_while_polled)
    code, lines = verify(path, timing_out)
    assert lines == [
        "ok create-worker (gated)",
        "ok cancel-create-worker",  # refused by id: the task has no name
    ]
    assert code == 0


def test_a_task_that_no_longer_times_out_drifts_at_the_gate(tmp_path):
    path = recorded(tmp_path, timed_out_before_any_turn)
    server = ServerThread(create_platform_app()).start()  # its tasks never end by themselves
    try:
        code, lines = verify(path, server.url)
    finally:
        server.stop()
    assert lines[0] == "drift create-worker (gated)"
    assert any("TIMED_OUT" in line and "RUNNING" in line for line in lines[1:])
    assert code == 1


@pytest.mark.parametrize(
    ("scenario", "verdicts"),
    [
        (sync_blocking, ["ok create-echo-bot", "ok what-is-up", "ok thanks"]),
        (sync_streamed, ["ok can-you-stream (streamed)", "ok again (streamed)"]),
    ],
)
def test_messages_to_a_sync_agent_verify_ok(tmp_path, scenario, verdicts):
    path = recorded(tmp_path, lambda client, _: scenario(client))
    server = ServerThread(create_platform_app()).start()
    try:
        code, lines = verify(path, server.url)
    finally:
        server.stop()
    assert lines == verdicts
    assert code == 0
