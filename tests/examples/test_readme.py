"""README.md's opening and the blocks of docs/getting-started.md run here (and the pytest,
recording and near-miss examples they lead to), and what the page shows is compared with what comes
back. The README's recipes are in test_readme_recipes.py, the cassette examples in
test_docs_cassettes.py.

Blocks are taken from the pages themselves (see tests/helpers/docs.py), with the pages' host and
port replaced by the test server's. The curl calls need a real `curl` and skip without one.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.helpers.docs import (
    README_URL,
    ROOT,
    Served,
    block,
    local_env,
    page,
    start,
)

HEADERS = {"A2A-Version": "1.0"}
HTTP = httpx.Client(timeout=10.0, trust_env=False)
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
needs_curl = pytest.mark.skipif(
    shutil.which("curl") is None, reason="curl is not installed: the README's curl calls cannot run"
)


def curl(command: str, server: Served) -> Any:
    """Run one of the README's curl command lines against `server`; its JSON answer."""
    done = subprocess.run(
        ["bash", "-c", command.replace(README_URL, server.url)],
        env=local_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(done.stdout)


def curl_commands(text: str) -> list[str]:
    """A block's commands: each starts at a line beginning with `curl` and runs to the next."""
    commands: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("curl ") or not commands:
            commands.append(line)
        else:
            commands[-1] += line
    return commands


def test_readme_starts_with_the_two_commands() -> None:
    first = block("README.md", "sh", "scripts/serve   # install into .venv")
    assert first == page("README.md").blocks[0]
    started = block("docs/getting-started.md", "sh", "scripts/serve   # install into .venv")
    assert started.text == first.text  # Getting started opens with the same two commands
    commands = [line.split("#")[0].strip() for line in first.text.splitlines()]
    assert (first.lang, commands) == ("sh", ["scripts/serve", "scripts/test"])
    for script in commands:
        assert (ROOT / script).is_file()


def test_serve_prints_each_agent_then_ready(kit: Served) -> None:
    lines = kit.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:-1]] == [
        [name, f"{kit.url}/{name}/"] for name in ("code-reviewer", "deployer", "test-runner")
    ]
    assert lines[-1].startswith(f"mockagent ready on {kit.url}")
    assert f"inspector: {kit.url}/_mockagent/;" in lines[-1]  # on loopback the admin API is on


@needs_curl
def test_jsonrpc_curl_runs_the_task_to_completion(kit: Served) -> None:
    shown = block("docs/getting-started.md", "sh", '"method":"SendMessage"')
    (command,) = curl_commands(shown.text)
    task = curl(command, kit)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "1 failed, 11 passed"}]


@needs_curl
def test_rest_curls_card_then_send_then_poll(kit: Served) -> None:
    shown = block("docs/getting-started.md", "sh", "message:send")
    card_call, send_call, poll_call = curl_commands(shown.text)
    card = curl(card_call, kit)
    assert card["name"] == "test-runner"
    assert {i["url"] for i in card["supportedInterfaces"]} == {f"{kit.url}/test-runner"}
    task = curl(send_call, kit)["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"  # returnImmediately
    poll = poll_call.replace("TASK_ID", task["id"])
    # The README's comment on the poll: WORKING, then COMPLETED.
    states = [curl(poll, kit)["status"]["state"] for _ in range(2)]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])  # the README's `# or ["HTTP+JSON"]`
