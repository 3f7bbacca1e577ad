"""A `.partial` left by a recording that did not finish (kill -9 of `mockagent record`) is taken
in by the next recording of the same cassette, which says so and writes those calls with its
own; one it cannot read is kept as it is, and the new recording writes beside it. Never
overwritten."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.proxy.session import Session, partial_path
from mockagent.server.thread import serve_in_thread
from tests.helpers.hostile_http import serve_process
from tests.helpers.recording import (
    HTTP,
    TEST_RUNNER,
    message,
    record_process,
    recording,
    rpc,
    upstream_agent,
    view_result,
    wait_for,
)

CARD = "/.well-known/agent-card.json"
FIRST, SECOND = "Run the tests at 9f3c2e1", "Run the tests at deadbee"


def names(text: str) -> list[str]:
    return [i["name"] for i in yaml.safe_load(text)["interactions"]]


def send(url: str, text: str) -> Any:
    reply = rpc(url, "SendMessage", {"message": message(text)})
    return view_result("result" in reply, reply.get("result", reply.get("error")))


def test_the_next_record_takes_in_the_partial_a_killed_one_left(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    partial = partial_path(path)
    args = ("--cassette", str(path), "--mode", "all")
    with upstream_agent() as upstream:
        live = {text: send(upstream.url, text) for text in (FIRST, SECOND)}
        with record_process("--upstream", upstream.url, *args) as killed:
            HTTP.get(killed.url + CARD)
            send(killed.url, FIRST)
            wait_for(lambda: partial.exists(), what="PATH.partial")
            killed.proc.send_signal(signal.SIGKILL)
            killed.proc.wait(timeout=10)
        with record_process("--upstream", upstream.url, *args) as recorder:
            HTTP.get(recorder.url + CARD)
            send(recorder.url, SECOND)
            recorder.proc.send_signal(signal.SIGTERM)
            assert recorder.proc.wait(timeout=10) == 0
            err = recorder.proc.stderr.read()  # type: ignore[union-attr]
            out = recorder.rest_of_stdout()
    # Before: the second recording overwrote PATH.partial, and wrote only its own call.
    assert err.splitlines() == [
        f"mockagent: {partial} held 1 interaction(s) of a recording of {path} that did not "
        f"finish (run-the-tests-at-9f3c2e1); this recording keeps them (in {partial}) and "
        "writes them with its own"
    ]
    assert f"wrote {path}" in out.splitlines()
    assert names(path.read_text()) == ["run-the-tests-at-9f3c2e1", "run-the-tests-at-deadbee"]
    assert not partial.exists()
    with serve_in_thread(path, pace="instant") as replay:
        assert {text: send(replay.url, text) for text in (FIRST, SECOND)} == live


def test_a_leftover_alone_is_written_when_the_next_recording_ends(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        send(rec.url, FIRST)
        left = partial_path(path).read_text()
    shutil.copy(TEST_RUNNER, path)  # and new_episodes records on top of a cassette
    partial_path(path).write_text(left)
    session = Session(path, "new_episodes")
    assert session.finish() == path
    recorded = names(path.read_text())
    assert recorded[-1] == "run-the-tests-at-9f3c2e1"
    assert recorded[:-1] == names(TEST_RUNNER.read_text())
    assert not partial_path(path).exists()


def test_an_unreadable_leftover_is_kept_and_the_recording_writes_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.yaml"
    partial = partial_path(path)
    partial.write_text("interactions: [unclosed\n")
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        send(rec.url, FIRST)
        beside = tmp_path / "rec.yaml.2.partial"
        assert names(beside.read_text()) == ["run-the-tests-at-9f3c2e1"]
        assert rec.finish() == path
    printed = capsys.readouterr().err.splitlines()
    assert len(printed) == 2, printed
    assert printed[0].startswith(
        f"mockagent: {partial} was left by a recording that did not finish and cannot be read ("
    )
    assert printed[0].endswith("); it is kept as it is")
    # Before: "({partial} is another recording's)", though no other recording ran.
    assert printed[1] == (
        f"mockagent: this recording keeps its calls in {beside} until it ends ({partial} "
        f"cannot be read); they are merged into {path} when it ends"
    )
    assert partial.read_text() == "interactions: [unclosed\n"  # never overwritten
    assert not beside.exists()
    assert names(path.read_text()) == ["run-the-tests-at-9f3c2e1"]


SEQUENCE = """\
version: 1
agent: {name: seq, description: answers twice, skills: [{id: s, name: S, description: S}]}
interactions:
  - {name: first, match: {text: status?}, reply: {message: working}, times: 1}
  - {name: second, match: {text: status?}, reply: {message: done}}
