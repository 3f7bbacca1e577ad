"""How the hostile corpus is sent and judged (tests/fuzz/test_hostile_corpus.py): a probe on a
fresh connection with a deadline, the checks every answer must pass, what a state change would
change, and the fresh call after each probe."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from tests.helpers.hostile_corpus import (
    Probe,
    jsonrpc,
    message,
    python_names,
    request,
    strict_json,
)
from tests.helpers.hostile_corpus_agents import V1
from tests.helpers.hostile_http import Answers, connect, receive

FRESH_S = 2.0  # a fresh call after a probe answers within this (the regex stall took 11 s)


def request_of(path: str, body: bytes) -> Probe:
    """A v1.0 POST of JSON `body` to `path`, as a probe (for setting up, not for probing)."""
    return Probe("setup", request("POST", path, body, headers=V1))


def send_probe(port: int, probe: Probe) -> Answers:
    """`probe.data` on a fresh connection (half-closed after it when the probe says so)."""
    with connect(port) as sock:
        try:
            sock.sendall(probe.data)
            if probe.shut:
                sock.shutdown(socket.SHUT_WR)
        except ConnectionError:
            pass  # refused half way: what it answered is still to be read
        return receive(sock, settle=0.05)


def admin_json(port: int, path: str) -> Any:
    answers = send_probe(port, Probe("read", request("GET", f"/_mockagent/{path}", None, None)))
    assert answers.statuses == [200], str(answers)
    return strict_json(answers.responses[0].body)


def state(port: int) -> Any:
    """What a state change would change: agents, interactions and uses, tasks, the journal."""
    calls = admin_json(port, "calls")
    return (
        admin_json(port, "interactions"),  # by agent: a load shows here too
        admin_json(port, "tasks"),
        len(calls["calls"]) + calls["dropped"],
    )


def sound(answers: Answers, probe: Probe) -> None:
    """No hang, no 5xx, no Python name, strict JSON; the status the probe allows."""
    assert not answers.hung, f"no answer within the deadline: {answers}"
    for response in answers.responses:
        text = response.body.decode("utf-8", "replace")
        assert response.status < 500, str(answers)
        assert python_names(text) == [], str(answers)
        if "json" in response.headers.get("content-type", ""):
            strict_json(response.body)
    if probe.says:
        assert answers.responses and probe.says in answers.responses[0].body.decode(), str(answers)
    if probe.statuses:
        assert answers.statuses[:1] in ([s] for s in probe.statuses), str(answers)


def fresh(port: int, path: str) -> None:
    """The server answers a new call at once."""
    start = time.monotonic()
    answers = send_probe(port, Probe("fresh", request("GET", path, None, None)))
    assert answers.statuses == [200], f"a fresh call after the probe: {answers}"
    assert time.monotonic() - start < FRESH_S


def refused_webhook(port: int, url: str) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = [d for d in admin_json(port, "deliveries")["deliveries"] if d["url"] == url]
        if found:
            assert found[-1]["ok"] is False and found[-1]["error"].startswith("refused:"), found
            return
        time.sleep(0.02)  # polling the journal for the delivery
    raise AssertionError(f"no delivery to {url} journaled")


def run(port: int, probe: Probe, card: str, state: Callable[[], Any], admin: bool = True) -> None:
    before = state() if probe.unchanged else None
    sound(send_probe(port, probe), probe)
    if probe.unchanged:
        assert state() == before, "a refused request changed the agents"
    if probe.webhook:
        refused_webhook(port, probe.webhook)
    if probe.journal and admin:
        try:
            for path in ("calls", "tasks"):
                admin_json(port, path)
            fresh(port, "/_mockagent/")
        finally:  # a journal the probe broke would fail every later probe: start it afresh
            reset(port)
    fresh(port, card)


def reset(port: int) -> None:
    """Forget the journal and the tasks; start the hour-long task again (see `target`)."""
    answers = send_probe(port, Probe("reset", request("POST", "/_mockagent/reset", b"{}")))
    assert answers.statuses == [200], str(answers)
    hour = {"message": message("hour"), "configuration": {"returnImmediately": True}}
    answers = send_probe(port, request_of("/a2a/", jsonrpc("SendMessage", hour)))
    assert answers.statuses == [200], str(answers)