def test_a2a_sdk_client_prints_the_finished_task(kit: Served, binding: str) -> None:
    source = block("docs/getting-started.md", "python", 'bindings=["JSONRPC"]').text
    source = source.replace(README_URL, kit.url)
    assert 'supported_protocol_bindings=["JSONRPC"]' in source
    source = source.replace('["JSONRPC"]', json.dumps([binding]))
    done = subprocess.run(
        [sys.executable, "-c", source], env=local_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    shown = re.search(r"# prints: (.+)", source)  # the README's comment on the print call
    assert shown is not None, "the client example should say what it prints"
    assert re.fullmatch(re.escape(shown.group(1)).replace("TASK_ID", UUID) + "\n", done.stdout)


def test_near_miss_report_is_the_servers(kit: Served) -> None:
    shown = block("docs/reference/errors.md", "text", "No interaction in").text.rstrip("\n")
    answer = HTTP.post(
        f"{kit.url}/code-reviewer/",
        headers=HEADERS,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "m1",
                    "role": "ROLE_USER",
                    "parts": [{"text": "Please review my change"}],
                }
            },
        },
    ).json()
    error = answer["error"]
    assert error["code"] == -32004
    assert error["message"] == shown
    detail = next(d for d in error["data"] if d["@type"].endswith("mockagent.v1.NearMissReport"))
    assert detail["report"] == shown
    # "`mockagent serve` also logs each report to stderr"
    deadline = time.monotonic() + 10
    while shown not in kit.stderr.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, "serve did not log the near-miss report to stderr"
        time.sleep(0.05)


@pytest.mark.parametrize("where", ["test file's directory", "rootdir"])
def test_pytest_example_passes(pytester: pytest.Pytester, where: str) -> None:
    example = block("docs/pytest.md", "python", "def test_asks_for_languages").text
    cassette = re.search(r'@pytest\.mark\.mockagent\("([^"]+)"\)', example)
    assert cassette is not None
    tests = pytester.mkdir("tests")
    base = tests if where == "test file's directory" else pytester.path
    target = base / cassette.group(1)
    target.parent.mkdir(parents=True)
    shutil.copyfile(ROOT / cassette.group(1), target)
    pytester.makeini("[pytest]\n")  # the rootdir is the project's folder, as in a real project
    (tests / "test_example.py").write_text(example)
    result = pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_pytest_example_needs_only_what_the_page_installs() -> None:
    distribution = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    install = block("docs/pytest.md", "sh", "pip install mockagent-server pytest").text
    named = shlex.split(install.split("pip install", 1)[1].split("#")[0])
    assert {distribution, "pytest"} <= set(named)
    example = block("docs/pytest.md", "python", "def test_asks_for_languages").text
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(example))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    comes_with_mockagent = {re.split(r"[\s<>=!~\[;]", dep, maxsplit=1)[0] for dep in declared}
    assert imported - set(named) - {"mockagent"} <= comes_with_mockagent


def test_record_command_records_what_it_forwards(kit: Served, tmp_path: Path) -> None:
    shown = block("docs/recording.md", "sh", "mockagent record --upstream http://127.0.0.1:9999")
    argv = shlex.split(shown.text, comments=True)
    assert argv[:2] == ["mockagent", "record"]
    options = dict(zip(argv[2::2], argv[3::2], strict=True))
    assert set(options) == {"--upstream", "--cassette", "--port"}
    cassette = tmp_path / Path(options["--cassette"]).name
    recorder = start(
        [
            "record",
            "--upstream",
            f"{kit.url}/code-reviewer",
            "--cassette",
            str(cassette),
            "--port",
            "0",
        ],
        tmp_path / "stderr.log",
        cwd=tmp_path,
    )
    try:
        assert f"point clients at {recorder.url}/" in recorder.stdout
        answer = HTTP.post(
            f"{recorder.url}/",
            headers=HEADERS,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {
                        "messageId": "m1",
                        "role": "ROLE_USER",
                        "parts": [{"text": "Which languages do you review?"}],
                    }
                },
            },
        ).json()
    finally:
        printed = recorder.stop()
    assert f"wrote {cassette}" in printed, recorder.stderr.read_text()
    written = yaml.safe_load(cassette.read_text())
    (interaction,) = written["interactions"]
    reply = answer["result"]["message"]["parts"][0]["text"]
    assert reply.startswith("I review Python")
    # "direct replies as `message:`"
    assert interaction["reply"]["message"]["parts"] == [{"text": reply}]
