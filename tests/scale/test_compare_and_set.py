"""The shared store without a lock: a call reads what it names, is computed in its process and is
written by one script that refuses it when another process changed what it assumed (a task's
version, a use past `times`, the counters, a reset). A refused call is computed again; past the
wait bound it is Unavailable; a stalled call never overwrites what another process wrote."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
import redis

from mockagent.engine.store.client import Client
from mockagent.engine.store.factory import store_from_url
from mockagent.engine.store.redis import RedisStore
from mockagent.errors import StoreError
from mockagent.server.app import create_app
from mockagent.server.thread import ServerThread
from tests.helpers.engine_calls import send_call
from tests.helpers.kit_conversation import HEADERS, message
from tests.helpers.paths import KIT
from tests.helpers.shared_store import ONCE, client, rpc, said

RUNNER = "mockagent:test-runner:test-runner:"


def behind_the_stores_back(
    monkeypatch: pytest.MonkeyPatch, url: str, *command: Any, every: bool = False
) -> None:
    """Another client sends `command` to Redis as this process's next write (`every`: each write)
    is about to go: what the write carries was read before it."""
    commit = RedisStore.commit
    pending = [command]

    def meddled(self: RedisStore, counters: Any) -> None:
        if pending:
            with redis.Redis.from_url(url) as other:
                other.execute_command(*(pending[0] if every else pending.pop()))
        commit(self, counters)

    monkeypatch.setattr(RedisStore, "commit", meddled)


def stored(url: str) -> dict[bytes, Any]:
    """Every data key of the store but task versions, serialized."""
    with redis.Redis.from_url(url) as r:
        return {key: r.dump(key) for key in r.keys("mockagent:*") if not key.endswith(b"versions")}


@pytest.fixture
def waited(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The names of the commands of each round trip to Redis from now on (a script, with every
    command it runs on the server, is one command)."""
    sent: list[list[str]] = []
    send = Client._send

    def counted(self: Client, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
        sent.append([str(command[0]) for command in commands])
        return send(self, commands)

    monkeypatch.setattr(Client, "_send", counted)
    return sent


def test_a_call_reads_the_task_it_names_and_is_written_by_one_script(redis_url, waited):
    c = client(store_from_url(redis_url))
    other = client(store_from_url(redis_url, join=True))
    task = rpc(c, "test-runner", "SendMessage", {"message": message("Run the tests at 9f3c2e1")})[
        "result"
    ]["task"]
    waited.clear()
    assert rpc(other, "test-runner", "GetTask", {"id": task["id"]})["result"]["id"] == task["id"]
    # A process with no copy of the task: the counters, the task, its version and its polls in
    # one round trip; the write (the poll counted, the call journaled, the task checked) in one
    # script, whose answer is waited for: a refused write is computed again.
    assert waited == [["HGETALL", "HGET", "HGET", "HGET"], ["EVALSHA"]]
    waited.clear()
    assert rpc(c, "test-runner", "GetTask", {"id": task["id"]})["result"]["id"] == task["id"]
    assert waited == [["EVALSHA"]]  # the process that wrote it has a copy: the script checks it
    waited.clear()
    rpc(c, "test-runner", "SendMessage", {"message": message("Run the tests at 9f3c2e1")})
    assert waited == [["EVALSHA"]]  # a new task: nothing to read, the counters as last written
    with redis.Redis.from_url(redis_url) as r:
        assert r.hget(RUNNER + "polls", task["id"]) == b"2"  # a poll on each server
        assert r.hget(RUNNER + "versions", task["id"]) == b"1"  # a poll is no new version


def test_a_use_past_times_behind_the_stores_back_is_matched_again(redis_url, tmp_path, monkeypatch):
    cassette = tmp_path / "once.yaml"
    cassette.write_text(ONCE)
    c = client(store_from_url(redis_url), cassette)
    # Used up by another client after this call read its count (0) and matched `first`.
    behind_the_stores_back(monkeypatch, redis_url, "HINCRBY", "mockagent:once:once:uses", 0, 1)
    assert said(c) == "later answer"  # the script refused `first`: matched again, as one agent
    with redis.Redis.from_url(redis_url) as r:
        assert r.hgetall("mockagent:once:once:uses") == {b"0": b"1", b"1": b"1"}  # `first` not 2
        assert r.llen("mockagent:once:once:journal") == 1  # the refused try left no entry


def test_a_task_changed_behind_the_stores_back_is_read_again(redis_url, monkeypatch):
    c = client(store_from_url(redis_url))
    immediate = {"returnImmediately": True}
    params = {"message": message("Run the tests at 9f3c2e1"), "configuration": immediate}
    task = rpc(c, "test-runner", "SendMessage", params)["result"]["task"]
    behind_the_stores_back(monkeypatch, redis_url, "HINCRBY", RUNNER + "versions", task["id"], 1)
    answer = rpc(c, "test-runner", "GetTask", {"id": task["id"]})  # counts a poll: writes the task
    assert answer["result"]["id"] == task["id"]
    with redis.Redis.from_url(redis_url) as r:
        assert r.hget(RUNNER + "versions", task["id"]) == b"3"  # made, moved behind, polled
        assert r.llen(RUNNER + "journal") == 2  # the SendMessage and one GetTask


def test_a_call_refused_until_the_wait_bound_is_unavailable_and_saves_nothing(
    redis_url, monkeypatch
):
    monkeypatch.setenv("MOCKAGENT_STORE_WAIT_MS", "300")
    c = client(store_from_url(redis_url))
    immediate = {"returnImmediately": True}
    params = {"message": message("Run the tests at 9f3c2e1"), "configuration": immediate}
    task = rpc(c, "test-runner", "SendMessage", params)["result"]["task"]
    versions = (RUNNER + "versions", task["id"], 1)
    behind_the_stores_back(monkeypatch, redis_url, "HINCRBY", *versions, every=True)
    before = stored(redis_url)
    started = time.monotonic()
    answer = rpc(c, "test-runner", "GetTask", {"id": task["id"]})
    assert answer["error"]["code"] == -32603  # Unavailable in JSON-RPC: try again
    assert "a task of this call was changed in the store" in answer["error"]["message"]
    assert time.monotonic() - started >= 0.3  # computed again and again until the bound
    assert stored(redis_url) == before  # nothing written: not the task, the journal, the counters


def test_a_stalled_call_never_overwrites_what_another_process_wrote(redis_url):
    engine = (
        create_app(KIT, store=store_from_url(redis_url), pace="instant")
        .extensions["mockagent"]
        .agents["test-runner"]
    )
    other = client(store_from_url(redis_url, join=True))
    with pytest.raises(StoreError, match="the store.s counters moved since this process read"):
        with engine.locked():  # computed, then stalled before its write while another wrote
            mine = engine.handle(send_call("Run the suite")).task.id
            theirs = rpc(other, "test-runner", "SendMessage", {"message": message("Run")})
    assert theirs["result"]["task"]["id"] == mine  # the same id: so only one may be kept
    listed = rpc(other, "test-runner", "ListTasks", {})["result"]
    assert [task["id"] for task in listed["tasks"]] == [mine]  # theirs, not overwritten
    assert listed["tasks"][0]["history"][0]["parts"] == [{"text": "Run"}]
    with engine.locked():  # and the engine goes on from what the store has
        assert [entry.operation for entry in engine.journal.entries] == [
            "SendMessage",
            "ListTasks",
        ]
    again = engine.handle(send_call("Run the suite")).task.id  # a fresh id past the gap
    assert again not in (mine, theirs["result"]["task"]["id"])


def test_counters_that_moved_are_reserved_and_the_call_computed_again_from_them(redis_url):
    """Two servers in turn: each finds the counters moved by the other, so the script reserves
    from where they are and the call is rendered again with those bases: the ids and timestamps
    are those one agent would give (`test_two_servers_on_one_store_answer_as_one` compares the
    whole conversation); here, the reservation and the journal."""
    a = client(store_from_url(redis_url))
    b = client(store_from_url(redis_url, join=True))
    ids = []
    for server in (a, b, a, b):
        sent = rpc(server, "test-runner", "SendMessage", {"message": message("Run the suite")})
        ids.append(sent["result"]["task"]["id"])
    assert len(set(ids)) == 4
    with redis.Redis.from_url(redis_url) as r:
        assert r.zcard(RUNNER + "order") == 4 and r.llen(RUNNER + "journal") == 4
        assert int(r.hget(RUNNER + "head", "made")) == 4


def test_a_write_refused_by_a_reset_is_computed_after_it(redis_url, monkeypatch):
    c = client(store_from_url(redis_url))
    rpc(c, "test-runner", "SendMessage", {"message": message("Run the suite")})
    behind_the_stores_back(monkeypatch, redis_url, "HINCRBY", RUNNER + "head", "generation", 1)
    sent = rpc(c, "test-runner", "SendMessage", {"message": message("Run the suite")})
    assert sent["result"]["task"]["id"]
    with redis.Redis.from_url(redis_url) as r:
        assert r.hget(RUNNER + "head", "generation") == b"2"  # read again: not written back as 1
        assert r.llen(RUNNER + "journal") == 2  # the refused try left no entry


FIFTY = """\
version: 1
protocol: a2a
agent:
  name: fifty
  description: d
  version: '1'
  skills: [{id: s, name: s, description: d, tags: [t]}]
interactions:
  - name: first fifty
    times: 50
    match: {text: go}
    reply: {task: {steps: [{state: TASK_STATE_COMPLETED}]}}
  - name: the rest
    match: {text: go}
    reply: {message: used up}
"""


def test_exact_times_and_one_journal_sequence_from_two_servers_at_once(redis_url, tmp_path):
    """100 calls from 8 threads on two servers (engines of their own, as two hosts): exactly 50
    answered by the `times: 50` interaction, task ids never twice, the journal numbered without a
    gap or a duplicate."""
    cassette = tmp_path / "fifty.yaml"
    cassette.write_text(FIFTY)
    apps = [create_app(cassette, store=store_from_url(redis_url, join=i > 0)) for i in range(2)]
    servers = [ServerThread(app).start() for app in apps]
    answers: list[Any] = []

    def calls(port: int, n: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as c:
            for _ in range(n):
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
                body["params"] = {"message": message("go")}
                answers.append(c.post("/", json=body, headers=HEADERS).json())

    threads = [
        threading.Thread(target=calls, args=(servers[i % 2].port, 13 if i < 4 else 12))
        for i in range(8)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert [a for a in answers if "result" not in a] == []
        tasks = [a["result"]["task"]["id"] for a in answers if "task" in a["result"]]
        assert len(answers) == 100 and len(tasks) == 50 and len(set(tasks)) == 50
        with redis.Redis.from_url(redis_url) as r:
            assert r.hgetall("mockagent:fifty:fifty:uses") == {b"0": b"50", b"1": b"50"}
            journal = r.lrange("mockagent:fifty:fifty:journal", 0, -1)
        numbers = sorted(int(entry.split(b" ", 1)[0]) for entry in journal)
        assert numbers == list(range(1, 101))  # every call once, none lost to a refused try
    finally:
        for server in servers:
            server.stop()


def test_a_stale_copy_is_found_out_by_a_call_that_only_reads_the_task(redis_url):
    """A process answers a call on a task from its copy, and the script checks the copy's
    version: another server added a push config meanwhile, so the listing is computed again from
    the task as it is (from the stale copy, it listed none)."""
    a = client(store_from_url(redis_url))
    b = client(store_from_url(redis_url, join=True))
    immediate = {"returnImmediately": True}
    params = {"message": message("Run the tests at 9f3c2e1"), "configuration": immediate}
    task_id = rpc(a, "test-runner", "SendMessage", params)["result"]["task"]["id"]
    hook = {"taskId": task_id, "url": "http://127.0.0.1:9/hook"}
    assert "result" in rpc(b, "test-runner", "CreateTaskPushNotificationConfig", hook)
    listed = rpc(a, "test-runner", "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert [config["url"] for config in listed["result"]["configs"]] == [hook["url"]]


POLLED = """\
version: 1
protocol: a2a
agent:
  name: polled
  description: d
  version: '1'
  skills: [{id: s, name: s, description: d, tags: [t]}]
interactions:
  - name: slow
    match: {text: go}
    reply:
      task:
        steps:
          - {state: TASK_STATE_SUBMITTED}
""" + "".join(
    f"          - {{state: TASK_STATE_WORKING, message: step {n}, after: {{polls: 3}}}}\n"
    for n in range(1, 9)
)


def test_polls_from_two_servers_at_once_advance_the_script_once_per_poll(redis_url, tmp_path):
    """A task whose steps each wait for 3 polls: 12 GetTasks at once, from 6 threads on two
    servers, show its 4th step, as 12 polls one after another do, whichever server counted which
    poll (a poll counted on a count another server had moved meanwhile showed its step late)."""
    cassette = tmp_path / "polled.yaml"
    cassette.write_text(POLLED)
    apps = [create_app(cassette, store=store_from_url(redis_url, join=i > 0)) for i in range(2)]
    servers = [ServerThread(app).start() for app in apps]
    try:
        first = f"http://127.0.0.1:{servers[0].port}/"
        params = {"message": message("go"), "configuration": {"returnImmediately": True}}
        sent = httpx.post(first, json=call("SendMessage", params), headers=HEADERS).json()
        task_id = sent["result"]["task"]["id"]

        def polls(port: int) -> None:
            with httpx.Client(timeout=60) as c:
                for _ in range(2):
                    get = call("GetTask", {"id": task_id})
                    c.post(f"http://127.0.0.1:{port}/", json=get, headers=HEADERS)

        threads = [threading.Thread(target=polls, args=(servers[i % 2].port,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        listed = httpx.get(f"http://127.0.0.1:{servers[1].port}/_mockagent/tasks").json()
        (task,) = listed["tasks"]
        assert task["polls"] == 0  # 12 polls: the 4th step just shown
        with redis.Redis.from_url(redis_url) as r:
            stored = json.loads(r.hget("mockagent:polled:polled:tasks", task_id))
        assert stored["status_message"]["parts"] == [{"text": "step 4"}]
    finally:
        for server in servers:
            server.stop()


def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def test_past_the_task_cap_the_task_that_finished_longest_ago_is_evicted(redis_url):
    """--task-cap holds on a shared store too: Redis keeps at most the cap, evicting the task
    that finished longest ago (with its version, polls and place in the order), else the oldest."""
    app = create_app(KIT, store=store_from_url(redis_url), pace="instant", task_cap=2)
    c = app.test_client()
    immediate = {"returnImmediately": True}
    waiting = {"message": message("Run the tests at 9f3c2e1"), "configuration": immediate}
    first = rpc(c, "test-runner", "SendMessage", waiting)["result"]["task"]["id"]  # unfinished
    done = [
        rpc(c, "test-runner", "SendMessage", {"message": message("Run the suite")})["result"][
            "task"
        ]["id"]
        for _ in range(3)
    ]
    listed = [t["id"] for t in rpc(c, "test-runner", "ListTasks", {})["result"]["tasks"]]
    assert sorted(listed) == sorted([first, done[2]])  # the finished ones went first
    with redis.Redis.from_url(redis_url) as r:
        assert r.hlen(RUNNER + "tasks") == r.hlen(RUNNER + "versions") == 2
        assert r.zrange(RUNNER + "order", 0, -1) == [first.encode(), done[2].encode()]
        assert r.lrange(RUNNER + "finished", 0, -1) == [done[2].encode()]
    gone = rpc(c, "test-runner", "GetTask", {"id": done[0]})
    assert gone["error"]["code"] == -32001  # TaskNotFound, saying why, as in memory
    assert (
        f"Task {done[0]} was evicted: more than 2 tasks; raise --task-cap"
        in (gone["error"]["message"])
    )
    kept = rpc(c, "test-runner", "GetTask", {"id": "never-made"})["error"]["message"]
    assert "2 tasks were evicted" in kept and "may have been one of them" in kept


def test_calls_that_wait_in_one_process_are_written_together(redis_url, waited):
    """Group commit: 8 threads calling one server at once share write scripts (fewer than one
    a call), and each call still gets its own task, kept and journaled."""
    server = ServerThread(create_app(KIT, store=store_from_url(redis_url), pace="instant")).start()
    ids: list[str] = []

    def calls() -> None:
        with httpx.Client(timeout=60) as c:
            for _ in range(20):
                url = f"http://127.0.0.1:{server.port}/test-runner/"
                sent = c.post(url, json=call("SendMessage", {"message": message("Run")}))
                ids.append(sent.json()["result"]["task"]["id"])

    try:
        waited.clear()
        threads = [threading.Thread(target=calls) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        scripts = sum(commands.count("EVALSHA") for commands in waited)
        assert len(ids) == len(set(ids)) == 160
        assert scripts < 160, scripts  # some calls were written together
        with redis.Redis.from_url(redis_url) as r:
            assert r.zcard(RUNNER + "order") == 160 and r.llen(RUNNER + "journal") == 160
    finally:
        server.stop()
