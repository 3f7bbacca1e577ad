"""The shared store going away while serving: every protocol answers in its own shape (REST 503
UNAVAILABLE, try again; JSON-RPC an internal error in a 200), never a traceback or a 500; the
password in the store's URL is never shown; and calls work again once the store is back."""

from __future__ import annotations

from pathlib import Path

import httpx

from mockagent.engine.store.factory import store_from_url
from mockagent.server.app import create_app
from mockagent.server.thread import ServerThread
from tests.helpers.redis_server import start_redis

ROOT = Path(__file__).resolve().parents[2]
A2A = {"A2A-Version": "1.0"}
SEND = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "SendMessage",
    "params": {
        "message": {
            "messageId": "m1",
            "role": "ROLE_USER",
            "parts": [{"text": "Which languages do you review?"}],
        }
    },
}


def test_a_lost_store_is_503_in_each_protocols_shape_until_it_is_back():
    process, url = start_redis(
        password="hunter2"
    )  # a password in the URL must never reach a client
    port = int(url.rsplit(":", 1)[1])
    secret_url = f"{url}/0"
    a2a = ServerThread(
        create_app(ROOT / "cassettes" / "kit", store=store_from_url(secret_url), pace="instant")
    )
    agentex = ServerThread(
        create_app(
            ROOT / "cassettes" / "agentex" / "sync-agent.yaml",
            pace="instant",
            store=store_from_url(secret_url.replace("/0", "/1")),
        )
    )
    a2a.start()
    agentex.start()
    reviewer = a2a.agent_url("code-reviewer")
    agentex_rpc = f"{agentex.url}/agents/name/echo-bot/rpc"
    ask = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "message/send",
        "params": {"content": {"type": "text", "author": "user", "content": "Are you there?"}},
    }
    try:
        assert "result" in httpx.post(reviewer, json=SEND, headers=A2A).json()
        process.terminate()
        process.wait(timeout=10)

        rpc = httpx.post(reviewer, json=SEND, headers=A2A)
        assert rpc.status_code == 200  # JSON-RPC errors travel in a 200
        error = rpc.json()["error"]
        assert rpc.json()["id"] == 7 and error["code"] == -32603 and "store" in error["message"]

        rest = httpx.get(f"{reviewer}/tasks/no-such-task", headers=A2A)
        assert rest.status_code == 503
        assert (
            rest.json()["error"]["status"] == "UNAVAILABLE" and rest.json()["error"]["code"] == 503
        )

        agentex_answer = httpx.post(agentex_rpc, json=ask)
        assert (
            agentex_answer.status_code == 200 and agentex_answer.json()["id"] == 3
        )  # RPC errors too
        assert (
            agentex_answer.json()["error"]["code"] == -32603
            and "store" in agentex_answer.json()["error"]["message"]
        )

        for answer in (rpc, rest, agentex_answer):
            assert "hunter2" not in answer.text and "Traceback" not in answer.text

        process, _ = start_redis(
            port, password="hunter2"
        )  # back (empty: it kept nothing), on the same port
        assert httpx.post(reviewer, json=SEND, headers=A2A).json()["result"]["message"]["parts"]
        assert "result" in httpx.post(agentex_rpc, json=ask).json()
    finally:
        a2a.stop()
        agentex.stop()
        process.terminate()
        process.wait(timeout=10)
