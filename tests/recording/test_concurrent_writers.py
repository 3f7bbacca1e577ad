"""Writers of one cassette at once never lose each other's calls: each writes under the
cassette's file lock, reading what is there and merging its interactions in. Tested with
`pytest -n 4` recording one cassette from four tests at once (and `-n 2` in mode all, which a
test run replaces once), two `mockagent record` processes, and recordings in threads that all
finish together; then the replay answers every call."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.proxy.session import partial_path
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.recording import (
    HTTP,
    message,
    record_process,
    recording,
    rpc,
    upstream_agent,
    view_result,
)

CARD = "/.well-known/agent-card.json"
TEXTS = [f"Run the suite on branch {n}" for n in range(4)]


def names(path: Path) -> list[str]:
    return [i["name"] for i in yaml.safe_load(path.read_text())["interactions"]]


def send(url: str, text: str) -> Any:
    reply = rpc(url, "SendMessage", {"message": message(text)})
    return view_result("result" in reply, reply.get("result", reply.get("error")))


@pytest.fixture
def upstream() -> Iterator[ServerThread]:
    with upstream_agent(pace="instant") as agent:
        yield agent


def replays_all(path: Path, upstream: ServerThread, texts: list[str]) -> None:
    """The cassette answers every text as the upstream did."""
    live = {text: send(upstream.url, text) for text in texts}
    with serve_in_thread(path, pace="instant") as replay:
        assert {text: send(replay.url, text) for text in texts} == live


def test_two_records_of_one_cassette_keep_both_recordings(
    tmp_path: Path, upstream: ServerThread
) -> None:
    path = tmp_path / "rec.yaml"
    args = ("--upstream", upstream.url, "--cassette", str(path))
    with record_process(*args) as first, record_process(*args) as second:
        for recorder, text in ((first, TEXTS[0]), (second, TEXTS[1])):
            HTTP.get(recorder.url + CARD)
            send(recorder.url, text)
        outputs = []
        for recorder in (first, second):
            recorder.proc.terminate()
            assert recorder.proc.wait(timeout=10) == 0
            outputs.append(recorder.rest_of_stdout())
            outputs.append(recorder.proc.stderr.read())  # type: ignore[union-attr]
    # Before: the second to stop overwrote the first one's cassette.
    assert names(path) == ["run-the-suite-on-branch-0", "run-the-suite-on-branch-1"]
    assert f"wrote {path}" in outputs[0].splitlines() and outputs[1] == ""
    assert f"wrote {path}" in outputs[2].splitlines()
    assert outputs[3].splitlines() == [
        f"mockagent: this recording keeps its calls in {partial_path(path, 2)} until it ends "
        f"({partial_path(path)} is another recording's); each is merged into {path} when it ends"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.yaml"]
    replays_all(path, upstream, TEXTS[:2])


def test_recordings_that_end_at_once_all_reach_the_cassette(
    tmp_path: Path, upstream: ServerThread
) -> None:
    path = tmp_path / "rec.yaml"
    texts = [f"Run the suite on branch {n}" for n in range(6)]
    with ExitStack() as stack:
        recordings = [stack.enter_context(recording(upstream.url, path)) for _ in texts]
        for rec, text in zip(recordings, texts, strict=True):
            send(rec.url, text)
        start = threading.Barrier(len(recordings))
        failures: list[BaseException] = []

        def finish(rec: Any) -> None:
            start.wait()
            try:
                rec.finish()
            except BaseException as exc:  # reported below, on the test's thread
                failures.append(exc)

        threads = [threading.Thread(target=finish, args=(rec,)) for rec in recordings]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert failures == []
    assert sorted(names(path)) == [f"run-the-suite-on-branch-{n}" for n in range(6)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.yaml"]
    replays_all(path, upstream, texts)


SUITE = """
import json
import os
import time
import urllib.request
from pathlib import Path

import pytest

ARRIVED = Path(__file__).with_name("arrived")


def send(url, text):
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.mark.mockagent("cassettes/shared.yaml")
@pytest.mark.parametrize("n", range(4))
def test_branch(mockagent, n):
    reply = send(mockagent.url, f"Run the suite on branch {n}")
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    if mockagent.recording and os.environ.get("PYTEST_XDIST_WORKER"):
        # one test per worker records at once: none ends before the others have called
        workers = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
        ARRIVED.mkdir(exist_ok=True)
        (ARRIVED / str(n)).touch()
        deadline = time.monotonic() + 20
        while len(list(ARRIVED.iterdir())) < workers and time.monotonic() < deadline:
            time.sleep(0.01)
