"""A host stopped in the middle of its calls, for longer than the store's wait bound, then resumed
(as a paused VM, a debugger or an overloaded machine would do it): the other host goes on at once,
since nothing is held; the stopped host's writes, computed before the stop, are refused when it
resumes (its clients get Unavailable), and calls on both hosts afterwards mint unique ids and lose
no task and no use count. A killed host holds up nothing either.

Real processes: `mockagent serve --store redis://…` and a second host with `--join`, each in a
process group of its own, stopped with SIGSTOP to the whole group (a server's workers are its
children). The wait bound is made short for the test with MOCKAGENT_STORE_WAIT_MS.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import httpx

WAIT_MS = 300
CASSETTE = """\
version: 1
protocol: a2a
agent:
  name: jobs
  description: runs jobs
  version: '1'
  skills: [{id: s, name: s, description: d, tags: [t]}]
interactions:
  - name: job
    times: 100000
    match: {text: run}
    reply: {task: {steps: [{state: TASK_STATE_COMPLETED}]}}
"""
EVERY = {"limit": 1_000_000}  # the listing shows the newest 1,000 tasks by default
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "run"}]}},
}


class Host:
    """`mockagent serve` in a process group of its own, ready; its stderr goes to a file."""

    def __init__(self, cassette: Path, url: str, err: IO[str], *flags: str) -> None:
        env = {**os.environ, "MOCKAGENT_STORE_WAIT_MS": str(WAIT_MS)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mockagent.cli", "serve", str(cassette), "--port", "0"]
            + ["--pace", "instant", "--store", url, *flags],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        while not (line := self.process.stdout.readline()).startswith("mockagent ready"):
            assert line, "the host did not start"
        found = re.search(r"127\.0\.0\.1:(\d+)", line)
        assert found is not None, line
        self.url = f"http://127.0.0.1:{found[1]}"

    def signal(self, signum: int) -> None:
        os.killpg(self.process.pid, signum)

    def stopped(self) -> bool:
        """Whether every thread of every process of its group has stopped (SIGSTOP takes effect
        a moment after it is sent, and thread by thread: a process's own state is its first
        thread's, while another may still be saving to the store)."""
        states = []
        for stat in Path("/proc").glob("[0-9]*/task/[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[2]) == self.process.pid:  # its process group
                states.append(fields[0])
        return bool(states) and all(state in "tT" for state in states)

    def stop(self) -> None:
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        self.process.communicate(timeout=30)


class Calls:
    """SendMessage calls and what became of them: the ids of the tasks made, how many were
    refused as Unavailable, and anything else (a lost connection, say) in `unexpected`."""

    def __init__(self) -> None:
        self.sent = 0
        self.ids: list[str] = []
        self.refused = 0
        self.unexpected: list[Any] = []
        self._lock = threading.Lock()

    def send(self, client: httpx.Client, url: str) -> None:
        try:
            answer = client.post(url + "/", json=SEND, headers={"A2A-Version": "1.0"}).json()
        except Exception as exc:  # noqa: BLE001 (reported by the test)
            answer = repr(exc)
        with self._lock:
            self.sent += 1
            if isinstance(answer, dict) and "result" in answer:
                self.ids.append(answer["result"]["task"]["id"])
            elif isinstance(answer, dict) and "store" in answer["error"]["message"]:
                assert answer["error"]["code"] == -32603  # JSON-RPC's Unavailable: try again
                self.refused += 1
            else:
                self.unexpected.append(answer)

    def run(self, url: Callable[[int], str], threads: int, each: int) -> None:
        """`each` calls on each of `threads` threads (thread i on `url(i)`); back when all
        answered."""

        def work(i: int) -> None:
            with httpx.Client(timeout=60) as client:
                for _ in range(each):
                    self.send(client, url(i))

        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)


def stop_busy(host: Host, answered: Callable[[], int]) -> None:
    """Stop `host` while it takes calls without a break, once it has answered one more call
    (`answered`: how many so far), so that stopping it again and again cannot starve it."""
    before = answered()
    deadline = time.monotonic() + 10
    while answered() == before:  # poll: its worker runs until it has answered a call
        assert time.monotonic() < deadline, "the host answered no call"
    host.signal(signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while not host.stopped():  # poll: stopped a moment after the signal
        assert time.monotonic() < deadline, "SIGSTOP did not stop the host"


Hosts = tuple[Host, Host, Calls, threading.Event, list[threading.Thread]]


@contextmanager
def busy_hosts(redis_url: str, tmp_path: Path) -> Iterator[Hosts]:
    """Two hosts on one store, `a` kept busy by the hammers (4 threads calling it without a
    break until `busy` is cleared), `b` joined to it. Stops
    everything at the end (the hosts' stderr is in tmp_path/hosts.err)."""
    cassette = tmp_path / "jobs.yaml"
    cassette.write_text(CASSETTE)
    err = (tmp_path / "hosts.err").open("w")
    a = Host(cassette, redis_url, err)
    b = Host(cassette, redis_url, err, "--join")
    calls = Calls()
    busy = threading.Event()
    busy.set()

    def keep_busy() -> None:  # host a takes calls without a break until the stall
        with httpx.Client(timeout=60) as client:
            while busy.is_set():
                calls.send(client, a.url)

    hammers = [threading.Thread(target=keep_busy) for _ in range(4)]
    try:
        for hammer in hammers:
            hammer.start()
        yield a, b, calls, busy, hammers
    finally:
        busy.clear()
        if a.process.poll() is None:
            a.stop()
        b.stop()
        err.close()


def test_a_stopped_host_holds_up_nothing_and_its_stale_writes_are_refused(redis_url, tmp_path):
    with busy_hosts(redis_url, tmp_path) as (a, b, calls, busy, hammers):
        for _ in range(20):  # until a call of a's was caught between its computation and write
            stop_busy(a, lambda: calls.sent)
            stopped = time.monotonic()
            # b answers at once, whatever a was doing, for longer than a's wait bound
            while time.monotonic() - stopped < 2 * WAIT_MS / 1000:
                calls.run(lambda i: b.url, threads=2, each=5)
            assert a.stopped()
            resumed = calls.sent
            a.signal(signal.SIGCONT)
            deadline = time.monotonic() + 30
            while calls.sent < resumed + 8:  # poll: a answers its calls in flight, and more
                assert time.monotonic() < deadline, "the resumed host answered nothing"
            if calls.refused:
                break
        busy.clear()  # the calls in flight on a stay with it until it resumes
        for hammer in hammers:
            hammer.join(timeout=60)
        calls.run(lambda i: (a.url, b.url)[i % 2], threads=12, each=25)  # 300 calls at once

        assert calls.unexpected == [] and len(calls.ids) + calls.refused == calls.sent
        assert len(calls.ids) >= 300
        twice = len(calls.ids) - len(set(calls.ids))
        assert twice == 0, f"{twice} task ids minted twice"
        with httpx.Client(base_url=b.url, timeout=60) as admin:
            listed = [
                task["id"] for task in admin.get("/_mockagent/tasks", params=EVERY).json()["tasks"]
            ]
            (job,) = admin.get("/_mockagent/interactions").json()["interactions"]
        assert sorted(listed) == sorted(calls.ids)  # every task answered is kept, no other
        assert job["uses"] == len(calls.ids)  # and each use counted once
        assert calls.refused >= 1  # a's write from before the stall: its client was told to retry
    assert "Traceback" not in (tmp_path / "hosts.err").read_text()


def test_a_host_killed_in_the_middle_of_its_calls_holds_up_nothing(redis_url, tmp_path):
    with busy_hosts(redis_url, tmp_path) as (a, b, calls, busy, hammers):
        stop_busy(a, lambda: calls.sent)
        busy.clear()
        a.signal(signal.SIGKILL)  # dies in the middle of its calls
        a.process.wait(timeout=30)
        for hammer in hammers:
            hammer.join(timeout=60)
        # The calls a had in flight lost their connection: each may have been written before a
        # died, so its outcome is unknown, not refused.
        cut_off = len(calls.unexpected)
        assert all(isinstance(answer, str) for answer in calls.unexpected), calls.unexpected
        before = len(calls.ids)
        killed = time.monotonic()
        calls.run(lambda i: b.url, threads=2, each=10)
        assert time.monotonic() - killed < 5  # nothing to wait for (a lease held it 5 s before)
        assert len(calls.ids) == before + 20 and len(calls.unexpected) == cut_off
        assert len(calls.ids) == len(set(calls.ids))
        with httpx.Client(base_url=b.url, timeout=60) as admin:
            listed = [
                task["id"] for task in admin.get("/_mockagent/tasks", params=EVERY).json()["tasks"]
            ]
        assert len(listed) == len(set(listed)) and set(calls.ids) <= set(listed)
        # Every task answered is kept; any other is a cut-off call's, written before a died, so
        # before every task of b's calls (tasks are listed oldest first).
        other = [i for i, task_id in enumerate(listed) if task_id not in calls.ids]
        first_of_b = min(listed.index(task_id) for task_id in calls.ids[before:])
        assert len(other) <= cut_off and all(i < first_of_b for i in other), (other, cut_off)
