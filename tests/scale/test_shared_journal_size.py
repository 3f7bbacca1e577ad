"""A shared store's journal is bounded as the in-memory one is: Redis keeps the last N calls, and
the count of older ones and every interaction's exact count beside them."""

from __future__ import annotations

from typing import Any

import redis
from flask.testing import FlaskClient

from mockagent.engine.store.factory import store_from_url
from mockagent.server.app import create_app
from tests.helpers.kit_conversation import HEADERS
from tests.helpers.paths import KIT

CODE_REVIEWER = KIT / "code-reviewer.yaml"


def ask(c: FlaskClient, text: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}},
    }
    answer: dict[str, Any] = c.post("/", json=body, headers=HEADERS).get_json()
    return answer


def test_redis_keeps_the_last_n_calls_and_counts_the_rest(redis_url: str) -> None:
    app = create_app(CODE_REVIEWER, store=store_from_url(redis_url), journal_size=2)
    c = app.test_client()
    try:
        for _ in range(4):
            assert "result" in ask(c, "Which languages do you review?")
        listed = c.get("/_mockagent/calls").get_json()
        assert len(listed["calls"]) == 2 and listed["dropped"] == 2
        engine = app.extensions["mockagent"].agents[""]
        name = listed["calls"][0]["interaction"]
        assert engine.interaction(name).answered == 4
        with redis.Redis.from_url(redis_url) as db:
            assert db.llen("mockagent:code-reviewer:code-reviewer:journal") == 2
    finally:
        app.extensions["mockagent"].close()


def test_redis_keeps_the_journal_within_its_bytes(redis_url: str) -> None:
    """Large calls: the list keeps the newest entries within the budget (64 MB by default, here
    20 KB), whatever the count allows, and the count of the rest."""
    app = create_app(CODE_REVIEWER, store=store_from_url(redis_url))
    engine = app.extensions["mockagent"].agents[""]
    engine.tasks.journal.budget = 20_000
    c = app.test_client()
    try:
        for i in range(6):
            answered = ask(c, f"Which languages do you review? {i} " + "x" * 8_000 + "?")
            assert "result" in answered  # some 8 KB each
        listed = c.get("/_mockagent/calls").get_json()
        assert len(listed["calls"]) == 2 and listed["dropped"] == 4
        assert listed["calls"][-1]["params"]["message"]["parts"][0]["text"].startswith(
            "Which languages do you review? 5"
        )
        key = "mockagent:code-reviewer:code-reviewer:journal"
        with redis.Redis.from_url(redis_url) as db:
            kept = db.lrange(key, 0, -1)
            assert int(db.get(key + "_bytes")) == sum(len(entry) for entry in kept) <= 20_000
    finally:
        app.extensions["mockagent"].close()
