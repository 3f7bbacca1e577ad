"""Group commit: a process's calls that queue for a shared store are written in one round trip,
and wait for it; a refused write fails every call of the batch."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mockagent.engine.replay import Engine
from mockagent.engine.store.factory import store_from_url
from mockagent.engine.store.lease import Lease
from mockagent.errors import StoreError
from mockagent.server.app import create_app
from tests.helpers.engine_calls import send_call
from tests.helpers.paths import KIT

CALLS = 8


def reviewer(url: str, join: bool = False) -> Engine:
    app = create_app(KIT, store=store_from_url(url, join=join), pace="instant")
    engine: Engine = app.extensions["mockagent"].agents["code-reviewer"]
    return engine


def queued_calls(engine: Engine) -> list[Any]:
    """CALLS questions sent from threads that all queue for the engine before the first begins:
    each thread's answer, or the exception it raised."""
    results: list[Any] = [None] * CALLS

    def ask(n: int) -> None:
        try:
            results[n] = engine.handle(send_call(f"Which languages do you review, {n}?"))
        except Exception as exc:
            results[n] = exc

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(CALLS)]
    with engine.changed:  # the engine's lock: every call waits in line
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while engine.locked._queue < CALLS:  # poll: all of them in line
            assert time.monotonic() < deadline, "the calls did not queue"
            time.sleep(0.001)
    for thread in threads:
        thread.join(timeout=10)
    return results


@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of writes in each commit to the store from now on."""
    counted: list[int] = []
    commit = Lease.commit

    def counting(self: Lease, token: str, writes: Any, keep: bool) -> None:
        counted.append(len(writes))
        commit(self, token, writes, keep)

    monkeypatch.setattr(Lease, "commit", counting)
    return counted


def test_calls_in_line_are_written_in_one_commit(redis_url, commits):
    engine = reviewer(redis_url)
    commits.clear()
    answers = queued_calls(engine)
    assert len(commits) == 1, f"{len(commits)} commits for {CALLS} calls in line"
    ids = {answer.message["messageId"] for answer in answers}
    assert len(ids) == CALLS  # ids minted once each
    other = reviewer(redis_url, join=True)  # and all of it is in the store
    with other.locked():
        assert len(other.journal.entries) == CALLS
        assert list(other.uses)[2] == CALLS  # `languages`, the third interaction


def test_a_refused_commit_fails_every_call_of_its_batch(redis_url, monkeypatch):
    monkeypatch.setenv("MOCKAGENT_STORE_LEASE_MS", "200")  # the lock a refused commit kept
    engine = reviewer(redis_url)
    commit = Lease.commit

    def refused(self: Lease, token: str, writes: Any, keep: bool) -> None:
        raise StoreError("lost the lock of the store")

    monkeypatch.setattr(Lease, "commit", refused)
    answers = queued_calls(engine)
    assert all(isinstance(a, StoreError) for a in answers), answers
    monkeypatch.setattr(Lease, "commit", commit)
    other = reviewer(redis_url, join=True)
    with other.locked():
        assert other.journal.entries == [] and list(other.uses)[2] == 0
