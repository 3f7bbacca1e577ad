"""The recording proxy is guarded as `serve`'s agents are (`mockagent.server.guard`): a web page
cannot make it forward or record a call (a foreign Origin, or a body of a type a page may send
without a preflight, is a 403 in the call's shape); curl, tests and SDKs work as before. Real
HTTP on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mockagent.proxy.app import create_app_for_mode, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.paths import ROOT
from tests.helpers.recording import HEADERS, HTTP, TEST_RUNNER, recording, watched

SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "run the tests"}]}
    },
}
BODY = json.dumps(SEND).encode()
REST_BODY = json.dumps(SEND["params"]).encode()
EVIL = "https://evil.example"
AGENTEX = ROOT / "cassettes" / "agentex" / "sync-agent.yaml"
AGENTEX_RPC = "/agents/name/echo-bot/rpc"
AGENTEX_BODY = (
    b'{"method": "message/send", "params": {"content": {"type": "text", "content": "hi"}}}'
)


def interactions(path: Path) -> list[object]:
    if not path.exists():
        return []
    return (yaml.safe_load(path.read_text()) or {}).get("interactions") or []


BROWSER_HEADERS = [
    {"content-type": "text/plain"},
    {"content-type": "application/x-www-form-urlencoded"},
    {"content-type": "multipart/form-data; boundary=x"},
    {"content-type": "application/json", "origin": EVIL},
]
IDS = ["text-plain", "form", "multipart", "foreign-origin"]


@pytest.mark.parametrize("headers", BROWSER_HEADERS, ids=IDS)
def test_a_web_page_cannot_make_the_proxy_forward_or_record(tmp_path, headers):
    with watched(TEST_RUNNER) as (upstream, posts):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            for route, body in (("/", BODY), ("/message:send", REST_BODY)):
                sent = {**HEADERS, **headers}
                proxied = HTTP.post(rec.url + route, content=body, headers=sent)
                assert proxied.status_code in (403, 415), proxied.text
                assert "refused" in proxied.text
                with serve_in_thread(TEST_RUNNER) as served:  # serve answers it alike
                    own = HTTP.post(served.url + route, content=body, headers=sent)
                assert (proxied.status_code, proxied.json()) == (own.status_code, own.json())
            assert posts == [], "nothing reached the upstream"
            rec.finish()
    assert interactions(tmp_path / "rec.yaml") == []


@pytest.mark.parametrize("headers", BROWSER_HEADERS, ids=IDS)
def test_a_web_page_cannot_make_the_agentex_proxy_forward(tmp_path, headers):
    with watched(AGENTEX) as (upstream, posts):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            answer = HTTP.post(rec.url + AGENTEX_RPC, content=AGENTEX_BODY, headers=headers)
            assert answer.status_code == 403, answer.text
            assert "refused" in answer.json()["error"]["message"]
            assert posts == []
            rec.finish()


def test_clients_that_are_no_browser_still_record(tmp_path):
    with watched(TEST_RUNNER) as (upstream, posts):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            own = {**HEADERS, "content-type": "application/json", "origin": rec.url}
            for headers in ({**HEADERS, "content-type": "application/json"}, own):
                answer = HTTP.post(rec.url + "/", content=BODY, headers=headers)
                assert "result" in answer.json(), answer.text
            card = HTTP.get(rec.url + "/.well-known/agent-card.json", headers={"origin": EVIL})
            assert card.status_code == 200  # reads stay open, as serve's are
            assert posts == ["/", "/"]
            rec.finish()
    assert len(interactions(tmp_path / "rec.yaml")) == 2


def test_an_allowed_host_is_no_foreign_origin(tmp_path):
    # the upstream is told so too: the proxy forwards the Origin as the browser sent it
    with serve_in_thread(TEST_RUNNER, allow_hosts=["app.test"]) as upstream:
        app = create_app_for_mode(
            tmp_path / "rec.yaml", "all", upstream.url, allow_hosts=["app.test"]
        )
        proxy = ServerThread(app).start()
        try:
            sent = {**HEADERS, "content-type": "application/json"}
            page = {**sent, "origin": "https://app.test"}
            allowed = HTTP.post(proxy.url + "/", content=BODY, headers=page)
            assert "result" in allowed.json(), allowed.text
            other = HTTP.post(proxy.url + "/", content=BODY, headers={**sent, "origin": EVIL})
            assert other.status_code == 403
            message = other.json()["error"]["message"]
            assert "start mockagent with --allow-host evil.example" in message
        finally:
            proxy.stop()
            finish_recording(app)
    assert len(interactions(tmp_path / "rec.yaml")) == 1


def test_a_rebound_host_reads_nothing_through_the_proxy_on_loopback(tmp_path):
    """Before, `GET /tasks` with `Host: attacker.example` was forwarded to the real upstream, so a
    page that rebound its name to 127.0.0.1 read the agent's tasks through the proxy."""
    with watched(TEST_RUNNER) as (upstream, _):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            rebound = HTTP.get(rec.url + "/tasks", headers={**HEADERS, "host": "attacker.example"})
            assert rebound.status_code == 403, rebound.text
            assert "attacker.example" in rebound.text
            for host in ("localhost", "127.0.0.1"):
                port = rec.url.rsplit(":", 1)[1]
                own = HTTP.get(rec.url + "/tasks", headers={**HEADERS, "host": f"{host}:{port}"})
                assert own.status_code == 200, own.text
            rec.finish()
