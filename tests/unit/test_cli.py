"""The `mockagent` command: help texts, schema, a broken cassette, and a real `serve`."""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from mockagent.cli.main import READY, main

REVIEWER = """\
version: 1
agent:
  name: Code Reviewer
  description: Reviews diffs.
  skills:
    - {id: review, name: Review, description: Reviews a diff.}
interactions:
  - name: languages
    match: {text: {endswith: "?"}}
    reply: {message: "Python, Go and TypeScript."}
"""


@pytest.mark.parametrize("args", [[], ["serve"], ["schema"]])
def test_every_command_has_help(args: list[str]) -> None:
    result = CliRunner().invoke(main, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: ")


def test_group_help_lists_the_commands() -> None:
    output = CliRunner().invoke(main, ["--help"]).output
    assert "serve" in output and "schema" in output


def test_serve_help_names_its_options() -> None:
    output = CliRunner().invoke(main, ["serve", "--help"]).output
    assert "--host" in output and "--port" in output and "8000" in output


def test_schema_prints_the_cassette_json_schema() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert "$defs" in schema
    assert "interactions" in schema["properties"]


def test_serve_reports_a_broken_cassette_without_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    # Line 9: `txt` is a typo for the `text` matcher.
    broken.write_text(REVIEWER.replace("match: {text:", "match: {txt:"))
    result = CliRunner().invoke(main, ["serve", str(broken)])
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # handled, not a crash
    # `output` holds stderr too (click 8.1 and 8.2+ alike).
    assert f"{broken}:9:" in result.output
    assert "'languages'" in result.output
    assert "match.txt: unknown field; did you mean 'text'?" in result.output  # as the docs show
    assert "Traceback" not in result.output


def test_serve_refuses_a_follow_up_from_no_interaction(tmp_path: Path) -> None:
    orphan = tmp_path / "orphan.yaml"
    orphan.write_text(
        REVIEWER
        + """\
  - name: answer
    match: {task: {from: languagez}}
    reply: {message: ok}
"""
    )
    result = CliRunner().invoke(main, ["serve", "--port", "0", str(orphan)])
    assert result.exit_code == 2  # refused before it listens, as lint reports it
    line = REVIEWER.count("\n") + 2  # the line of `match:`
    assert result.output == (
        f"mockagent: {orphan}:{line}: interaction 'answer' (#2): match.task.from: "
        "names 'languagez', which is no interaction of this cassette; "
        "did you mean 'languages'?\n"
    )


def test_serve_rejects_a_missing_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def _default_sigint() -> None:
    # A shell without job control starts background jobs with SIGINT ignored, and children
    # inherit that: the Ctrl-C case would then wait forever.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _lines(stream: object) -> queue.Queue[str]:
    """Lines of a pipe as they arrive, so the test can wait for one with a timeout."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line)
        lines.put("")  # end of output

    threading.Thread(target=pump, daemon=True).start()
    return lines


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_a_folder_on_a_free_port(tmp_path: Path, stop: signal.Signals) -> None:
    (tmp_path / "reviewer.yaml").write_text(REVIEWER)
    (tmp_path / "other.yaml").write_text(REVIEWER.replace("Code Reviewer", "Other Agent"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        stdout = _lines(proc.stdout)
        printed = []
        while not (line := stdout.get(timeout=30)).startswith(READY):
            assert line, f"serve exited early: {proc.wait()} {proc.stderr.read()}"  # type: ignore[union-attr]
            printed.append(line)
        root = line.split()[3]
        port = int(root.rsplit(":", 1)[1])
        assert port not in (0, 8000)
        # One line per agent, in name order, with the agent and card URLs.
        assert [p.split()[0] for p in printed] == ["other", "reviewer"]
        card_url = f"{root}/reviewer/.well-known/agent-card.json"
        assert printed[1].split() == ["reviewer", f"{root}/reviewer/", "(card:", f"{card_url})"]
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/reviewer/.well-known/agent-card.json", timeout=10
        ) as response:
            card = json.load(response)
        assert card["name"] == "Code Reviewer"
        proc.send_signal(stop)
        assert proc.wait(timeout=10) == 0
        assert stdout.get(timeout=10) == "mockagent stopped\n"
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_rejects_a_bad_pace(tmp_path: Path) -> None:
    (tmp_path / "reviewer.yaml").write_text(REVIEWER)
    result = CliRunner().invoke(main, ["serve", str(tmp_path / "reviewer.yaml"), "--pace", "fast"])
    assert result.exit_code == 2
    assert (
        "Invalid value for --pace" in result.output
        and "recorded, instant or scale=F" in result.output
    )


def test_open_streams_do_not_block_other_calls() -> None:
    kit = Path(__file__).resolve().parents[2] / "cassettes" / "kit"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(kit), "--port", "0", "--threads", "8"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        stdout = _lines(proc.stdout)
        while not (line := stdout.get(timeout=30)).startswith(READY):
            assert line, f"serve exited early: {proc.wait()} {proc.stderr.read()}"  # type: ignore[union-attr]
        agent = line.split()[3] + "/deployer"
        headers = {"A2A-Version": "1.0"}
        sent = httpx.post(
            f"{agent}/message:send",
            headers=headers,
            json={
                "message": {
                    "messageId": "m",
                    "role": "ROLE_USER",
                    "parts": [{"text": "Deploy build 42 to staging"}],
                }
            },
        ).json()
        assert sent["task"]["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
        with contextlib.ExitStack() as streams:  # six subscriptions stay open (AUTH_REQUIRED) ...
            for _ in range(6):
                response = streams.enter_context(
                    httpx.stream(
                        "GET",
                        f"{agent}/tasks/{sent['task']['id']}:subscribe",
                        headers=headers,
                        timeout=10,
                    )
                )
                assert next(response.iter_lines()).startswith("data: ")
            # ... and the server still answers everyone else.
            card = httpx.get(f"{agent}/.well-known/agent-card.json", timeout=5)
            assert card.status_code == 200 and card.json()["name"] == "deployer"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
