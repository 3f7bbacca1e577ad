"""Servers on a shared store, as the scale tests drive them: a Flask test client of an app on a
store, a JSON-RPC call on it, and a cassette with an interaction of `times: 1`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

from mockagent.server.app import create_app
from tests.helpers.kit_conversation import HEADERS, message
from tests.helpers.paths import KIT


def client(store: Any, source: Path = KIT) -> FlaskClient:
    return create_app(source, store=store, pace="instant").test_client()


def rpc(c: FlaskClient, agent: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return c.post(f"/{agent}/" if agent else "/", json=body, headers=HEADERS).get_json()


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
