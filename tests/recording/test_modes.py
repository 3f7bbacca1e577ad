"""Record modes (VCR.py's none / once / new_episodes / all), and what a fresh recording replays:
the same answers the client got live, over both bindings, in a cassette that reads like a
hand-written one.

The "real" agent is mockagent itself serving a kit cassette (see helpers.py).
"""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.cassette.loader import load_cassette
from mockagent.errors import CassetteError
from mockagent.proxy.app import RECORDING, create_app_for_mode, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.recording import (
    A2A,
    BINDINGS,
    CODE_REVIEWER,
    DIFF,
    HTTP,
    closed_port,
    message,
    recording,
    rpc,
    task_id_of,
    upstream_agent,
    view_events,
    view_result,
    wait_for,
)

CARD = "/.well-known/agent-card.json"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def names(path: Path) -> list[str]:
    return [i["name"] for i in yaml.safe_load(path.read_text())["interactions"]]


def interactions(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text())["interactions"])


def record(path: Path, calls: Any, upstream: str, mode: str = "all") -> Any:
    """Record `calls(url)` (after fetching the card, as SDK clients do) and write the cassette."""
    with recording(upstream, path, mode) as rec:
        HTTP.get(rec.url + CARD)
        out = calls(rec.url)
        assert rec.finish() == path
    return out


def send(url: str, text: str, **kw: Any) -> dict[str, Any]:
    return rpc(url, "SendMessage", {"message": message(text, **kw)})


# -- none -------------------------------------------------------------------------------------


@pytest.mark.parametrize("upstream", [None, "http://127.0.0.1:1"])
def test_none_with_a_missing_cassette_says_it_does_not_exist(
    tmp_path: Path, upstream: str | None
) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(CassetteError) as caught:
        create_app_for_mode(missing, "none", upstream)
    text = str(caught.value)
    assert "does not exist" in text
    assert "overwrit" not in text
    assert "none" in text  # names the mode
    assert str(missing) in text
    assert not missing.exists()


def test_none_replays_only_and_an_unmatched_call_gets_the_near_miss(tmp_path: Path) -> None:
    path = tmp_path / "reviewer.yaml"
    shutil.copy(CODE_REVIEWER, path)
    with upstream_agent() as upstream:
        app = create_app_for_mode(path, "none", upstream.url)
        assert RECORDING not in app.extensions
        server = ServerThread(app).start()
        try:
            hit = send(server.url, "Which languages do you review?")
            assert "Python" in hit["result"]["message"]["parts"][0]["text"]
            miss = send(server.url, "Please review my change")
        finally:
            server.stop()
        assert upstream.journal() == []  # none never touches the network
    assert finish_recording(app) is None
    error = miss["error"]
    assert error["code"] == -32004
    assert str(path) in error["message"]
    assert "record mode: none" in error["message"]
    assert error["data"][0]["metadata"]["mockagent"] == "NO_MATCHING_INTERACTION"


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        CassetteError, match="record mode 'sometimes'.*none, once, new_episodes, all"
    ):
        create_app_for_mode(tmp_path / "x.yaml", "sometimes", "http://127.0.0.1:1")


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all"])
def test_recording_modes_need_an_upstream(tmp_path: Path, mode: str) -> None:
    with pytest.raises(CassetteError, match="upstream"):
        create_app_for_mode(tmp_path / "x.yaml", mode)


# -- once -------------------------------------------------------------------------------------


