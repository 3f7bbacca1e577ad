"""`mockagent serve --workers 2 --store redis://…`, and streams that follow a task another server
moves."""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mockagent.engine.store.factory import store_from_url
from mockagent.server.app import create_app
from mockagent.server.host import serve_pid
from mockagent.server.thread import ServerThread

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "cassettes" / "kit"
DIFF = {"raw": "LS0tIGEKKysrIGIK", "mediaType": "text/x-diff"}


def post(port: int, path: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One call on a connection of its own, so a load balancer or the kernel may pick any worker."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    connection.request(
        "POST", path, body, {"Content-Type": "application/json", "A2A-Version": "1.0"}
    )
    response = connection.getresponse()
    data = json.loads(response.read())
    connection.close()
    return data


def subscribe(port: int, task_id: str, into: list[dict[str, Any]]) -> threading.Thread:
    """Read a SubscribeToTask stream in a thread, appending each event's result."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask", "params": {"id": task_id}}
    )
    connection.request(
        "POST", "/code-reviewer/", body, {"Content-Type": "application/json", "A2A-Version": "1.0"}
    )
    response = connection.getresponse()
    assert response.status == 200
    first = response.readline()  # the snapshot: the subscription is open once it arrives
    into.append(json.loads(first.decode().removeprefix("data:"))["result"])

    def read() -> None:
        for line in response:
            if line.startswith(b"data:"):
                into.append(json.loads(line[5:])["result"])
        connection.close()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_a_subscription_follows_a_task_another_server_moves_on(redis_url):
    a = ServerThread(create_app(KIT, store=store_from_url(redis_url), pace="instant")).start()
    b = ServerThread(
        create_app(KIT, store=store_from_url(redis_url, join=True), pace="instant")
    ).start()
    try:
        message = {
            "messageId": "m1",
            "role": "ROLE_USER",
            "parts": [{"text": "Please review"}, DIFF],
        }
        task = post(a.port, "/code-reviewer/", "SendMessage", {"message": message})["result"][
            "task"
        ]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        events: list[dict[str, Any]] = []
        reader = subscribe(a.port, task["id"], events)
        follow_up = {
            "messageId": "m2",
            "role": "ROLE_USER",
            "parts": [{"text": "main"}],
            "taskId": task["id"],
            "contextId": task["contextId"],
        }
        done = post(b.port, "/code-reviewer/", "SendMessage", {"message": follow_up})["result"][
            "task"
        ]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        reader.join(timeout=10)
        assert not reader.is_alive(), "the subscription did not end at COMPLETED"
        kinds = [next(iter(e)) for e in events]
        assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        a.stop()
        b.stop()


def serve(*args: str, **popen: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def ready(server: subprocess.Popen[str]) -> int:
    """The port `server` listens on, once it printed its ready line."""
    while not (line := server.stdout.readline()).startswith("mockagent ready"):  # type: ignore[union-attr]
        assert line, server.stderr.read()  # type: ignore[union-attr]
    assert "with 2 workers" in line
    return int(line.split()[3].rsplit(":", 1)[1])


def stopped(server: subprocess.Popen[str], signum: int = signal.SIGTERM) -> tuple[str, str]:
    """Stop `server` with `signum` (to its whole group for SIGINT, as Ctrl-C does); its stdout and
    stderr."""
    if signum == signal.SIGINT:
        os.killpg(server.pid, signum)
    else:
        server.send_signal(signum)
    out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert (
        out.endswith("mockagent stopped\n") and out.count("mockagent stopped") == 1
    )  # not once per worker
    assert "Traceback" not in err
    return out, err


def workers(server: subprocess.Popen[str], count: int = 2, without: int = 0) -> list[int]:
    """The pids of the server's worker processes, once there are `count` of them and `without` is
    gone."""
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children")  # Linux
    deadline = time.monotonic() + 10
    while len(pids := [int(p) for p in children.read_text().split()]) != count or without in pids:
        assert time.monotonic() < deadline, f"the workers are {pids}"
        time.sleep(0.01)
    return pids


def answerer(port: int, connection: http.client.HTTPConnection, pids: list[int]) -> int | None:
    """Which of `pids` holds the server's end of `connection` (found through its socket inode)."""
    client_port = connection.sock.getsockname()[1]
    inodes = {
        fields[9]
        for fields in (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
        if int(fields[1].split(":")[1], 16) == port
        and int(fields[2].split(":")[1], 16) == client_port
    }
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd).removeprefix("socket:[").removesuffix("]") in inodes:
                    return pid
            except OSError:
                pass  # a descriptor closed meanwhile
    return None