"""


@pytest.mark.parametrize(
    ("mode", "workers"),
    [
        ("new_episodes", "4"),  # four tests recording at once
        ("all", "2"),  # two at once, then two more: the run replaces the cassette once
    ],
)
def test_xdist_workers_recording_one_cassette_keep_every_call(
    pytester: pytest.Pytester, upstream: ServerThread, mode: str, workers: str
) -> None:
    pytester.makepyfile(test_shared=SUITE)
    recorded = pytester.runpytest(
        *("-p", "no:hypothesispytest", "-n", workers),
        f"--mockagent-record-mode={mode}",
        f"--mockagent-upstream={upstream.url}",
    )
    recorded.assert_outcomes(passed=4)
    cassette = pytester.path / "cassettes" / "shared.yaml"
    # Before: each worker wrote what it had read before the others wrote: calls were lost.
    assert sorted(names(cassette)) == [f"run-the-suite-on-branch-{n}" for n in range(4)]
    assert sorted(p.name for p in cassette.parent.iterdir()) == ["shared.yaml"]
    replayed = pytester.runpytest("-p", "no:hypothesispytest")  # mode none: the cassette answers
    replayed.assert_outcomes(passed=4)


def test_tests_of_one_run_recording_one_cassette_in_mode_all_replace_it_once(
    pytester: pytest.Pytester, upstream: ServerThread
) -> None:
    pytester.makepyfile(test_shared=SUITE)
    cassette = pytester.path / "cassettes" / "shared.yaml"
    options = ("-p", "no:hypothesispytest", "--mockagent-record-mode=all")
    for _ in range(2):  # the second run replaces what the first wrote: nothing twice
        recorded = pytester.runpytest(*options, f"--mockagent-upstream={upstream.url}")
        recorded.assert_outcomes(passed=4)  # one after the other
        # Before: each test replaced the cassette, and only the last one's call was left.
        assert names(cassette) == [f"run-the-suite-on-branch-{n}" for n in range(4)]
    pytester.runpytest("-p", "no:hypothesispytest").assert_outcomes(passed=4)


@pytest.mark.parametrize("run", [None, "run-2"])
def test_writers_in_mode_all_keep_each_others_calls_equal_to_the_old_ones(
    tmp_path: Path, upstream: ServerThread, run: str | None
) -> None:
    path = tmp_path / "rec.yaml"
    with recording(upstream.url, path) as first:  # the cassette as an earlier run left it
        for text in TEXTS[:2]:
            send(first.url, text)
        first.finish()
    apps = [create_recording_app(upstream.url, path, "all", run=run) for _ in range(2)]
    servers = [ServerThread(app).start() for app in apps]
    send(servers[0].url, TEXTS[0])  # the same call as before, recorded the same
    send(servers[1].url, TEXTS[2])
    for server in servers:
        server.stop()
    finish_recording(apps[0])
    finish_recording(apps[1])
    # Before: the second writer took the first one's call, equal to the old one, for old: lost.
    assert names(path) == ["run-the-suite-on-branch-0", "run-the-suite-on-branch-2"]
    replays_all(path, upstream, [TEXTS[0], TEXTS[2]])


def test_xdist_workers_rerecording_one_cassette_in_mode_all_keep_every_call(
    pytester: pytest.Pytester, upstream: ServerThread
) -> None:
    pytester.makepyfile(test_shared=SUITE)
    cassette = pytester.path / "cassettes" / "shared.yaml"
    options = ("-p", "no:hypothesispytest", "-n", "4", "--mockagent-record-mode=all")
    for _ in range(2):  # the second run records the same calls as the first, all at once
        shutil.rmtree(pytester.path / "arrived", ignore_errors=True)
        recorded = pytester.runpytest(*options, f"--mockagent-upstream={upstream.url}")
        recorded.assert_outcomes(passed=4)
        # Before: the second run kept only the last writer's call; the others equalled old ones.
        assert sorted(names(cassette)) == [f"run-the-suite-on-branch-{n}" for n in range(4)]
    pytester.runpytest("-p", "no:hypothesispytest").assert_outcomes(passed=4)


def test_the_same_call_made_through_two_recordings_replays_twice(
    tmp_path: Path, upstream: ServerThread
) -> None:
    """Two writers that each made the same call recorded two calls: the cassette answers it
    twice (each interaction is `times: 1`), as the upstream did. Before, the second writer's
    copy was taken for the first's, and the replay's second call found no interaction."""
    path = tmp_path / "rec.yaml"
    text = TEXTS[0]
    with ExitStack() as stack:
        recordings = [stack.enter_context(recording(upstream.url, path)) for _ in range(2)]
        for rec in recordings:
            send(rec.url, text)
        for rec in recordings:
            rec.finish()
    assert names(path) == ["run-the-suite-on-branch-0", "run-the-suite-on-branch-0-2"]
    live = send(upstream.url, text)
    with serve_in_thread(path, pace="instant") as replay:
        assert [send(replay.url, text) for _ in range(2)] == [live, live]