def test_once_records_a_missing_cassette(tmp_path: Path) -> None:
    path = tmp_path / "once.yaml"
    with upstream_agent() as upstream:
        app = create_app_for_mode(path, "once", upstream.url)
        assert RECORDING in app.extensions
        proxy = ServerThread(app).start()
        try:
            HTTP.get(proxy.url + CARD)
            live = send(proxy.url, "Run the tests at 9f3c2e1")
        finally:
            proxy.stop()
        assert finish_recording(app) == path
        assert [e.interaction for e in upstream.journal()] == ["run-9f3c2e1"]
    assert live["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert names(path) == ["run-the-tests-at-9f3c2e1"]
    load_cassette(path)


def test_once_replays_an_existing_cassette_without_the_upstream(tmp_path: Path) -> None:
    path = tmp_path / "once.yaml"
    with upstream_agent() as upstream:
        record(path, lambda url: send(url, "Run the tests at 9f3c2e1"), upstream.url)
    before = path.read_bytes()
    # The upstream is gone (a closed port): a call still answers, from the cassette.
    app = create_app_for_mode(path, "once", f"http://127.0.0.1:{closed_port()}")
    assert RECORDING not in app.extensions
    with _served(app) as server:
        reply = send(server.url, "Run the tests at 9f3c2e1")
        card = HTTP.get(server.url + CARD).json()
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert reply["result"]["task"]["status"]["message"]["parts"] == [
        {"text": "1 failed, 11 passed"}
    ]
    assert card["name"] == "test-runner"
    assert finish_recording(app) is None
    assert path.read_bytes() == before


def test_once_replaying_names_its_mode_in_the_near_miss(tmp_path: Path) -> None:
    path = tmp_path / "reviewer.yaml"
    shutil.copy(CODE_REVIEWER, path)
    with _served(create_app_for_mode(path, "once", "http://127.0.0.1:1")) as server:
        miss = send(server.url, "Please review my change")
    assert "record mode: once" in miss["error"]["message"]


class _served:
    """A ServerThread for `app` in a with block."""

    def __init__(self, app: Any) -> None:
        self.server = ServerThread(app)

    def __enter__(self) -> ServerThread:
        return self.server.start()

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


# -- new_episodes -----------------------------------------------------------------------------


def test_new_episodes_replays_what_matches_and_appends_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "episodes.yaml"
    with upstream_agent() as upstream:
        first = record(
            path,
            lambda url: [
                send(url, "Run the tests at 9f3c2e1"),
                send(url, "Run the tests at deadbee"),
            ],
            upstream.url,
        )
        old = interactions(path)
        assert [i["name"] for i in old] == ["run-the-tests-at-9f3c2e1", "run-the-tests-at-deadbee"]
        calls_before = len(upstream.journal())

        app = create_app_for_mode(path, "new_episodes", upstream.url)
        assert RECORDING in app.extensions
        with _served(app) as proxy:
            replayed = send(proxy.url, "Run the tests at 9f3c2e1")
            assert len(upstream.journal()) == calls_before  # answered from the cassette
            new = send(proxy.url, "Run the suite")
            seen = [e.interaction for e in upstream.journal()[calls_before:]]
        assert finish_recording(app) == path
    assert seen == ["run-head"]  # only the call the cassette did not know reached the upstream
    assert view_result(True, replayed["result"]) == view_result(True, first[0]["result"])
    assert new["result"]["task"]["status"]["message"]["parts"] == [{"text": "12 passed"}]
    after = interactions(path)
    # The old interactions come first, unchanged and in their order; the new one after them.
    assert after[:2] == old
    assert [i["name"] for i in after] == [
        "run-the-tests-at-9f3c2e1",
        "run-the-tests-at-deadbee",
        "run-the-suite",
    ]
    load_cassette(path)


# -- all --------------------------------------------------------------------------------------


def test_all_records_everything_anew(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    with upstream_agent() as upstream:
        record(path, lambda url: send(url, "Run the tests at 9f3c2e1"), upstream.url)
        assert names(path) == ["run-the-tests-at-9f3c2e1"]
        app = create_app_for_mode(path, "all", upstream.url)
        with _served(app) as proxy:
            HTTP.get(proxy.url + CARD)
            send(proxy.url, "Run the tests at 9f3c2e1")  # recorded again, not replayed
            send(proxy.url, "Run the tests at deadbee")
            assert [e.interaction for e in upstream.journal()][-2:] == [
                "run-9f3c2e1",
                "run-deadbee",
            ]
        assert finish_recording(app) == path
    assert names(path) == ["run-the-tests-at-9f3c2e1", "run-the-tests-at-deadbee"]


def test_a_recording_without_a_card_fetch_still_writes_a_cassette(tmp_path: Path) -> None:
    path = tmp_path / "nocard.yaml"
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        send(rec.url, "Run the tests at 9f3c2e1")  # curl-style: no GET of the card first
        assert rec.finish() == path
    assert load_cassette(path).cassette.agent.name == "test-runner"


# -- replay of a fresh recording ----------------------------------------------------------------


def runner_calls(c: A2A) -> tuple[list[Any], list[str]]:
    """Blocking, polled and streamed calls on test-runner; (what the client saw, task ids)."""
    seen: list[Any] = []
    ok, task = c.send(message("Run the tests at 9f3c2e1"))
    seen.append(("blocking", view_result(ok, task)))
    ids = [task_id_of(ok, task)]
    ok, task = c.send(message("Run the suite"), return_immediately=True)
    seen.append(("returnImmediately", view_result(ok, task)))
    polled = task_id_of(ok, task)
    ids.append(polled)
    for _ in range(3):  # WORKING with the first log line, then COMPLETED, then COMPLETED again
        seen.append(("GetTask", view_result(*c.get_task(polled))))
    events = c.stream(message("Run the tests at deadbee"))
    seen.append(("stream", view_events(events)))
    ids.append(str(events[0][1]["task"]["id"]))
    seen.append(("GetTask streamed", view_result(*c.get_task(ids[-1]))))
    seen.append(("CancelTask terminal", view_result(*c.cancel(ids[-1]))))
    seen.append(("GetTask unknown", view_result(*c.get_task("no-such-task"))))
    seen.append(("subscribe terminal", view_events(c.subscribe(ids[0]))))
    ok, task = c.send(message("Run the suite again"), return_immediately=True)
    ids.append(task_id_of(ok, task))
    seen.append(("CancelTask working", view_result(*c.cancel(ids[-1]))))
    seen.append(("GetTask canceled", view_result(*c.get_task(ids[-1]))))
    return seen, ids


@pytest.fixture(scope="module")
def recorded_runner(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[Path, list[Any], list[str], list[str]]]:
    """test-runner recorded once per binding: (cassette, what the client saw, upstream task ids,
    upstream context ids)."""
    out = {}
    for binding in BINDINGS:
        path = tmp_path_factory.mktemp("runner") / f"runner-{binding}.yaml"
        with upstream_agent() as upstream:
            with recording(upstream.url, path) as rec:
                HTTP.get(rec.url + CARD)
                client = A2A(rec.url, binding)
                seen, ids = runner_calls(client)
                assert rec.finish() == path
            contexts = sorted(
                {
                    str(t.context_id)
                    for engine in upstream.agents.values()
                    for t in engine.tasks.all()
                }
            )
        out[binding] = (path, seen, ids, contexts)
    return out


@pytest.mark.parametrize("binding", BINDINGS)
def test_replay_gives_what_the_client_got_live(recorded_runner: Any, binding: str) -> None:
    path, live, live_ids, _ = recorded_runner[binding]
    # Sanity: the live run saw what the kit scripts (so equality below is not vacuous).
    assert dict(live)["returnImmediately"] == {
        "task": {"state": "TASK_STATE_SUBMITTED", "status": [], "artifacts": []}
    }
    polls = [v for k, v in live if k == "GetTask"]
    assert [p["task"]["state"] for p in polls] == [
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_COMPLETED",
    ]
    assert polls[0]["task"]["artifacts"][0]["parts"] == [{"text": "collected 12 items\n"}]
    stream = dict(live)["stream"]
    assert [e[0] for e in stream] == ["task", "status", "artifact", "status"]
    assert stream[-1][1:] == (
        "TASK_STATE_FAILED",
        [{"text": "Checkout failed: deadbee is not a commit in this repository"}],
    )
    assert dict(live)["GetTask unknown"] == {"error": -32001 if binding == "JSONRPC" else 404}
    assert dict(live)["CancelTask terminal"] == {"error": -32002 if binding == "JSONRPC" else 400}
    assert dict(live)["CancelTask working"]["task"]["state"] == "TASK_STATE_CANCELED"
    assert dict(live)["GetTask canceled"]["task"]["state"] == "TASK_STATE_CANCELED"

    with serve_in_thread(path, pace="instant") as replay:
        again, replay_ids = runner_calls(A2A(replay.url, binding))
        assert all(e.matched for e in replay.journal())
    assert again == live
    assert not set(replay_ids) & set(live_ids)  # the replay minted its own ids


@pytest.mark.parametrize("binding", BINDINGS)
def test_replaying_twice_gives_byte_identical_responses(recorded_runner: Any, binding: str) -> None:
    path = recorded_runner[binding][0]
    raws = []
    for _ in range(2):
        with serve_in_thread(path, pace="instant") as replay:
            client = A2A(replay.url, binding)
            runner_calls(client)
        raws.append(client.raw)
    assert len(raws[0]) == 13
    assert raws[0] == raws[1]


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_recording_reads_like_a_hand_written_cassette(
    recorded_runner: Any, binding: str
) -> None:
    path, _, live_ids, contexts = recorded_runner[binding]
    text = path.read_text()
    loaded = load_cassette(path).cassette
    assert loaded.agent.name == "test-runner"
    by_name = {i.name: i for i in loaded.interactions}
    assert list(by_name) == [
        "run-the-tests-at-9f3c2e1",
        "run-the-suite",
        "run-the-tests-at-deadbee",
        "run-the-suite-again",
    ]
    assert by_name["run-the-suite"].match.text == "Run the suite"
    assert all(i.match.text for i in loaded.interactions)
    # No upstream ids: the replay mints its own.
    assert len(contexts) == 4
    for upstream_id in live_ids + contexts:
        assert upstream_id not in text
    assert not UUID.search(text)
    # A polled task is gated by polls, a streamed one paced by ms.
    polled = [s.after for s in by_name["run-the-suite"].reply.task.steps if s.after is not None]
    assert polled and all(a.polls and a.polls >= 1 for a in polled)
    streamed = [s.after for s in by_name["run-the-tests-at-deadbee"].reply.task.steps[1:]]
    assert streamed and all(a is not None and a.ms is not None and not a.polls for a in streamed)
    raw = yaml.safe_load(text)
    steps = {i["name"]: i["reply"]["task"]["steps"] for i in raw["interactions"]}
    assert steps["run-the-suite"][1]["after"]["polls"] == 1
    assert set(steps["run-the-tests-at-deadbee"][1]["after"]) == {"ms"}


# -- follow-ups and subscriptions (code-reviewer) --------------------------------------------------


def reviewer_stream_calls(c: A2A) -> tuple[list[Any], list[str]]:
    """A streamed diff review to INPUT_REQUIRED, then a streamed follow-up on that task; a question;
    a refused content type; GetTask and CancelTask on the finished task."""
    seen: list[Any] = []
    events = c.stream(message("Please review", DIFF))
    seen.append(view_events(events))
    task = events[0][1]["task"]
    follow = c.stream(
        message("main", task_id=task["id"], context_id=task["contextId"], message_id="m2")
    )
    seen.append(view_events(follow))
    seen.append(view_result(*c.get_task(task["id"])))
    seen.append(view_result(*c.cancel(task["id"])))
    seen.append(view_result(*c.send(message("Which languages do you review?"))))
    seen.append(
        view_result(
            *c.send(message("look", {"url": "https://x.example/y.png", "mediaType": "image/png"}))
        )
    )
    return seen, [task["id"], task["contextId"]]


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_streamed_follow_up_replays_on_the_new_task_id(tmp_path: Path, binding: str) -> None:
    path = tmp_path / "reviewer.yaml"
    with upstream_agent(CODE_REVIEWER) as upstream:
        live, live_ids = record(
            path, lambda url: reviewer_stream_calls(A2A(url, binding)), upstream.url
        )
    assert live[0][-1] == (
        "status",
        "TASK_STATE_INPUT_REQUIRED",
        [{"text": "Which base branch should I review this diff against?"}],
    )
    assert live[1][-1][:2] == ("status", "TASK_STATE_COMPLETED")
    assert live[3] == {"error": -32002 if binding == "JSONRPC" else 400}  # TaskNotCancelable
    assert live[5] == {"error": -32005 if binding == "JSONRPC" else 400}  # ContentTypeNotSupported
    text = path.read_text()
    assert not any(i in text for i in live_ids)
    follow_up = interactions(path)[1]
    assert follow_up["match"]["task"] == {
        "state": "TASK_STATE_INPUT_REQUIRED",
        "from": "please-review-a-b",
    }

    with serve_in_thread(path, pace="instant") as replay:
        again, replay_ids = reviewer_stream_calls(A2A(replay.url, binding))
        journal = [(e.operation, e.interaction) for e in replay.journal()]
    assert again == live
    assert replay_ids[0] not in live_ids  # the follow-up named the replay's own task id ...
    assert ("SendStreamingMessage", "main") in journal  # ... and still matched


def reviewer_blocking_calls(c: A2A) -> list[Any]:
    ok, task = c.send(message("Please review", DIFF))
    seen = [view_result(ok, task)]
    seen.append(
        view_result(*c.send(message("main", task_id=task_id_of(ok, task), message_id="m2")))
    )
    return seen


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_blocking_follow_up_replays(tmp_path: Path, binding: str) -> None:
    path = tmp_path / "reviewer.yaml"
    with upstream_agent(CODE_REVIEWER) as upstream:
        live = record(path, lambda url: reviewer_blocking_calls(A2A(url, binding)), upstream.url)
    assert live[1]["task"]["state"] == "TASK_STATE_COMPLETED"
    with serve_in_thread(path, pace="instant") as replay:
        again = reviewer_blocking_calls(A2A(replay.url, binding))
    assert again == live


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_subscription_to_a_working_task_replays(tmp_path: Path, binding: str) -> None:
    def calls(c: A2A) -> list[Any]:
        ok, task = c.send(message("Run the tests at 9f3c2e1"), return_immediately=True)
        return [view_result(ok, task), view_events(c.subscribe(task_id_of(ok, task)))]

    path = tmp_path / "sub.yaml"
    with upstream_agent() as upstream:
        live = record(path, lambda url: calls(A2A(url, binding)), upstream.url)
    assert live[0]["task"]["state"] == "TASK_STATE_SUBMITTED"
    assert [e[0] for e in live[1]] == ["task", "status"] + ["artifact"] * 6 + ["status"]
    with serve_in_thread(path, pace="instant") as replay:
        again = calls(A2A(replay.url, binding))
    assert again == live


def test_a_concurrent_subscription_does_not_duplicate_the_follow_up(tmp_path: Path) -> None:
    path = tmp_path / "concurrent.yaml"
    with upstream_agent(CODE_REVIEWER) as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        client = A2A(rec.url, "JSONRPC")
        events = client.stream(message("Please review", DIFF))
        task_id = events[0][1]["task"]["id"]
        got: list[Any] = []
        thread = threading.Thread(target=lambda: got.extend(client.subscribe(task_id)), daemon=True)
        thread.start()
        wait_for(
            lambda: any(e.operation == "SubscribeToTask" for e in upstream.journal()),
            what="subscription",
        )
        client.send(message("main", task_id=task_id, message_id="m2"))
        thread.join(10)
        assert [e[0] for e in view_events(got)][-1:] == ["status"]
        assert rec.finish() == path
    first, follow_up = (i["reply"]["task"]["steps"] for i in interactions(path))
    assert first[-1]["state"] == "TASK_STATE_INPUT_REQUIRED"  # the review stops for its question
    states = [s["state"] for s in follow_up if "state" in s]
    assert states.count("TASK_STATE_COMPLETED") == 1  # the answer completes it, once
    assert follow_up[-1].get("state") == "TASK_STATE_COMPLETED"