def answerers(port: int, pids: list[int]) -> set[int | None]:
    """Who answers new connections: each asks for a card and stays open, until every one of `pids`
    has one."""
    connections, seen = [], set()
    while set(pids) - seen and len(connections) < 40:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/test-runner/.well-known/agent-card.json")
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read())["name"] == "test-runner"
        connections.append(connection)
        seen.add(answerer(port, connection, pids))
    for connection in connections:
        connection.close()
    return seen


def all_answer(port: int, pids: list[int]) -> bool:
    """Whether every one of `pids` answers new connections, within 10 s (a worker started just
    now answers once it has loaded the cassettes)."""
    deadline = time.monotonic() + 10
    while (seen := answerers(port, pids)) != set(pids):
        if time.monotonic() > deadline:
            raise AssertionError(f"only {seen} of {pids} answered")
        time.sleep(0.1)
    return True


def test_serve_with_two_workers_shares_tasks_between_them(redis_url):
    server = serve("--workers", "2", "--store", redis_url)
    try:
        port = ready(server)
        tasks = []
        for _ in range(6):  # each call on a new connection: both workers answer some of them
            result = post(
                port,
                "/test-runner/",
                "SendMessage",
                {
                    "message": {
                        "messageId": "m",
                        "role": "ROLE_USER",
                        "parts": [{"text": "Run the tests at 9f3c2e1"}],
                    },
                    "configuration": {"returnImmediately": True},
                },
            )
            tasks.append(result["result"]["task"]["id"])
        assert len(set(tasks)) == 6
        for task_id in tasks:
            states = [
                post(port, "/test-runner/", "GetTask", {"id": task_id})["result"]["status"]["state"]
                for _ in range(4)
            ]
            assert states[-1] == "TASK_STATE_COMPLETED", states
        listed = post(port, "/test-runner/", "ListTasks", {"pageSize": 100})["result"]
        assert sorted(t["id"] for t in listed["tasks"]) == sorted(tasks)
        pids = workers(server)
        assert all_answer(port, pids)  # two processes accept on the one socket
    finally:
        out, err = stopped(server)
    assert err == ""


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_worker_that_dies_is_replaced(redis_url, signum):
    server = serve("--workers", "2", "--store", redis_url)
    try:
        port = ready(server)
        task = post(
            port,
            "/test-runner/",
            "SendMessage",
            {
                "message": {
                    "messageId": "m",
                    "role": "ROLE_USER",
                    "parts": [{"text": "Run the tests at 9f3c2e1"}],
                },
                "configuration": {"returnImmediately": True},
            },
        )["result"]["task"]
        dead, survivor = workers(server)
        os.kill(dead, signum)
        pids = workers(server, without=dead)
        assert survivor in pids
        # The survivor still accepts (a worker's stop must not stop the shared socket listening),
        # and so does the new one; the task lives on in the store.
        assert all_answer(port, pids)
        states = [
            post(port, "/test-runner/", "GetTask", {"id": task["id"]})["result"]["status"]["state"]
            for _ in range(4)
        ]
        assert states[-1] == "TASK_STATE_COMPLETED", states
    finally:
        out, err = stopped(server)
    assert err == f"mockagent: Unexpected exit from worker-{1 + [dead, survivor].index(dead)}\n"


