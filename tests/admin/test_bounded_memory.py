"""Bounded memory whatever the run length: the journal keeps its last N calls and says how many it
dropped, use counts stay exact past it, the inspector page shows a bounded listing, and finished
tasks past the cap are evicted oldest first, a call naming one told so (over real HTTP)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from mockagent.engine.call import Call
from mockagent.engine.journal import Journal
from mockagent.engine.store import memory
from mockagent.server.admin import inspector
from mockagent.server.app import create_app
from mockagent.server.thread import serve_in_thread

AGENT = """\
version: 1
agent:
  name: bounded
  description: A test agent.
  capabilities: {streaming: true}
  skills: [{id: s, name: S, description: A skill.}]
interactions:
  - name: five-times
    match: {text: limited}
    times: 5
    reply: {message: "Limited."}
  - name: hello
    match: {text: hello}
    reply: {message: "Hi."}
  - name: job
    match: {text: {startswith: job}}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
  - name: slow-job
    match: {text: slow}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
            after: {polls: 1}
"""


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "bounded.yaml"
    path.write_text(AGENT)
    return path


def app_client(cassette: Path, **options: Any) -> Iterator[FlaskClient]:
    app = create_app(cassette, **options)
    yield app.test_client()
    app.extensions["mockagent"].close()


def rpc(client: FlaskClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: dict[str, Any] = client.post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()
    return answer


def message(text: str) -> dict[str, Any]:
    return {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}


def test_the_journal_keeps_the_last_n_calls_and_says_how_many_it_dropped(cassette: Path) -> None:
    for client in app_client(cassette, journal_size=3):
        for _ in range(5):
            assert "result" in rpc(client, "SendMessage", message("hello"))
        assert "error" in rpc(client, "SendMessage", message("nobody answers this"))
        listed = client.get("/_mockagent/calls").get_json()
        assert [call["seq"] for call in listed["calls"]] == [4, 5, 6]
        assert listed["dropped"] == 3
        assert [c["matched"] for c in listed["calls"]] == [True, True, False]


def test_counts_stay_exact_past_the_journal_size(cassette: Path) -> None:
    for client in app_client(cassette, journal_size=2):
        for _ in range(5):
            assert rpc(client, "SendMessage", message("limited"))["result"]["message"]
        # `times: 5` is used up, although the journal keeps only the last of its calls
        assert "error" in rpc(client, "SendMessage", message("limited"))
        engine = client.application.extensions["mockagent"].agents[""]
        used = engine.interaction("five-times")
        assert (used.uses, used.answered, len(used.calls)) == (5, 5, 1)
        listed = client.get("/_mockagent/interactions").get_json()["interactions"]
        assert {v["name"]: v["uses"] for v in listed}["five-times"] == 5


def test_the_inspector_shows_a_bounded_listing_and_what_the_journal_dropped(
    cassette: Path,
) -> None:
    shown = inspector.SHOWN_CALLS
    for client in app_client(cassette, journal_size=shown + 10):
        for _ in range(shown + 25):
            rpc(client, "SendMessage", message("hello"))
        page = client.get("/_mockagent/").get_data(as_text=True)
        journal = page.split('<section id="journal">', 1)[1]
        assert journal.count('<tr class="call') == shown  # not the 510 the journal keeps
        assert (
            "15 older calls dropped (journal keeps the last 510 within about 64 MB; "
            "--journal-size)."
        ) in journal
        assert "10 earlier calls not shown" in journal
        # the latest call is the one shown last
        assert f"<td>{shown + 25}</td>" in journal


def test_the_inspector_says_nothing_was_dropped_when_nothing_was(cassette: Path) -> None:
    for client in app_client(cassette):
        rpc(client, "SendMessage", message("hello"))
        page = client.get("/_mockagent/").get_data(as_text=True)
        assert "dropped" not in page.split('<section id="journal">', 1)[1]


def post_rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).encode()
    request = urllib.request.Request(
        url, body, {"Content-Type": "application/json", "A2A-Version": "1.0"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.load(response)
    return answer


def test_finished_tasks_past_the_cap_are_evicted_oldest_first(cassette: Path) -> None:
    with serve_in_thread(cassette, task_cap=3, pace="instant") as server:
        url = server.agent_url()
        slow = {**message("slow"), "configuration": {"returnImmediately": True}}
        waiting = post_rpc(url, "SendMessage", slow)["result"]["task"]  # waits for a poll
        ids = [
            post_rpc(url, "SendMessage", message(f"job {i}"))["result"]["task"]["id"]
            for i in range(4)
        ]
        # Three tasks are kept: the two newest finished ones, and the unfinished one, which goes
        # only when no task has finished.
        for task_id in ids[:2]:
            error = post_rpc(url, "GetTask", {"id": task_id})["error"]
            assert error["code"] == -32001  # TaskNotFound
            assert error["message"] == (
                f"Task {task_id} was evicted: more than 3 tasks; raise --task-cap"
            )
        for task_id in ids[2:]:
            task = post_rpc(url, "GetTask", {"id": task_id})["result"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        listed = post_rpc(url, "ListTasks", {})["result"]["tasks"]
        assert sorted(t["id"] for t in listed) == sorted([waiting["id"], *ids[2:]])
        subscribed = post_rpc(url, "SubscribeToTask", {"id": ids[0]})["error"]
        assert "was evicted" in subscribed["message"]
        # The waiting task finishes now (its poll); a new task evicts the oldest finished one.
        assert post_rpc(url, "GetTask", {"id": waiting["id"]})["result"]["status"]["state"] == (
            "TASK_STATE_COMPLETED"
        )
        post_rpc(url, "SendMessage", message("job 5"))
        assert "was evicted" in post_rpc(url, "GetTask", {"id": ids[2]})["error"]["message"]
        assert "result" in post_rpc(url, "GetTask", {"id": waiting["id"]})


def test_unfinished_tasks_are_evicted_when_none_has_finished(
    cassette: Path, caplog: pytest.LogCaptureFixture
) -> None:
    slow = {**message("slow"), "configuration": {"returnImmediately": True}}
    for client in app_client(cassette, task_cap=10):
        ids = [rpc(client, "SendMessage", slow)["result"]["task"]["id"] for _ in range(200)]
        engine = client.application.extensions["mockagent"].agents[""]
        assert len(engine.tasks) == 10  # all 200 were kept before
        kept = {t["id"] for t in rpc(client, "ListTasks", {})["result"]["tasks"]}
        assert kept == set(ids[-10:])
        error = rpc(client, "GetTask", {"id": ids[0]})["error"]
        assert error["code"] == -32001
        assert error["message"] == (
            f"Task {ids[0]} was evicted unfinished (working): more than 10 tasks "
            "and none finished; raise --task-cap"
        )
        # the log says so, for the 1st, 2nd, 4th… such task: never silent, never a flood
        warned = [r.getMessage() for r in caplog.records if "evicted unfinished" in r.getMessage()]
        assert len(warned) == 8  # 1, 2, 4, … 128 of 190
        assert warned[0].startswith(f"mockagent: task {ids[0]} evicted unfinished")


def test_the_admin_task_listing_is_bounded(cassette: Path) -> None:
    for client in app_client(cassette):
        for i in range(1_005):
            rpc(client, "SendMessage", message(f"job {i}"))
        listed = client.get("/_mockagent/tasks").get_json()
        assert (len(listed["tasks"]), listed["more"]) == (1_000, 5)
        newest = rpc(client, "ListTasks", {"pageSize": 1})["result"]["tasks"][0]["id"]
        assert newest in {t["id"] for t in listed["tasks"]}
        two = client.get("/_mockagent/tasks?limit=2").get_json()
        assert (len(two["tasks"]), two["more"]) == (2, 1_003)
        assert two["tasks"] == listed["tasks"][-2:]
        assert client.get("/_mockagent/tasks?limit=0").get_json()["more"] == 1_005
        bad = client.get("/_mockagent/tasks?limit=-1")
        assert bad.status_code == 400 and "limit must be a whole number" in bad.get_data(True)


def test_an_id_never_seen_is_not_said_to_be_evicted(cassette: Path) -> None:
    for client in app_client(cassette, task_cap=1):
        rpc(client, "SendMessage", message("job 1"))
        error = rpc(client, "GetTask", {"id": "no-such-task"})["error"]
        assert error["message"] == "Task no-such-task not found"  # nothing was evicted yet
        rpc(client, "SendMessage", message("job 2"))
        error = rpc(client, "GetTask", {"id": "no-such-task"})["error"]
        assert "1 tasks were evicted" in error["message"]


def test_sizes_below_their_minimum_are_refused(cassette: Path) -> None:
    with pytest.raises(ValueError, match="journal keeps 0 calls or more"):
        create_app(cassette, journal_size=-1)
    with pytest.raises(ValueError, match="task cap must keep 1 task or more"):
        create_app(cassette, task_cap=0)


def test_a_reset_keeps_the_bounds_and_forgets_what_was_dropped(cassette: Path) -> None:
    for client in app_client(cassette, journal_size=2, task_cap=1):
        for text in ("job 1", "job 2", "hello"):
            rpc(client, "SendMessage", message(text))
        assert client.get("/_mockagent/calls").get_json()["dropped"] == 1
        assert client.post("/_mockagent/reset").status_code == 200
        assert client.get("/_mockagent/calls").get_json() == {"calls": [], "dropped": 0}
        first = rpc(client, "SendMessage", message("job 1"))["result"]["task"]["id"]
        for text in ("job 2", "hello", "hello"):
            rpc(client, "SendMessage", message(text))
        listed = client.get("/_mockagent/calls").get_json()
        assert (len(listed["calls"]), listed["dropped"]) == (2, 2)
        assert "was evicted" in rpc(client, "GetTask", {"id": first})["error"]["message"]


def test_the_inspector_shows_the_last_tasks_with_a_note(cassette: Path) -> None:
    shown = inspector.SHOWN_TASKS
    slow = {**message("slow"), "configuration": {"returnImmediately": True}}
    for client in app_client(cassette):
        ids = [rpc(client, "SendMessage", slow)["result"]["task"]["id"] for _ in range(shown + 5)]
        page = client.get("/_mockagent/").get_data(as_text=True)
        tasks = page.split('<section id="tasks">', 1)[1].split("</section>", 1)[0]
        assert tasks.count('<article class="task"') == shown
        assert "5 earlier tasks not shown" in tasks
        assert f'id="task-{ids[-1]}"' in tasks and f'id="task-{ids[4]}"' not in tasks


# -- the journal's byte budget: large calls cannot take more than it, counts stay exact ----------


def test_a_large_call_is_cut_in_the_journal_with_a_marker_and_still_matched(
    cassette: Path,
) -> None:
    big = "job " + "x" * 300_000  # matched by `startswith: job`, on the whole text
    for client in app_client(cassette):
        assert rpc(client, "SendMessage", message(big))["result"]["task"]
        listed = client.get("/_mockagent/calls").get_json()["calls"]
        assert listed[0]["interaction"] == "job"
        text = listed[0]["params"]["message"]["parts"][0]["text"]
        assert text.startswith("job xxx") and len(text) < 70_000
        assert text.endswith("more characters cut from the journal]")
        cut = int(text.rsplit("[", 1)[1].split()[0].replace(",", ""))
        assert len(text.rsplit("…", 1)[0]) + cut == len(big)  # the marker says what was cut
        engine = client.application.extensions["mockagent"].agents[""]
        assert engine.interaction("job").answered == 1


def test_a_small_call_is_kept_whole(cassette: Path) -> None:
    for client in app_client(cassette):
        params = message("hello")
        rpc(client, "SendMessage", params)
        listed = client.get("/_mockagent/calls").get_json()["calls"]
        assert listed[0]["params"]["message"]["parts"] == params["message"]["parts"]


def test_many_items_are_cut_to_a_marker_item() -> None:
    journal = Journal()
    parts = [{"text": "a"} for _ in range(20_000)]
    params = {"message": {"messageId": "m", "parts": parts}}
    entry = journal.record(Call("SendMessage", params))
    kept = entry.params["message"]["parts"]
    assert 100 < len(kept) < 2_000
    assert kept[-1].startswith("[") and kept[-1].endswith("more items cut from the journal]")
    assert len(params["message"]["parts"]) == 20_000  # the call itself is untouched


def test_the_journal_drops_its_oldest_calls_past_its_byte_budget() -> None:
    journal = Journal(size=10_000, budget=1_000_000)
    for _ in range(100):
        journal.record(Call("SendMessage", message("x" * 60_000)), interaction="hello")
    # each entry keeps about 64 KB of its call: 15 fit in 1 MB, the older ones are dropped
    assert 10 <= len(journal.entries) <= 16
    assert journal.dropped == 100 - len(journal.entries)
    assert journal.entries[-1].seq == 100
    assert journal.answered("hello") == 100  # counts stay exact


def test_the_newest_call_is_kept_whatever_the_budget() -> None:
    journal = Journal(size=10, budget=1)
    journal.record(Call("SendMessage", message("hello")))
    assert [e.seq for e in journal.entries] == [1]


def test_the_served_journal_keeps_within_its_budget(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "JOURNAL_BYTES", 2_000_000)
    for client in app_client(cassette):
        for i in range(60):
            rpc(client, "SendMessage", message(f"job {i} " + "y" * 200_000))
        answer = client.get("/_mockagent/calls")
        listed = answer.get_json()
        assert listed["dropped"] > 20 and len(listed["calls"]) + listed["dropped"] == 60
        assert len(answer.get_data()) < 3_000_000  # 12 MB before the budget
        assert listed["calls"][-1]["params"]["message"]["parts"][0]["text"].startswith("job 59 ")


def test_unmatched_large_calls_keep_the_inspector_page_small(cassette: Path) -> None:
    for client in app_client(cassette):
        for _ in range(20):
            assert "error" in rpc(client, "SendMessage", message("z" * 500_000))
        page = client.get("/_mockagent/").get_data(as_text=True)
        assert len(page) < 500_000  # 20 MB before: each report quoted the whole text
        assert page.count('<pre class="near-miss">') == 20
        assert "(499,000 more characters)" in page
        near = client.get("/_mockagent/near-misses").get_json()["nearMisses"][0]
        assert len(json.dumps(near)) < 100_000


def test_the_inspector_cuts_a_long_report_in_its_row() -> None:
    assert inspector.shown("r" * 10) == "r" * 10
    cut = inspector.shown("r" * 10_000)
    assert cut.startswith("r" * inspector.SHOWN_TEXT)
    assert f"({10_000 - inspector.SHOWN_TEXT:,} characters more;" in cut


def test_tasks_past_their_bytes_of_client_messages_are_evicted(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "TASK_BYTES", 2 * 2**20)
    for client in app_client(cassette):
        ids = [
            rpc(client, "SendMessage", message(f"job {i} " + "x" * 500_000))["result"]["task"]["id"]
            for i in range(10)
        ]
        engine = client.application.extensions["mockagent"].agents[""]
        assert len(engine.tasks) == 4  # 10 before: 4 of 500 KB fit in 2 MB
        error = rpc(client, "GetTask", {"id": ids[0]})["error"]
        assert error["message"] == (
            f"Task {ids[0]} was evicted: the tasks held more than 2 MB of client messages "
            "(a fixed budget)"
        )
        task = rpc(client, "GetTask", {"id": ids[-1]})["result"]
        assert len(task["history"][0]["parts"][0]["text"]) == 500_006  # kept whole


def test_the_task_a_large_message_goes_to_is_kept(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "TASK_BYTES", 100_000)
    for client in app_client(cassette):
        rpc(client, "SendMessage", message("job small"))
        task = rpc(client, "SendMessage", message("job " + "x" * 300_000))["result"]["task"]
        engine = client.application.extensions["mockagent"].agents[""]
        assert [t.id for t in engine.tasks.all()] == [task["id"]]


def test_a_deeply_nested_call_is_journaled() -> None:
    def nested(depth: int) -> list[Any]:
        deep: list[Any] = []
        for _ in range(depth):
            deep = [deep]
        return deep

    journal = Journal()
    within = nested(500)
    small = journal.record(Call("SendMessage", {"metadata": {"x": within}}))
    assert small.params["metadata"]["x"] is within  # within the size: kept as it is
    # deeper than Python's stack, and past the size: measured without recursion, and cut
    big = journal.record(Call("SendMessage", {"metadata": {"x": nested(5_000)}}))
    assert big.params["…"].endswith("bytes, nested too deep, cut from the journal]")
