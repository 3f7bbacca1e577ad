"""README.md's install line and its three recipes run as a reader runs them: the a2a-sdk client
against `scripts/serve`'s agents (blocking, polled, streamed), the pytest tests, and the
record → fault → serve → verify session, each compared with what the README says it prints."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.helpers.docs import (
    README_URL,
    ROOT,
    Served,
    block,
    local_env,
    mockagent_command,
    page,
    start,
)

RECORDER_URL = "http://127.0.0.1:8001"  # the recipe's recording proxy (and its replay)
HTTP = httpx.Client(timeout=10.0, trust_env=False)


def printed_lines(source: str) -> list[str]:
    """What the example says it prints: its `# prints: …` comments, in order."""
    return re.findall(r"# prints: (.+)", source)


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The kit as `scripts/serve` serves it, at instant pace (the pace changes how long a stream
    takes and the gaps a recording writes, not what the recipes show)."""
    served = start(
        ["serve", "cassettes/kit", "--port", "0", "--pace", "instant"],
        tmp_path_factory.mktemp("runner") / "stderr.log",
    )
    try:
        yield served
    finally:
        served.stop()


def test_install_names_the_distribution() -> None:
    distribution = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    shown = block("README.md", "sh", "pip install mockagent-server   #").text
    command, comment = shown.split("#", 1)
    assert shlex.split(command) == ["pip", "install", distribution]
    assert "pip install ." in comment  # until the first release: from a clone


def test_the_stand_in_recipe_prints_what_it_says(runner: Served) -> None:
    source = block("README.md", "python", "SendMessageConfiguration(**configuration)").text
    assert f'AGENT = "{README_URL}/test-runner"' in source
    done = subprocess.run(
        [sys.executable, "-c", source.replace(README_URL, runner.url)],
        env=local_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    said = printed_lines(source)
    assert [line.split(":")[0] for line in said] == ["blocking", "polled", "streamed"]
    assert done.stdout.splitlines() == said


def test_the_stand_in_recipe_says_where_its_client_comes_from() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(re.match(r"a2a-sdk\b", dep) for dep in project["optional-dependencies"]["test"])
    said = " ".join(page("README.md").text.split())
    assert "`pip install a2a-sdk` first; it is in the `test` extra" in said


def test_the_pytest_recipe_passes(pytester: pytest.Pytester) -> None:
    example = block("README.md", "python", "def test_a_failed_deploy_is_reported").text
    assert "def test_the_reviewer_names_its_languages" in example
    # the recipe's commands, in a fresh project: pytest is installed here already; the copy runs
    install, copy, run = block("README.md", "sh", "cassettes/kit cassettes/kit").text.splitlines()
    assert (shlex.split(install), shlex.split(run)) == (["pip", "install", "pytest"], ["pytest"])
    clone = shlex.quote(str(ROOT))
    subprocess.run(
        ["bash", "-c", copy.replace("path/to/mockagent", clone)], cwd=pytester.path, check=True
    )
    assert (pytester.path / "cassettes" / "kit" / "code-reviewer.yaml").is_file()
    pytester.makeini("[pytest]\n")
    (pytester.path / "test_recipe.py").write_text(example)
    result = pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def options(command: str) -> dict[str, str]:
    argv = shlex.split(command, comments=True)
    return dict(zip(argv[2::2], argv[3::2], strict=True))


def record(runner: Served, folder: Path) -> Path:
    """The recipe's `mockagent record`, driven by its curl call; the cassette it wrote."""
    shown = block(
        "README.md", "sh", "mockagent record --upstream http://127.0.0.1:8000/test-runner"
    )
    assert shown.text.startswith("mockagent record ")
    given = options(shown.text)
    assert given["--port"] == RECORDER_URL.rsplit(":", 1)[1]
    upstream = given["--upstream"].replace(README_URL, runner.url)
    args = ["record", "--upstream", upstream, "--cassette", given["--cassette"], "--port", "0"]
    recorder = start(args, folder / "record.log", cwd=folder)
    try:
        curl = block("README.md", "sh", '"method":"SendStreamingMessage"').text
        done = subprocess.run(
            ["bash", "-c", curl.replace(RECORDER_URL, recorder.url)],
            env=local_env(),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    finally:
        printed = recorder.stop()
    assert done.stdout.count("data: ") == 9  # the Task, WORKING, 6 artifact updates, COMPLETED
    assert f"wrote {given['--cassette']}" in printed, (folder / "record.log").read_text()
    return folder / given["--cassette"]


def add_the_fault(cassette: Path) -> None:
    """The recipe's edit: its `fault:` on the interaction it names, as the recording wrote it."""
    shown = yaml.safe_load(block("README.md", "yaml", "fault: {dropAfter: 3}").text)
    (edit,) = shown["interactions"]
    written = yaml.safe_load(cassette.read_text())
    (recorded,) = written["interactions"]
    assert (recorded["name"], recorded["match"]) == (edit["name"], edit["match"])
    recorded["fault"] = edit["fault"]
    cassette.write_text(yaml.safe_dump(written, sort_keys=False))


def test_the_misbehaving_agent_recipe_records_cuts_and_verifies(
    runner: Served, tmp_path: Path
) -> None:
    cassette = record(runner, tmp_path)
    add_the_fault(cassette)

    # "`mockagent serve runner.yaml --port 8001` now cuts that stream after the Task, WORKING and
    # the first log chunk", and the journal says the cut fired.
    replay = start(["serve", cassette.name, "--port", "0"], tmp_path / "serve.log", cwd=tmp_path)
    try:
        curl = block("README.md", "sh", '"method":"SendStreamingMessage"').text
        cut = subprocess.run(
            ["bash", "-c", curl.replace(RECORDER_URL, replay.url)],
            env=local_env(),
            capture_output=True,
            text=True,
            timeout=30,
        )
        calls = HTTP.get(f"{replay.url}/_mockagent/calls").json()
    finally:
        replay.stop()
    events = [line for line in cut.stdout.splitlines() if line.startswith("data: ")]
    kinds = [re.search(r'"result":\{"(\w+)"', event) for event in events]
    assert [
        kind.group(1) if kind else event for kind, event in zip(kinds, events, strict=True)
    ] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
    ]
    (call,) = calls["calls"]
    assert [(f["kind"], f["fired"]) for f in call["faults"]] == [("dropAfter", True)]

    shown = block("README.md", "sh", "mockagent verify runner.yaml").text
    argv = shlex.split(shown, comments=True)
    assert argv[:4] == ["mockagent", "verify", cassette.name, "--upstream"] and len(argv) == 5
    done = subprocess.run(
        [mockagent_command(), *argv[1:4], argv[4].replace(README_URL, runner.url)],
        cwd=tmp_path,
        env=local_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = block("README.md", "text", "complete live, cut off on replay").text
    assert (done.returncode, done.stdout) == (1, said), done.stderr
