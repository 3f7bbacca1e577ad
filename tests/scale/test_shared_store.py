"""Two servers sharing one Redis store answer as one agent: tasks, polls, uses, ids, journal."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest
import redis
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.engine.store.client import Client
from mockagent.engine.store.factory import store_from_url
from mockagent.errors import StoreError
from mockagent.server.app import create_app
from tests.helpers.kit_conversation import conversation, message
from tests.helpers.paths import KIT
from tests.helpers.redis_server import start_redis
from tests.helpers.shared_store import ONCE, client, rpc, said


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
    for module in ("redis", "client", "commit", "redis_records"):
        module = f"mockagent.engine.store.{module}"
        monkeypatch.delitem(sys.modules, module, raising=False)
    url = f"{scheme}://:hunter2@127.0.0.1:6379/0"
    result = CliRunner().invoke(main, ["serve", str(KIT), "--store", url])
    assert result.exit_code == 2  # a usage error, before anything is served
    assert "pip install 'mockagent-server[redis]'" in result.output and "--store" in result.output
    assert "hunter2" not in result.output and "Traceback" not in result.output


def test_times_counts_uses_on_every_server(redis_url, tmp_path):
    cassette = tmp_path / "once.yaml"
    cassette.write_text(ONCE)
    a = client(store_from_url(redis_url), cassette)
    b = client(store_from_url(redis_url, join=True), cassette)
    answers = [said(server) for server in (a, b, a)]
    assert answers == ["first answer", "later answer", "later answer"]


def test_allow_repeats_spends_uses_past_times_on_a_shared_store(redis_url, tmp_path):
    cassette = tmp_path / "once.yaml"
    cassette.write_text(ONCE)
    app = create_app(cassette, store=store_from_url(redis_url), pace="instant", allow_repeats=True)
    assert [said(app.test_client()) for _ in range(3)] == ["first answer"] * 3
    with redis.Redis.from_url(redis_url) as r:
        assert r.hgetall("mockagent:once:once:uses") == {b"0": b"3"}


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
