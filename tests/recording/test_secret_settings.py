"""Users steer the leak scan where they record: `mockagent record --redact-name/--redact-pattern/
--allow-value`, and the pytest plugin's `redact_names`, `redact_patterns`, `allow_values`. Each
redaction by shape is printed (a warning under pytest) naming the file, interaction and field."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.verify.update import update_cassette
from tests.helpers.recording import HTTP, message, record_process, rpc, upstream_agent
from tests.helpers.secret_corpus import corpus, plain_upstream

SHAPES = corpus(seed=11)
PUBLIC, PRIVATE = SHAPES["github-pat"], SHAPES["stripe-live"]
TICKET = "ACME-" + "".join(random.Random(2).choices("0123456789", k=12))
PARTS = [
    {"text": f"public {PUBLIC}, private {PRIVATE}, ticket {TICKET}"},
    {"data": {"ticketRef": "tr-8841", "note": "kept"}},
]
SAID = f"public {PUBLIC}, private <redacted:stripe-access-key>, ticket <redacted:pattern>"


def test_record_takes_names_patterns_and_allowed_values(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    with (
        upstream_agent(plain_upstream(tmp_path, PARTS), pace="instant") as upstream,
        record_process(
            "--upstream",
            upstream.url,
            "--cassette",
            str(path),
            "--redact-name",
            "ticket-ref",
            "--redact-pattern",
            r"ACME-\d{12}",
            "--allow-value",
            PUBLIC,
        ) as recorder,
    ):
        HTTP.get(recorder.url + "/.well-known/agent-card.json")
        rpc(recorder.url, "SendMessage", {"message": message("show the keys")})
        recorder.proc.send_signal(signal.SIGTERM)
        assert recorder.proc.wait(timeout=10) == 0
        err = recorder.proc.stderr.read()  # type: ignore[union-attr]
    parts = yaml.safe_load(path.read_text())["interactions"][0]["reply"]["task"]["steps"][-1]
    assert parts["message"]["parts"] == [
        {"text": SAID},
        {"data": {"ticketRef": "<redacted:ticketRef>", "note": "kept"}},
    ]
    told = [line for line in err.splitlines() if "redacted a secret" in line]
    field = "reply.task.steps[0].message.parts[0].text"
    assert len(told) == 2, err
    for kind, line in zip(
        ["stripe-access-key", "pattern"], sorted(told, reverse=True), strict=True
    ):
        assert line.startswith(f"mockagent: {path}: redacted a secret ({kind})"), line
        assert "interaction 'show-the-keys'" in line and field in line
    assert PRIVATE not in err and TICKET not in err


def test_a_bad_pattern_stops_record_naming_it(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "record",
            "--upstream",
            "http://127.0.0.1:1",
            "--cassette",
            str(tmp_path / "c.yaml"),
            "--redact-pattern",
            "ACME-(\\d",
        ],
    )
    assert result.exit_code == 2
    assert "--redact-pattern" in result.output and "is not a regular expression" in result.output
    assert not (tmp_path / "c.yaml").exists()


PLUGIN_TEST = """
import json
import urllib.request

import pytest


@pytest.fixture
def mockagent_config():
    return {SETTINGS}


@pytest.mark.mockagent("rec.yaml", record_mode="all", upstream="{UPSTREAM}")
def test_records(mockagent):
    body = {{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {{"message": {{
        "messageId": "m1", "role": "ROLE_USER", "parts": [{{"text": "show the keys"}}]}}}}}}
    request = urllib.request.Request(mockagent.url, data=json.dumps(body).encode(), headers={{
        "Content-Type": "application/json", "A2A-Version": "1.0"}})
    with urllib.request.urlopen(request, timeout=10) as response:
        status = json.load(response)["result"]["task"]["status"]
    assert "ticket" in status["message"]["parts"][0]["text"]
