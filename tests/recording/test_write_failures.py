"""A cassette that cannot be written (disk full, a read-only folder) never breaks a call the proxy
answers: the client gets the upstream's answer, the failure is printed once naming the file and
the reason, what was written before stays in the `.partial`, and the end says in one line where
the recording is kept (`record` exits 1, without a traceback).

The tests run as root, where chmod does not stop a write: ENOSPC and EROFS are injected at the
session's write function, and a folder that is a file stands for a folder nobody can write to.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.cassette.loader import load_cassette
from mockagent.errors import CassetteError
from mockagent.proxy import session as session_module
from mockagent.proxy.session import partial_path
from tests.helpers.recording import (
    HTTP,
    message,
    record_process,
    recording,
    rpc,
    upstream_agent,
)

CARD = "/.well-known/agent-card.json"
RECOVERED = "the recording is kept in "


def names(text: str) -> list[str]:
    return [i["name"] for i in yaml.safe_load(text)["interactions"]]


def send(url: str, text: str) -> dict[str, Any]:
    reply = rpc(url, "SendMessage", {"message": message(text)})  # HTTP 200, asserted
    assert reply["result"]["task"]["status"]["state"].startswith("TASK_STATE_"), reply
    return reply


def kept_in(text: str) -> Path:
    """The file a one-line failure message says the recording is kept in."""
    assert RECOVERED in text, text
    return Path(text.split(RECOVERED, 1)[1].strip())


def fail_writes_in(monkeypatch: pytest.MonkeyPatch, folder: Path, code: int) -> list[Path]:
    """From now on, every write of the session into `folder` fails with OSError `code`; the
    files it tried, in order."""
    tried: list[Path] = []
    real = session_module.write_atomic

    def write_atomic(path: str | Path, text: str) -> None:
        if Path(path).parent == folder:
            tried.append(Path(path))
            raise OSError(code, os.strerror(code))
        real(path, text)

    monkeypatch.setattr(session_module, "write_atomic", write_atomic)
    return tried


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_full_or_read_only_disk_never_fails_a_call_and_loses_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    code: int,
) -> None:
    path = tmp_path / "rec.yaml"
    partial = partial_path(path)
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        send(rec.url, "Run the tests at 9f3c2e1")
        assert names(partial.read_text()) == ["run-the-tests-at-9f3c2e1"]
        tried = fail_writes_in(monkeypatch, tmp_path, code)
        # Before: both answered Flask's HTML 500 although the upstream had answered.
        send(rec.url, "Run the tests at deadbee")
        send(rec.url, "Run the tests at cafe123")
        assert tried == [partial, partial]
        printed = capsys.readouterr().err.splitlines()
        assert printed == [
            f"mockagent: cannot write {partial}: {os.strerror(code)}; calls are still answered, "
            "and the recording is kept in memory until it stops"
        ]
        # What was written before the failure stays in the partial.
        assert names(partial.read_text()) == ["run-the-tests-at-9f3c2e1"]
        with pytest.raises(CassetteError) as failed:
            rec.finish()
    message_ = str(failed.value)
    assert "\n" not in message_
    assert message_.startswith(
        f"{path}: cannot write the cassette: {os.strerror(code)}; {RECOVERED}"
    )
    aside = kept_in(message_)
    try:
        assert aside.parent != tmp_path
        assert names(aside.read_text()) == [
            "run-the-tests-at-9f3c2e1",
            "run-the-tests-at-deadbee",
            "run-the-tests-at-cafe123",
        ]
        assert load_cassette(aside).cassette.agent.name == "test-runner"
    finally:
        aside.unlink()
    assert not path.exists()
    assert names(partial.read_text()) == ["run-the-tests-at-9f3c2e1"]
    assert capsys.readouterr().err == ""  # printed once


def test_a_disk_that_frees_up_writes_the_whole_recording_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.yaml"
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        fail_writes_in(monkeypatch, tmp_path, errno.ENOSPC)
        send(rec.url, "Run the tests at 9f3c2e1")
        monkeypatch.undo()
        assert rec.finish() == path
    assert names(path.read_text()) == ["run-the-tests-at-9f3c2e1"]
    assert not partial_path(path).exists()
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_nowhere_to_write_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rec.yaml"
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        monkeypatch.setattr(
            session_module,
            "write_atomic",
            lambda path, text: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left")),
        )
        send(rec.url, "Run the tests at 9f3c2e1")
        with pytest.raises(CassetteError) as failed:
            rec.finish()
    assert str(failed.value) == (
        f"{path}: cannot write the cassette: No space left; the recording (1 interactions) "
        "could not be written anywhere: No space left"
    )


def test_record_into_a_folder_it_cannot_write_answers_and_exits_1_in_one_line(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cassette's folder should be")
    path = blocker / "rec.yaml"
    with (
        upstream_agent() as upstream,
        record_process("--upstream", upstream.url, "--cassette", str(path)) as recorder,
    ):
        HTTP.get(recorder.url + CARD)
        send(recorder.url, "Run the tests at 9f3c2e1")
        send(recorder.url, "Run the tests at deadbee")
        recorder.proc.send_signal(signal.SIGTERM)
        # Before: exit 1 with a traceback (NotADirectoryError), and every call Flask's HTML 500.
        assert recorder.proc.wait(timeout=10) == 1
        err = recorder.proc.stderr.read().splitlines()  # type: ignore[union-attr]
        out = recorder.rest_of_stdout()
    reason = os.strerror(errno.ENOTDIR)
    assert err[0] == (
        f"mockagent: cannot write {partial_path(path)}: {reason}; calls are still answered, "
        "and the recording is kept in memory until it stops"
    )
    assert len(err) == 2, err
    assert err[1].startswith(f"mockagent: {path}: cannot write the cassette: {reason}; ")
    assert "wrote" not in out
    aside = kept_in(err[1])
    try:
        assert names(aside.read_text()) == ["run-the-tests-at-9f3c2e1", "run-the-tests-at-deadbee"]
    finally:
        aside.unlink()


def test_a_recording_kept_aside_goes_to_a_private_folder_nobody_else_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rec.yaml"
    shared = tmp_path / "tmp"
    shared.mkdir()
    (shared / "mockagent-recovered").write_text("another user's")  # made before us
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        fail_writes_in(monkeypatch, tmp_path, errno.ENOSPC)
        send(rec.url, "Run the tests at 9f3c2e1")
        with pytest.raises(CassetteError) as failed:
            rec.finish()
    # Before: "could not be written anywhere", under the shared folder another user made.
    aside = kept_in(str(failed.value))
    assert aside.parent.parent == shared
    assert aside.parent.name.startswith("mockagent-recovered-")
    assert stat.S_IMODE(aside.parent.stat().st_mode) == 0o700
    assert names(aside.read_text()) == ["run-the-tests-at-9f3c2e1"]


FIXTURE_TEST = """
import json
import urllib.request

import pytest


@pytest.mark.mockagent("blocked/rec.yaml", record_mode="all", upstream="{upstream}")
def test_records(mockagent):
    body = {{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {{"message": {{
        "messageId": "m1", "role": "ROLE_USER", "parts": [{{"text": "Run the tests"}}]}}}}}}
    request = urllib.request.Request(mockagent.url, data=json.dumps(body).encode(), headers={{
        "Content-Type": "application/json", "A2A-Version": "1.0"}})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert "result" in json.load(response)
"""


def test_a_fixture_that_cannot_write_its_cassette_says_it_once(
    pytester: pytest.Pytester,
) -> None:
    with upstream_agent(pace="instant") as upstream:
        pytester.makepyfile(test_generated=FIXTURE_TEST.format(upstream=upstream.url))
        (pytester.path / "blocked").write_text("a file where the folder should be")
        result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert "cannot write the cassette: Not a directory; the recording is kept in " in output
    # Before: the message twice, chained ("During handling of the above exception …").
    assert "During handling of the above exception" not in output
    aside = kept_in(output.split("cannot write the cassette: Not a directory; ", 1)[1])
    aside = Path(str(aside).split()[0])
    assert names(aside.read_text()) == ["run-the-tests"]
    aside.unlink()