"""


def test_calls_a_rerun_makes_again_replace_the_leftovers_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "seq.yaml").write_text(SEQUENCE)
    path = tmp_path / "rec.yaml"
    partial = partial_path(path)
    with upstream_agent(tmp_path / "seq.yaml", pace="instant") as upstream:
        with recording(upstream.url, path) as killed:  # killed after its first call
            send(killed.url, "status?")
            left = partial.read_text()
        path.unlink()
        partial.write_text(left)
        upstream.reset()
        live = [send(upstream.url, "status?") for _ in range(2)]
        upstream.reset()
        with recording(upstream.url, path) as rerun:  # the same test again, to its end
            assert [send(rerun.url, "status?") for _ in range(2)] == live
            rerun.finish()
    # Before: the killed run's `status` (working) came first, the replay answered working twice.
    assert names(path.read_text()) == ["status", "status-2"]
    with serve_in_thread(path, pace="instant") as replay:
        assert [send(replay.url, "status?") for _ in range(2)] == live
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"mockagent: this recording made 1 call(s) of the leftover {partial} again (status); "
        f"{path} holds the new recording of them, and the leftover's other calls"
    )


def leftover_beside(path: Path, upstream_url: str) -> Path:
    """TEST_RUNNER at `path`, and beside it the partial a killed recording of FIRST left."""
    with recording(upstream_url, path) as rec:
        HTTP.get(rec.url + CARD)
        send(rec.url, FIRST)
        left = partial_path(path).read_text()
    shutil.copy(TEST_RUNNER, path)
    partial_path(path).write_text(left)
    return partial_path(path)


def said_left(partial: Path, path: Path, what: str) -> str:
    return (
        f"mockagent: {partial}, left by a recording of {path} that did not finish, holds 1 "
        f"interaction(s): {what}; a recording in mode new_episodes takes them in (`mockagent "
        "record --mode new_episodes`, or --mockagent-record-mode=new_episodes)"
    )


def test_serve_and_record_once_say_a_leftover_is_beside_the_replayed_cassette(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rec.yaml"
    with upstream_agent(pace="instant") as upstream:
        partial = leftover_beside(path, upstream.url)
        args = ("--upstream", upstream.url, "--cassette", str(path), "--mode", "once")
        with record_process(*args) as replay:
            replay.proc.terminate()
            assert replay.proc.wait(timeout=10) == 0
            err = replay.proc.stderr.read()  # type: ignore[union-attr]
    with serve_process(path):
        pass
    # Before: nothing said that the replay leaves the leftover's calls out.
    said = said_left(partial, path, "this replay does not answer them")
    assert err.splitlines() == [said]
    assert said in path.with_suffix(".err").read_text().splitlines()
    assert partial.exists()


FIXTURE_REPLAY = """
import pytest


@pytest.mark.mockagent("rec.yaml")
def test_replays(mockagent):
    pass
"""


def test_the_fixture_warns_of_a_leftover_beside_its_cassette(pytester: pytest.Pytester) -> None:
    path = pytester.path / "rec.yaml"
    with upstream_agent(pace="instant") as upstream:
        partial = leftover_beside(path, upstream.url)
    pytester.makepyfile(test_generated=FIXTURE_REPLAY)
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, warnings=1)  # in the summary, without -rA
    said = said_left(partial, path, "this replay does not answer them")
    assert said in result.stdout.str().replace("\n  ", " ")


def test_the_survivor_of_two_recordings_names_the_partial_the_killed_one_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.yaml"
    with (
        upstream_agent(pace="instant") as upstream,
        recording(upstream.url, path) as survivor,
        recording(upstream.url, path) as killed,
    ):
        send(killed.url, FIRST)
        killed.proxy.stop()
        killed.app.extensions["mockagent.recording"].session.slot.release()  # as kill -9 does
        killed.finished = True
        send(survivor.url, SECOND)
        capsys.readouterr()
        assert survivor.finish() == path
    # Before: the survivor ended without a word of the killed one's calls.
    orphan = partial_path(path, 2)
    assert capsys.readouterr().err.splitlines() == [
        said_left(orphan, path, "this recording did not write them")
    ]
    assert names(orphan.read_text()) == ["run-the-tests-at-9f3c2e1"]