"""


def test_the_plugin_takes_the_same_settings_and_warns(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    settings = {
        "redact_names": ["ticket_ref"],
        "redact_patterns": [r"ACME-\d{12}"],
        "allow_values": [PUBLIC],
    }
    with upstream_agent(plain_upstream(tmp_path, PARTS), pace="instant") as upstream:
        pytester.makepyfile(PLUGIN_TEST.format(SETTINGS=repr(settings), UPSTREAM=upstream.url))
        result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, warnings=2)
    result.stdout.fnmatch_lines(
        [
            "*rec.yaml: redacted a secret (stripe-access-key) in interaction 'show-the-keys'*",
            "*rec.yaml: redacted a secret (pattern) in interaction 'show-the-keys'*",
        ]
    )
    said = yaml.safe_load((pytester.path / "rec.yaml").read_text())["interactions"][0]
    assert said["reply"]["task"]["steps"][-1]["message"]["parts"][0]["text"] == SAID


def test_a_plugin_setting_that_is_no_list_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PLUGIN_TEST.format(SETTINGS={"redact_names": 5}, UPSTREAM="http://127.0.0.1:1")
    )
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["mockagent: mockagent_config: redact_names takes a list of strings, got 5"]
    )


def test_the_detector_leaves_the_process_warnings_alone() -> None:
    """detect-secrets, imported, sends every warning to logging; the scan undoes that."""
    code = (
        "import warnings\n"
        "before = warnings.showwarning\n"
        "from mockagent.cassette.secrets.redact import Redactor\n"
        "assert Redactor().redact_shapes('x')[1] == []\n"
        "assert warnings.showwarning is before, warnings.showwarning\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_verify_update_writes_no_secret_either(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A re-recorded answer goes through the same leak scan as a recording's."""
    path = tmp_path / "old.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "agent": {
                    "name": "plain",
                    "description": "d",
                    "skills": [{"id": "s", "name": "S", "description": "Says."}],
                },
                "interactions": [
                    {
                        "name": "keys",
                        "match": {"text": "show the keys"},
                        "reply": {
                            "task": {
                                "steps": [
                                    {"state": "TASK_STATE_COMPLETED", "message": "no keys yet"}
                                ]
                            }
                        },
                    }
                ],
            }
        )
    )
    with upstream_agent(plain_upstream(tmp_path, PARTS), pace="instant") as upstream:
        result = update_cassette(path, upstream.url)
    assert result.updated == ["keys"]
    text = path.read_text()
    assert PRIVATE not in text and "<redacted:stripe-access-key>" in text
    err = capfd.readouterr().err
    told = f"{path}: redacted a secret (stripe-access-key) in interaction 'keys'"
    assert err.count("redacted a secret (stripe-access-key)") == 1 and told in err, err
    assert "mockagent-verify-" not in err  # the scratch copy is no file of the user's


def test_verify_prints_no_live_secret_in_its_drift_lines(tmp_path: Path) -> None:
    """The drift lines go to stdout, a CI log: the live answer's secrets are masked there."""
    path = tmp_path / "old.yaml"
    reply = {"task": {"steps": [{"state": "TASK_STATE_COMPLETED", "message": "no keys yet"}]}}
    agent = {"name": "plain", "description": "d"}
    interactions = [{"name": "keys", "match": {"text": "show the keys"}, "reply": reply}]
    path.write_text(yaml.safe_dump({"version": 1, "agent": agent, "interactions": interactions}))
    with upstream_agent(plain_upstream(tmp_path, PARTS), pace="instant") as upstream:
        result = CliRunner().invoke(main, ["verify", str(path), "--upstream", upstream.url])
    assert result.exit_code == 1 and "drift keys" in result.output, result.output
    assert PRIVATE not in result.output and "<redacted:stripe-access-key>" in result.output


def test_under_warnings_as_errors_the_test_fails_not_the_recorded_call(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """-W error makes the redaction warning raise: in the test (at teardown, where the cassette
    is written), never in the proxy's thread, whose call the client still gets answered."""
    with upstream_agent(plain_upstream(tmp_path, PARTS), pace="instant") as upstream:
        pytester.makepyfile(PLUGIN_TEST.format(SETTINGS={}, UPSTREAM=upstream.url))
        result = pytester.runpytest("-p", "no:hypothesispytest", "-W", "error::UserWarning")
    result.assert_outcomes(passed=1, errors=1)  # the call passed, the teardown told
    result.stdout.fnmatch_lines(["*UserWarning: mockagent: *redacted a secret (github-token)*"])
