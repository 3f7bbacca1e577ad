"""`mockagent record`: its options, bad usage, the ready line, and a recording end to end."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.proxy.session import partial_path
from tests.helpers.recording import (
    HTTP,
    TEST_RUNNER,
    closed_port,
    message,
    record_process,
    rpc,
    upstream_agent,
)

CARD = "/.well-known/agent-card.json"

ECHO = """\
version: 1
agent:
  name: echo
  description: Answers with a fixed text.
  skills:
    - {id: echo, name: Echo, description: Echoes.}
interactions:
  - name: echo
    reply: {message: "hdr-7788-custom"}
"""


def test_record_help_names_its_options() -> None:
    result = CliRunner().invoke(main, ["record", "--help"])
    assert result.exit_code == 0
    for option in (
        "--upstream",
        "--cassette",
        "--host",
        "--port",
        "--mode",
        "--redact-name",
        "--redact-pattern",
        "--allow-value",
    ):
        assert option in result.output, option
    for mode in ("once", "new_episodes", "all"):
        assert mode in result.output
    assert "record" in CliRunner().invoke(main, ["--help"]).output


@pytest.mark.parametrize("mode", ["sometimes", "none"])
def test_a_bad_mode_exits_2(tmp_path: Path, mode: str) -> None:
    result = CliRunner().invoke(
        main,
        [
            "record",
            "--upstream",
            "http://127.0.0.1:1",
            "--cassette",
            str(tmp_path / "c.yaml"),
            "--mode",
            mode,
        ],
    )
    assert result.exit_code == 2
    assert "--mode" in result.output
    assert not (tmp_path / "c.yaml").exists()


@pytest.mark.parametrize(
    "args",
    [["--cassette", "c.yaml"], ["--upstream", "http://127.0.0.1:1"]],
    ids=["no-upstream", "no-cassette"],
)
def test_upstream_and_cassette_are_required(args: list[str]) -> None:
    result = CliRunner().invoke(main, ["record", *args])
    assert result.exit_code == 2
    assert "Missing option" in result.output


def test_an_upstream_that_is_not_an_http_url_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "record",
            "--upstream",
            "ftp://example.com",
            "--cassette",
            str(tmp_path / "c.yaml"),
            "--port",
            "0",
        ],
    )
    assert result.exit_code == 2
    assert result.output.startswith("mockagent: ")
    assert "http" in result.output
    assert "Traceback" not in result.output


def test_record_prints_the_ready_line_and_records(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    with (
        upstream_agent() as upstream,
        record_process("--upstream", upstream.url, "--cassette", str(path)) as recorder,
    ):
        ready_root = recorder.url
        assert ready_root.startswith("http://127.0.0.1:")
        assert int(ready_root.rsplit(":", 1)[1]) not in (0, 8000)
        assert recorder.printed == [
            f"recording {upstream.url} into {path}; point clients at {ready_root}/ "
            f"(card: {ready_root}{CARD})\n"
        ]
        card = HTTP.get(ready_root + CARD).json()
        assert card["name"] == "test-runner"
        # The card sends clients to the proxy, not around it.
        assert {i["url"].rstrip("/") for i in card["supportedInterfaces"]} == {ready_root}
        reply = rpc(ready_root, "SendMessage", {"message": message("Run the tests at 9f3c2e1")})
        assert reply["result"]["task"]["status"]["message"]["parts"] == [
            {"text": "1 failed, 11 passed"}
        ]
        recorder.proc.send_signal(signal.SIGINT)
        assert recorder.proc.wait(timeout=10) == 0
        out = recorder.rest_of_stdout().splitlines()
    assert out == ["mockagent stopped", f"wrote {path}"]
    assert [i["name"] for i in yaml.safe_load(path.read_text())["interactions"]] == [
        "run-the-tests-at-9f3c2e1"
    ]


def test_once_with_an_existing_cassette_replays_it(tmp_path: Path) -> None:
    path = tmp_path / "runner.yaml"
    shutil.copy(TEST_RUNNER, path)
    before = path.read_bytes()
    with record_process(
        "--upstream", f"http://127.0.0.1:{closed_port()}", "--cassette", str(path)
    ) as recorder:
        assert recorder.printed[0].startswith(f"replaying {path} (mode once: it exists)")
        reply = rpc(recorder.url, "SendMessage", {"message": message("Run the tests at 9f3c2e1")})
        assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        recorder.proc.send_signal(signal.SIGTERM)
        assert recorder.proc.wait(timeout=10) == 0
        assert recorder.rest_of_stdout() == "mockagent stopped\n"
    assert path.read_bytes() == before


def test_redact_header_reaches_the_leak_scan(tmp_path: Path) -> None:
    upstream_cassette = tmp_path / "echo.yaml"
    upstream_cassette.write_text(ECHO)
    path = tmp_path / "rec.yaml"
    with (
        upstream_agent(upstream_cassette, pace="instant") as upstream,
        record_process(
            "--upstream",
            upstream.url,
            "--cassette",
            str(path),
            "--redact-name",
            "X-Custom-Ref",
        ) as recorder,
    ):
        HTTP.get(recorder.url + CARD)
        rpc(
            recorder.url,
            "SendMessage",
            {"message": message("hi")},
            headers={"X-Custom-Ref": "hdr-7788-custom"},
        )
        recorder.proc.send_signal(signal.SIGTERM)
        assert recorder.proc.wait(timeout=10) == 1
        err = recorder.proc.stderr.read()  # type: ignore[union-attr]
    assert err.startswith("mockagent: ")
    assert "secret" in err and "hdr-7788-custom" not in err
    assert not path.exists()
    assert "hdr-7788-custom" not in partial_path(path).read_text()


def test_the_recording_points_at_the_projects_schema_by_a_relative_path(tmp_path: Path) -> None:
    """`mockagent schema > cassettes/schema.json` once: every recording's first line points at
    it, the same on every machine (before, at the installed package's schema.json in a venv)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "schema.json").write_text("{}")
    path = tmp_path / "cassettes" / "agents" / "rec.yaml"
    with (
        upstream_agent() as upstream,
        record_process("--upstream", upstream.url, "--cassette", str(path)) as recorder,
    ):
        HTTP.get(recorder.url + CARD)
        rpc(recorder.url, "SendMessage", {"message": message("Run the tests at 9f3c2e1")})
        recorder.proc.send_signal(signal.SIGTERM)
        assert recorder.proc.wait(timeout=10) == 0
    assert path.read_text().startswith("# yaml-language-server: $schema=../schema.json\nversion:")
