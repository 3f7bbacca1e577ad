"""Two servers sharing one Redis store answer as one agent: tasks, polls, uses, ids, journal."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
import redis
from click.testing import CliRunner
from flask.testing import FlaskClient

from mockagent.cli.main import main
from mockagent.engine.store.factory import store_from_url
from mockagent.engine.store.lease import Client
from mockagent.engine.store.redis import RedisStore
from mockagent.errors import StoreError
from mockagent.server.app import create_app
from tests.helpers.engine_calls import send_call
from tests.helpers.kit_conversation import HEADERS, conversation, message
from tests.helpers.paths import KIT
from tests.helpers.redis_server import start_redis


def client(store: Any, source: Path = KIT) -> FlaskClient:
    return create_app(source, store=store, pace="instant").test_client()


def rpc(c: FlaskClient, agent: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return c.post(f"/{agent}/" if agent else "/", json=body, headers=HEADERS).get_json()


def test_replay_through_redis_is_byte_identical_to_memory(redis_url):
    in_memory = conversation(client(None))
    shared = conversation(client(store_from_url(redis_url)))
    assert shared == in_memory


def test_a_store_on_a_unix_socket_and_a_database_of_its_own(tmp_path):
    process, url = start_redis(unix=str(tmp_path / "redis.sock"))
    try:
        in_memory = conversation(client(None))
        assert conversation(client(store_from_url(f"{url}?db=3"))) == in_memory
        with redis.Redis.from_url(f"{url}?db=3") as db3, redis.Redis.from_url(url) as db0:
            assert db3.exists("mockagent:test-runner:test-runner:tasks") and db0.dbsize() == 0
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_two_servers_on_one_store_answer_as_one(redis_url):
    alone = conversation(client(None))
    first = client(store_from_url(redis_url))
    second = client(store_from_url(redis_url, join=True))  # a second host joins the running one
    assert conversation(first, second) == alone


def test_a_task_made_on_one_server_is_polled_on_the_other(redis_url):
    a, b = client(store_from_url(redis_url)), client(store_from_url(redis_url, join=True))
    task = rpc(
        a,
        "test-runner",
        "SendMessage",
        {
            "message": message("Run the tests at 9f3c2e1"),
            "configuration": {"returnImmediately": True},
        },
    )["result"]["task"]
    states = [task["status"]["state"]]
    for server in (b, a, b, a):
        states.append(
            rpc(server, "test-runner", "GetTask", {"id": task["id"]})["result"]["status"]["state"]
        )
    assert states[0] == "TASK_STATE_SUBMITTED" and states[-1] == "TASK_STATE_COMPLETED"
    assert "TASK_STATE_WORKING" in states  # the polls gates counted polls from both servers
    listed = rpc(b, "test-runner", "ListTasks", {})["result"]
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]


def test_ids_are_never_minted_twice_across_servers(redis_url):
    a, b = client(store_from_url(redis_url)), client(store_from_url(redis_url, join=True))
    ids = set()
    for i in range(10):
        server = (a, b)[i % 2]
        result = rpc(server, "test-runner", "SendMessage", {"message": message("Run the suite")})[
            "result"
        ]
        ids.add(result["task"]["id"])
    assert len(ids) == 10


def test_the_journal_and_uses_are_shared(redis_url):
    a = create_app(KIT, store=store_from_url(redis_url), pace="instant")
    b = create_app(KIT, store=store_from_url(redis_url, join=True), pace="instant")
    rpc(a.test_client(), "code-reviewer", "SendMessage", {"message": message("what does this do?")})
    rpc(
        b.test_client(),
        "code-reviewer",
        "SendMessage",
        {"message": message("no match here at all")},
    )
    for app in (a, b):
        engine = app.extensions["mockagent"].agents["code-reviewer"]
        with engine.locked():
            entries = engine.journal.entries
            uses = list(engine.uses)
        assert [e.operation for e in entries] == ["SendMessage", "SendMessage"]
        assert [e.seq for e in entries] == [1, 2]
        assert entries[1].report is not None and "No interaction" in entries[1].report.text()
        assert sum(uses) == 1


def test_the_agents_of_a_folder_number_their_calls_in_one_sequence(redis_url):
    a = create_app(KIT, store=store_from_url(redis_url), pace="instant")
    b = create_app(KIT, store=store_from_url(redis_url, join=True), pace="instant")
    question = {"message": message("what does this do?")}
    rpc(a.test_client(), "code-reviewer", "SendMessage", question)
    rpc(b.test_client(), "test-runner", "SendMessage", {"message": message("Run the suite")})
    rpc(b.test_client(), "code-reviewer", "SendMessage", question)
    for app in (a, b):
        agents = app.extensions["mockagent"].agents
        seqs = {}
        for name in ("code-reviewer", "test-runner"):
            with agents[name].locked():
                seqs[name] = [e.seq for e in agents[name].journal.entries]
        assert seqs == {"code-reviewer": [1, 3], "test-runner": [2]}  # each counted alone: [1, 2]
    restarted = create_app(KIT, store=store_from_url(redis_url), pace="instant")  # not joining
    rpc(restarted.test_client(), "test-runner", "SendMessage", {"message": message("Run it")})
    runner = restarted.extensions["mockagent"].agents["test-runner"]
    with runner.locked():
        assert [e.seq for e in runner.journal.entries] == [1]


def test_a_reset_on_one_server_forgets_on_the_other(redis_url):
    a = create_app(KIT, store=store_from_url(redis_url), pace="instant")
    b = client(store_from_url(redis_url, join=True))
    task = rpc(
        a.test_client(), "test-runner", "SendMessage", {"message": message("Run the suite")}
    )["result"]["task"]
    assert "result" in rpc(b, "test-runner", "GetTask", {"id": task["id"]})
    a.extensions["mockagent"].reset()
    error = rpc(b, "test-runner", "GetTask", {"id": task["id"]})["error"]
    assert error["code"] == -32001  # TaskNotFound
    again = rpc(b, "test-runner", "SendMessage", {"message": message("Run the suite")})["result"][
        "task"
    ]
    assert again["id"] == task["id"]  # the ids start over, as after a reset in one process


def test_a_fresh_server_wipes_what_an_earlier_run_left(redis_url):
    a = client(store_from_url(redis_url))
    task = rpc(a, "test-runner", "SendMessage", {"message": message("Run the suite")})["result"][
        "task"
    ]
    joined = client(store_from_url(redis_url, join=True))
    assert "result" in rpc(joined, "test-runner", "GetTask", {"id": task["id"]})
    fresh = client(store_from_url(redis_url))
    assert rpc(fresh, "test-runner", "GetTask", {"id": task["id"]})["error"]["code"] == -32001


def test_an_unknown_store_url_is_refused():
    with pytest.raises(ValueError, match="redis://HOST:PORT/DB"):
        store_from_url("postgres://x")


@pytest.mark.parametrize("scheme", ["redis", "rediss", "unix"])
def test_without_redis_py_serve_names_the_extra_to_install(monkeypatch, scheme):
    monkeypatch.setitem(sys.modules, "redis", None)  # as if not installed: importing it fails
    for module in ("mockagent.engine.store.redis", "mockagent.engine.store.lease"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    url = f"{scheme}://:hunter2@127.0.0.1:6379/0"
    result = CliRunner().invoke(main, ["serve", str(KIT), "--store", url])
    assert result.exit_code == 2  # a usage error, before anything is served
    assert "pip install 'mockagent-server[redis]'" in result.output and "--store" in result.output
    assert "hunter2" not in result.output and "Traceback" not in result.output


ONCE = (
    "version: 1\nprotocol: a2a\nagent:\n  name: once\n  description: d\n  version: '1'\n"
    "  skills: [{id: s, name: s, description: d, tags: [t]}]\n"
    "interactions:\n"
    "  - name: first\n    times: 1\n    match: {text: hi}\n    reply: {message: first answer}\n"
    "  - name: later\n    match: {text: hi}\n    reply: {message: later answer}\n"
)


def said(c: FlaskClient) -> str:
    answer = rpc(c, "", "SendMessage", {"message": message("hi")})
    return answer["result"]["message"]["parts"][0]["text"] if "result" in answer else answer


def test_times_counts_uses_on_every_server(redis_url, tmp_path):
    cassette = tmp_path / "once.yaml"
    cassette.write_text(ONCE)
    a = client(store_from_url(redis_url), cassette)
    b = client(store_from_url(redis_url, join=True), cassette)
    answers = [said(server) for server in (a, b, a)]
    assert answers == ["first answer", "later answer", "later answer"]


def test_a_use_past_times_behind_the_stores_back_refuses_the_commit(
    redis_url, tmp_path, monkeypatch
):
    cassette = tmp_path / "once.yaml"
    cassette.write_text(ONCE)
    c = client(store_from_url(redis_url), cassette)
    # Used up by another client after this call read its count (0) and matched `first`.
    behind_the_stores_back(monkeypatch, redis_url, "HINCRBY", "mockagent:once:once:uses", 0, 1)
    before = stored(redis_url)
    refused = rpc(c, "", "SendMessage", {"message": message("hi")})
    with redis.Redis.from_url(redis_url) as r:
        assert r.hgetall("mockagent:once:once:uses") == {b"0": b"1"}  # not 2
    assert refused["error"]["code"] == -32603  # Unavailable while the lease stands: try again
    assert "`times` was used up in the store" in refused["error"]["message"]
    assert stored(redis_url) == {**before, b"mockagent:once:once:uses": ANY}  # nothing written
    assert said(c) == "later answer"  # the count read afresh: `first` is used up


def test_allow_repeats_spends_uses_past_times_on_a_shared_store(redis_url, tmp_path):
    cassette = tmp_path / "once.yaml"
    cassette.write_text(ONCE)
    app = create_app(cassette, store=store_from_url(redis_url), pace="instant", allow_repeats=True)
    assert [said(app.test_client()) for _ in range(3)] == ["first answer"] * 3
    with redis.Redis.from_url(redis_url) as r:
        assert r.hgetall("mockagent:once:once:uses") == {b"0": b"3"}


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


def test_a_call_is_one_round_trip_to_lock_and_load_and_one_to_save_and_unlock(redis_url, waited):
    c = client(store_from_url(redis_url))
    task = rpc(c, "test-runner", "SendMessage", {"message": message("Run the tests at 9f3c2e1")})[
        "result"
    ]["task"]
    waited.clear()
    assert rpc(c, "test-runner", "GetTask", {"id": task["id"]})["result"]["id"] == task["id"]
    # The lock (a script), the counters, the task and its version in one round trip; the save
    # (a poll counted) and the unlock in a script whose answer is waited for: a save refused
    # (the lease lost, the task written meanwhile) is an error.
    assert waited == [["EVALSHA", "HGETALL", "LLEN", "HGET", "HGET"], ["EVALSHA"]]
    waited.clear()
    rpc(c, "test-runner", "SendMessage", {"message": message("Run the tests at 9f3c2e1")})
    assert waited == [["EVALSHA", "HGETALL", "LLEN"], ["EVALSHA"]]  # a new task: no task read


def test_a_stream_whose_events_are_all_there_reads_no_task_back(redis_url, waited):
    c = client(store_from_url(redis_url))
    streamed = c.post(
        "/test-runner/",
        headers=HEADERS,
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "SendStreamingMessage",
            "params": {"message": message("Run the tests at 9f3c2e1")},
        },
    ).data
    assert streamed.count(b"data: ") == 9
    assert ["HGET"] not in waited  # the stream had every event in hand: no fresh copy of its task


RUNNER_LOCK = "mockagent:test-runner:test-runner:lock"  # mockagent:<file stem>:<agent>:lock


def test_a_call_that_cannot_get_the_lock_waits_asleep_then_is_unavailable(
    redis_url, monkeypatch, waited
):
    monkeypatch.setenv("MOCKAGENT_STORE_WAIT_MS", "300")
    c = client(store_from_url(redis_url))
    with redis.Redis.from_url(redis_url) as other:
        other.set(RUNNER_LOCK, "another holder", px=60_000)  # it never lets go in time
        waited.clear()
        started = time.monotonic()
        answer = rpc(c, "test-runner", "SendMessage", {"message": message("Run the suite")})
        took = time.monotonic() - started
    assert answer["error"]["code"] == -32603  # Unavailable in JSON-RPC: try again
    assert "stayed locked by another process for 0.3 s" in answer["error"]["message"]
    assert 0.3 <= took < 3
    # Asleep in between (a try, a wait as long as the bound, another try), never polling.
    tries = [commands[0] for commands in waited]
    assert tries[:3] == ["EVALSHA", "BLPOP", "EVALSHA"] and len(tries) <= 5


def test_a_transaction_that_outlived_its_lease_saves_nothing(redis_url, monkeypatch):
    monkeypatch.setenv("MOCKAGENT_STORE_LEASE_MS", "100")
    engine = (
        create_app(KIT, store=store_from_url(redis_url), pace="instant")
        .extensions["mockagent"]
        .agents["test-runner"]
    )
    other = client(store_from_url(redis_url, join=True))
    send = send_call("Run the suite")
    with redis.Redis.from_url(redis_url) as monitor:
        with pytest.raises(StoreError, match="lost the lock of the store"):
            with engine.locked():  # holds the store while a stalled process would
                mine = engine.handle(send).task.id
                while monitor.exists(RUNNER_LOCK):  # poll: the lease runs out
                    pass
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


def test_threads_that_come_and_go_each_get_a_connection(redis_url):
    """A server's threads end when idle and new ones start: the 101st thread to use the store
    was refused ("Too many connections") by a pool that counts every connection it ever made."""
    client = Client(redis_url, timeout_s=5)
    replies: list[Any] = []
    for _ in range(150):
        thread = threading.Thread(target=lambda: replies.append(client.call("PING")))
        thread.start()
        thread.join()
    assert replies == ["PONG"] * 150


def test_a_store_over_tls(tmp_path):
    """`rediss://`: the same conversation through a redis-server that speaks only TLS; and one
    whose certificate is not trusted is refused as the server starts, saying so."""
    process, url = start_redis(tls=tmp_path)
    try:
        assert conversation(client(store_from_url(url))) == conversation(client(None))
        with pytest.raises(StoreError, match="certificate verify failed"):
            client(store_from_url(url.split("?")[0]))
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_runtime_interactions_are_refused_on_a_shared_store(redis_url):
    # Use counts and task scripts are kept by cassette index for every process: an interaction
    # added to one process only would make the processes answer one call differently.
    shared = client(store_from_url(redis_url))
    body = {"name": "hello", "match": {"text": "hello"}, "reply": {"message": "Hi."}}
    for refused in (
        shared.post("/_mockagent/interactions?agent=test-runner", json=body),
        shared.delete("/_mockagent/interactions/run-deadbee?agent=test-runner"),
    ):
        assert refused.status_code == 409
        assert "shared store (--store)" in refused.get_json()["error"]["message"]
    names = [
        i["name"]
        for i in shared.get("/_mockagent/interactions?agent=test-runner").json["interactions"]
    ]
    assert "hello" not in names and "run-deadbee" in names
    saved = shared.get("/_mockagent/cassette?agent=test-runner")
    assert saved.status_code == 200 and "name: run-deadbee" in saved.get_data(as_text=True)


def behind_the_stores_back(monkeypatch: pytest.MonkeyPatch, url: str, *command: Any) -> None:
    """Another client sends `command` to Redis once, as this process's next commit is about to
    go: what the commit carries was read before it."""
    commit = RedisStore.commit
    pending = [command]

    def meddled(self: RedisStore, counters: Any) -> None:
        if pending:
            with redis.Redis.from_url(url) as other:
                other.execute_command(*pending.pop())
        commit(self, counters)

    monkeypatch.setattr(RedisStore, "commit", meddled)


def stored(url: str) -> dict[bytes, Any]:
    """Every data key of the store but task versions, serialized (the lock's keys aside)."""
    mine = (b":lock", b":fence", b":wake", b":versions")
    with redis.Redis.from_url(url) as r:
        return {key: r.dump(key) for key in r.keys("mockagent:*") if not key.endswith(mine)}


RUNNER = "mockagent:test-runner:test-runner:"


def test_a_task_changed_behind_the_stores_back_refuses_the_commit_that_carries_it(
    redis_url, monkeypatch
):
    c = client(store_from_url(redis_url))
    immediate = {"returnImmediately": True}
    params = {"message": message("Run the tests at 9f3c2e1"), "configuration": immediate}
    task = rpc(c, "test-runner", "SendMessage", params)["result"]["task"]
    behind_the_stores_back(monkeypatch, redis_url, "HINCRBY", RUNNER + "versions", task["id"], 1)
    before = stored(redis_url)
    answer = rpc(c, "test-runner", "GetTask", {"id": task["id"]})  # counts a poll: writes the task
    assert answer["error"]["code"] == -32603  # Unavailable: try again
    assert "a task of this call was changed in the store" in answer["error"]["message"]
    assert stored(redis_url) == before  # nothing written: not the task, the journal, the counters
    again = rpc(c, "test-runner", "GetTask", {"id": task["id"]})  # read afresh, so written
    assert again["result"]["id"] == task["id"] and stored(redis_url) != before
    with redis.Redis.from_url(redis_url) as r:
        assert r.hget(RUNNER + "versions", task["id"]) == b"3"  # made, moved behind, polled