def test_workers_stop_when_serve_is_killed(redis_url):
    """SIGKILL leaves serve no time to stop its workers: they see it and stop by themselves,
    freeing the port, instead of serving on as orphans."""
    server = serve("--workers", "2", "--store", redis_url)
    port = ready(server)
    pids = workers(server)
    server.kill()
    deadline = time.monotonic() + 10
    while alive := [pid for pid in pids if Path(f"/proc/{pid}").exists() and not zombie(pid)]:
        if time.monotonic() > deadline:
            for pid in alive:
                os.kill(pid, signal.SIGKILL)
            pytest.fail(f"workers {alive} outlived serve")
        time.sleep(0.01)
    server.communicate(timeout=10)  # the workers held its pipes open
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_a_worker_still_starting_when_serve_dies_knows_it_is_orphaned():
    """A worker that looks for its parent only after serve's death has been adopted already: it
    must still see that serve is gone (it used to take its adopter for serve and serve on)."""
    fork = multiprocessing.get_context("fork")
    reader, writer = fork.Pipe(duplex=False)
    serve = fork.Process(target=start_a_worker_then_die, args=(writer,))
    serve.start()
    serve.join(timeout=10)
    assert reader.poll(timeout=10), "the worker never reported"
    serve_pid_was, parent_now, seen = reader.recv()
    assert parent_now != serve_pid_was  # adopted: its parent pid no longer names serve
    assert seen == serve_pid_was


def start_a_worker_then_die(writer: Any) -> None:
    multiprocessing.get_context("fork").Process(
        target=look_after_adoption, args=(os.getpid(), writer)
    ).start()
    os._exit(0)


def look_after_adoption(serve: int, writer: Any) -> None:
    while os.getppid() == serve:
        time.sleep(0.005)
    writer.send((serve, os.getppid(), serve_pid()))


def zombie(pid: int) -> bool:
    """Ended but not reaped yet (an orphan's parent is init, which reaps it soon)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_ctrl_c_stops_the_workers_and_their_open_streams(redis_url):
    server = serve(
        "--workers", "2", "--store", redis_url, start_new_session=True
    )  # a group of its own
    try:
        port = ready(server)
        message = {
            "messageId": "m1",
            "role": "ROLE_USER",
            "parts": [{"text": "Please review"}, DIFF],
        }
        task = post(port, "/code-reviewer/", "SendMessage", {"message": message})["result"]["task"]
        events: list[dict[str, Any]] = []
        reader = subscribe(port, task["id"], events)  # open until the task ends: it never does
    finally:
        started = time.monotonic()
        out, err = stopped(server, signal.SIGINT)
    assert time.monotonic() - started < 4, "a worker waited for its stream until it was killed"
    reader.join(timeout=10)
    assert not reader.is_alive() and err == ""


def test_a_port_in_use_is_a_clear_error(redis_url):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "mockagent.cli",
                "serve",
                str(KIT),
                "--port",
                str(port),
                "--workers",
                "2",
                "--store",
                redis_url,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"mockagent: cannot listen on 127.0.0.1:{port}: ")
    assert "Traceback" not in result.stderr


def test_several_workers_need_a_shared_store():
    result = subprocess.run(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "several workers need a shared store" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unreachable_store_is_a_clear_error(redis_server):
    dead = redis_server.rsplit(":", 1)[0] + ":1/0"  # nothing listens on port 1
    result = subprocess.run(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--store", dead],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert result.returncode == 1
    assert "cannot use the store at" in result.stderr and "Traceback" not in result.stderr


def test_concurrent_calls_on_two_servers_lose_nothing(redis_url):
    """Leases under load: every call answered once, ids never twice, every task and entry kept."""
    servers = [
        ServerThread(
            create_app(KIT, store=store_from_url(redis_url, join=i > 0), pace="instant")
        ).start()
        for i in range(2)
    ]
    ids: list[str] = []
    errors: list[BaseException] = []

    def client(port: int) -> None:
        try:
            for _ in range(15):
                result = post(
                    port,
                    "/test-runner/",
                    "SendMessage",
                    {
                        "message": {
                            "messageId": "m",
                            "role": "ROLE_USER",
                            "parts": [{"text": "Run the suite"}],
                        }
                    },
                )
                ids.append(result["result"]["task"]["id"] if "result" in result else result)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(servers[i % 2].port,)) for i in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == [] and [i for i in ids if not isinstance(i, str)] == []
        assert len(ids) == 120 and len(set(ids)) == 120
        listed = post(servers[1].port, "/test-runner/", "ListTasks", {"pageSize": 100})["result"]
        assert listed["totalSize"] == 120
        engine = servers[0].agents["test-runner"]
        with engine.locked():
            assert len(engine.journal.entries) == 121  # and the ListTasks call
    finally:
        for server in servers:
            server.stop()
