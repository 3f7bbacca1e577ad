"""No web page reaches the control plane or changes an agent's state (issue 26, items 2 to 4):
cross-origin simple requests get 403 in the protocol's shape and change nothing, the admin API
answers only this server's Host (DNS rebinding), and `--admin-token` guards it. Real HTTP
against servers on 127.0.0.1 port 0; non-browser clients keep working."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.cli.serve import access_options
from mockagent.server.app import create_app
from mockagent.server.guard import allow_host_problem
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.agentex import PLATFORM
from tests.helpers.cassette_text import cassette

HTTP = httpx.Client(timeout=10.0, trust_env=False)
V1 = {"A2A-Version": "1.0"}
EVIL = "https://evil.example"
PLANTED = {"name": "planted", "match": {"text": "hi"}, "reply": {"message": "planted"}}
ANSWERS = cassette(
    """
    - name: question
      match: {text: hi}
      reply: {message: "Yes."}
      times: 100
    """
)


def send_body(text: str = "hi") -> dict[str, Any]:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.yaml"
    path.write_text(ANSWERS)
    return path


@pytest.fixture
def server(answers: Path) -> Iterator[ServerThread]:
    with serve_in_thread(answers) as started:
        yield started


def said(server: ServerThread) -> str:
    """What the agent answers `hi` now (an official client's request: JSON)."""
    answer = HTTP.post(server.url + "/", json=send_body(), headers=V1).json()
    return str(answer["result"]["message"]["parts"][0]["text"])


def names(server: ServerThread) -> list[str]:
    listed = HTTP.get(server.url + "/_mockagent/interactions").json()["interactions"]
    return [item["name"] for item in listed]


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ],
)
def test_a_web_pages_post_plants_no_interaction(server: ServerThread, content_type: str) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    refused = HTTP.post(
        server.url + "/_mockagent/interactions", content=json.dumps(PLANTED), headers=headers
    )
    assert refused.status_code == 403
    message = refused.json()["error"]["message"]
    assert refused.json()["error"]["code"] == 403
    assert "application/json" in message, message
    assert names(server) == ["question"]
    assert said(server) == "Yes."


def test_a_foreign_origin_is_refused_even_with_json(server: ServerThread) -> None:
    for path, body in [
        ("interactions", PLANTED),
        ("reset", {}),
        ("clock/advance", {"ms": 1000}),
        ("cassettes/load", {"path": "answers.yaml"}),
    ]:
        refused = HTTP.post(f"{server.url}/_mockagent/{path}", json=body, headers={"Origin": EVIL})
        assert refused.status_code == 403, path
        assert refused.json()["error"]["message"] == (
            f"cross-origin request refused: Origin {EVIL} is not this server; "
            "start mockagent with --allow-host evil.example to allow it"
        )
    assert HTTP.get(server.url + "/_mockagent/calls", headers={"Origin": "null"}).status_code == 403
    assert names(server) == ["question"]


def test_a_web_page_cannot_reset_or_advance_the_clock(server: ServerThread) -> None:
    said(server)
    for path in ("reset", "clock/advance"):
        refused = HTTP.post(
            f"{server.url}/_mockagent/{path}",
            content='{"ms": 1000}',
            headers={"Content-Type": "text/plain"},
        )
        assert refused.status_code == 403
    assert len(HTTP.get(server.url + "/_mockagent/calls").json()["calls"]) == 1


def test_clients_that_are_not_web_pages_work_as_before(server: ServerThread) -> None:
    own_origin = {"Origin": server.url, "Content-Type": "application/json; charset=utf-8"}
    added = HTTP.post(
        server.url + "/_mockagent/interactions", content=json.dumps(PLANTED), headers=own_origin
    )
    assert added.status_code == 201, added.text
    assert said(server) == "planted"
    local = {"Origin": "http://localhost:5173"}  # a browser app in development, on loopback
    assert HTTP.post(server.url + "/_mockagent/reset", json={}, headers=local).status_code == 200
    assert HTTP.post(server.url + "/_mockagent/reset").status_code == 200  # curl -X POST
    yaml_body = "name: y\nmatch: {text: yo}\nreply: {message: Yo.}\n"
    yaml_type = {"Content-Type": "application/yaml"}
    added = HTTP.post(server.url + "/_mockagent/interactions", content=yaml_body, headers=yaml_type)
    assert added.status_code == 201, added.text
    assert HTTP.get(server.url + "/_mockagent/", headers={"Host": "localhost:1"}).status_code == 200


def test_a_rebound_host_reads_no_journal(server: ServerThread) -> None:
    said(server)
    foreign = {"Host": "attacker.example"}
    refused = HTTP.get(server.url + "/_mockagent/calls", headers=foreign)
    assert refused.status_code == 403
    assert "calls" not in refused.text
    assert refused.json()["error"]["message"] == (
        "request refused: Host attacker.example is not this server's address (a guard against "
        "DNS rebinding); start mockagent with --allow-host attacker.example to allow it"
    )
    assert HTTP.get(server.url + "/_mockagent/", headers=foreign).status_code == 403
    for host in ("localhost:9", "127.0.0.1", "[::1]:8000", f"127.0.0.1:{server.port}"):
        assert HTTP.get(server.url + "/_mockagent/calls", headers={"Host": host}).status_code == 200


def test_agents_on_loopback_answer_no_rebound_host(server: ServerThread) -> None:
    """A loopback bind (the default, and the pytest fixture's): no container calls it by a
    service name, so its agents refuse a rebound Host in each binding's shape."""
    foreign = {**V1, "Host": "attacker.example"}
    rpc = HTTP.post(server.url + "/", json=send_body(), headers=foreign)
    assert rpc.status_code == 403 and rpc.json()["error"]["code"] == -32600
    assert "Host attacker.example" in rpc.json()["error"]["message"]
    for path in ("/tasks", "/tasks/t/pushNotificationConfigs", "/.well-known/agent-card.json"):
        rest = HTTP.get(server.url + path, headers=foreign)
        assert rest.status_code == 403, path
        assert rest.json()["error"]["status"] == "PERMISSION_DENIED"
    assert HTTP.get(server.url + "/_mockagent/calls").json()["calls"] == []
    for host in ("localhost", "127.0.0.1", "[::1]"):  # http://localhost:PORT and the like
        authority = f"{host}:{server.port}"
        card = HTTP.get(server.url + "/.well-known/agent-card.json", headers={"Host": authority})
        assert card.status_code == 200, host
        assert card.json()["supportedInterfaces"][0]["url"] == f"http://{authority}"
    assert HTTP.get(f"http://localhost:{server.port}/.well-known/agent-card.json").is_success
    assert said(server) == "Yes."


CONTAINER_NAMES = ["host.docker.internal", "host.containers.internal", "localhost.localdomain"]


@pytest.mark.parametrize("name", CONTAINER_NAMES)
def test_containers_reach_agents_on_loopback_by_their_host_names(
    server: ServerThread, name: str
) -> None:
    """Docker Desktop, Podman and testcontainers forward such names to the host's loopback, and
    `.internal` names cannot be rebound by a page (the review found them refused: 403)."""
    card = HTTP.get(
        server.url + "/.well-known/agent-card.json", headers={"Host": f"{name}:{server.port}"}
    )
    assert card.status_code == 200, card.text
    assert card.json()["supportedInterfaces"][0]["url"] == f"http://{name}:{server.port}"
    rebound = HTTP.get(server.url + "/tasks", headers={"Host": "host.docker.internal.evil.example"})
    assert rebound.status_code == 403


def test_agentex_on_loopback_answers_no_rebound_host(tmp_path: Path) -> None:
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    with serve_in_thread(path) as server:
        refused = HTTP.get(server.url + "/agents", headers={"Host": "attacker.example"})
        assert refused.status_code == 403 and refused.json()["code"] == 403
        assert "Host attacker.example" in refused.json()["message"]


def test_agents_on_another_interface_answer_any_host(answers: Path) -> None:
    with serve_in_thread(answers, host="0.0.0.0") as server:  # a container's bind
        url = f"http://127.0.0.1:{server.port}"
        foreign = {**V1, "Host": "agent-service:8000", "Origin": EVIL}
        answer = HTTP.post(url + "/", json=send_body(), headers={**V1, "Host": "agent-service"})
        assert answer.json()["result"]["message"]["parts"][0]["text"] == "Yes."
        card = HTTP.get(url + "/.well-known/agent-card.json", headers=foreign)
        assert card.status_code == 200 and card.json()["name"] == "tester"


def test_allow_host_names_a_host_and_its_origin(answers: Path) -> None:
    with serve_in_thread(answers, allow_hosts=["mock.test"]) as server:
        named = {"Host": "mock.test:8000", "Origin": "http://mock.test:3000"}
        assert HTTP.get(server.url + "/_mockagent/calls", headers=named).status_code == 200
        other = HTTP.get(server.url + "/_mockagent/calls", headers={"Host": "other.test"})
        assert other.status_code == 403
    with serve_in_thread(answers, allow_hosts=["*"]) as server:
        anyone = {"Host": "other.test", "Origin": EVIL}
        assert (
            HTTP.post(server.url + "/_mockagent/reset", json={}, headers=anyone).status_code == 200
        )
        text = {**anyone, "Content-Type": "text/plain"}
        assert (
            HTTP.post(server.url + "/_mockagent/reset", content="{}", headers=text).status_code
            == 403
        )


def test_the_admin_token_is_required_when_given(answers: Path) -> None:
    with serve_in_thread(answers, admin_token="s3cret") as server:
        url = server.url + "/_mockagent/calls"
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            refused = HTTP.get(url, headers=headers)
            assert refused.status_code == 401
            assert refused.headers["WWW-Authenticate"].startswith("Bearer")
            assert "--admin-token" in refused.json()["error"]["message"]
        assert HTTP.get(url, headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert HTTP.get(server.url + "/_mockagent/").status_code == 401  # the inspector too
        assert said(server) == "Yes."  # agents need no token


@pytest.mark.parametrize("content_type", ["text/plain", None])
def test_a_json_rpc_post_a_page_could_send_is_a_403_json_rpc_error(
    server: ServerThread, content_type: str | None
) -> None:
    headers = {**V1} if content_type is None else {**V1, "Content-Type": content_type}
    refused = HTTP.post(server.url + "/", content=json.dumps(send_body()), headers=headers)
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert error["code"] == -32005 and "Content-Type" in error["message"]
    assert HTTP.get(server.url + "/_mockagent/calls").json()["calls"] == []


def test_agent_calls_refuse_a_foreign_origin_in_each_bindings_shape(server: ServerThread) -> None:
    evil = {**V1, "Origin": EVIL}
    rpc = HTTP.post(server.url + "/", json=send_body(), headers=evil)
    assert rpc.status_code == 403 and rpc.json()["error"]["code"] == -32600
    assert "Origin https://evil.example" in rpc.json()["error"]["message"]
    rest = HTTP.post(server.url + "/message:send", json={"message": {}}, headers=evil)
    assert rest.status_code == 403 and rest.json()["error"]["status"] == "PERMISSION_DENIED"
    form = {**V1, "Content-Type": "application/x-www-form-urlencoded"}
    typed = HTTP.post(server.url + "/message:send", content=b"{}", headers=form)
    assert typed.status_code == 415  # the HTTP+JSON binding's answer to a wrong Content-Type
    assert typed.json()["error"]["details"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
    assert HTTP.get(server.url + "/_mockagent/calls").json()["calls"] == []
    a2a_json = {**V1, "Content-Type": "application/a2a+json"}
    sent = HTTP.post(server.url + "/", content=json.dumps(send_body()), headers=a2a_json)
    assert sent.json()["result"]["message"]["parts"][0]["text"] == "Yes."


def test_agentex_rpc_refuses_a_web_pages_post(tmp_path: Path) -> None:
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    body = {
        "method": "message/send",
        "params": {"content": {"type": "text", "author": "user", "content": "hi?"}},
    }
    with serve_in_thread(path) as server:
        url = server.url + "/agents/name/echo-bot/rpc"
        refused = HTTP.post(url, content=json.dumps(body), headers={"Content-Type": "text/plain"})
        assert refused.status_code == 403
        assert "not text/plain" in refused.json()["error"]["message"]
        evil = HTTP.post(url, json=body, headers={"Origin": EVIL})
        assert evil.status_code == 403 and "Origin" in evil.json()["error"]["message"]
        assert HTTP.get(server.url + "/_mockagent/calls").json()["calls"] == []
        assert HTTP.post(url, json=body).json()["error"] is None


def test_serve_takes_the_token_from_the_environment_and_allowed_hosts(answers: Path) -> None:
    command = [sys.executable, "-m", "mockagent.cli", "serve", str(answers), "--port", "0"]
    command += ["--allow-host", "mock.test"]
    out, err = answers.with_suffix(".out"), answers.with_suffix(".err")
    env = {**os.environ, "MOCKAGENT_ADMIN_TOKEN": "from-env"}
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)
    try:
        deadline = time.monotonic() + 30
        while not (ready := re.search(r"mockagent ready on (http://\S+)", out.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
            time.sleep(0.01)  # polling the output for the line
        calls = ready.group(1) + "/_mockagent/calls"
        assert HTTP.get(calls).status_code == 401
        token = {"Authorization": "Bearer from-env"}
        assert HTTP.get(calls, headers=token).status_code == 200
        assert HTTP.get(calls, headers={**token, "Host": "mock.test"}).status_code == 200
        assert HTTP.get(calls, headers={**token, "Host": "x.test"}).status_code == 403
        card = ready.group(1) + "/.well-known/agent-card.json"  # granian's workers, loopback
        assert HTTP.get(card, headers={"Host": "x.test"}).status_code == 403
        assert HTTP.get(card, headers={"Host": "mock.test"}).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "from-env" not in out.read_text() + err.read_text()


def test_a_network_bind_without_a_token_warns(capsys: pytest.CaptureFixture[str]) -> None:
    assert access_options("0.0.0.0", (), None, admin=True)["admin_token"] is None
    assert "--admin-token" in capsys.readouterr().err
    access_options("0.0.0.0", (), "t", admin=True)
    access_options("127.0.0.1", (), None, admin=True)
    access_options("0.0.0.0", (), None, admin=False)
    assert capsys.readouterr().err == ""


def test_a_lower_case_post_resets_nothing(server: ServerThread) -> None:
    said(server)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:  # http.client sends the method as given (httpx would upper-case it)
        conn.request(
            "post", "/_mockagent/reset", body=b"{}", headers={"Content-Type": "text/plain"}
        )
        refused = conn.getresponse()
        assert refused.status == 403, refused.read()
    finally:
        conn.close()
    assert len(HTTP.get(server.url + "/_mockagent/calls").json()["calls"]) == 1


KIT_RUNNER = Path(__file__).parents[2] / "cassettes" / "kit" / "test-runner.yaml"
CROSS_SITE = {"Sec-Fetch-Site": "cross-site"}


def test_a_cross_site_get_moves_no_task(tmp_path: Path) -> None:
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Run the suite"}]}
    body = {"message": message, "configuration": {"returnImmediately": True}}
    with serve_in_thread(KIT_RUNNER) as server:
        task = HTTP.post(server.url + "/message:send", json=body, headers=V1).json()["task"]
        assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
        url = f"{server.url}/tasks/{task['id']}"
        for _ in range(3):  # an <img src> on any page, reloaded
            refused = HTTP.get(url, headers={**V1, **CROSS_SITE})
            assert refused.status_code == 403
            error = refused.json()["error"]
            assert error["status"] == "PERMISSION_DENIED" and "cross-site" in error["message"]
        rpc = HTTP.get(server.url + "/", headers=CROSS_SITE)
        assert rpc.status_code == 403
        polled = HTTP.get(url, headers={**V1, "Sec-Fetch-Site": "same-origin"}).json()
        assert polled["status"]["state"] == "TASK_STATE_WORKING"  # the first poll's step
        calls = HTTP.get(server.url + "/_mockagent/calls", headers=CROSS_SITE)
        assert calls.status_code == 403
        local = {**CROSS_SITE, "Origin": "http://localhost:5173"}  # a local app's fetch()
        assert HTTP.get(url, headers={**V1, **local}).status_code == 200
        for site in ("none", "same-site", "same-origin"):  # typed in, or this server's page
            assert HTTP.get(url, headers={**V1, "Sec-Fetch-Site": site}).status_code == 200


def test_agentex_refuses_a_cross_site_poll(tmp_path: Path) -> None:
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    with serve_in_thread(path) as server:
        for url in ("/tasks/any", "/messages?task_id=any", "/agents"):
            refused = HTTP.get(server.url + url, headers=CROSS_SITE)
            assert refused.status_code == 403, url
            assert "cross-site" in refused.json()["message"] and refused.json()["code"] == 403
        assert HTTP.get(server.url + "/agents").status_code == 200
        assert HTTP.get(server.url + "/_mockagent/calls").json()["calls"] == []


def raw_request(server: ServerThread, method: str, path: str, host: str | None = None) -> Any:
    """(status, headers, JSON body) of a request as sent (http.client keeps its method and Host)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.headers, json.loads(answer.read())
    finally:
        conn.close()


@pytest.mark.parametrize("method", ["FOO", "PROPFIND", "TRACE"])
@pytest.mark.parametrize("path", ["/_mockagent/calls", "/_mockagent"])
def test_an_unknown_method_on_the_admin_api_is_a_405(
    server: ServerThread, method: str, path: str
) -> None:
    status, headers, body = raw_request(server, method, path)
    assert status == 405 and body["error"]["code"] == 405
    assert body["error"]["message"].startswith(f"{method} {path}: method not allowed")
    assert "GET" in headers["Allow"]


@pytest.mark.parametrize("host", ["localhost..", "127.0.0.1.."])
def test_a_malformed_host_on_the_admin_api_is_a_400(server: ServerThread, host: str) -> None:
    status, _, body = raw_request(server, "GET", "/_mockagent/calls", host=host)
    assert status == 400 and body["error"]["code"] == 400
    assert repr(host) in body["error"]["message"]


def test_an_unknown_method_on_an_agent_is_a_405_not_not_found(server: ServerThread) -> None:
    status, _, body = raw_request(server, "FOO", "/message:send")
    assert status == 405 and body["error"]["status"] == "UNIMPLEMENTED"
    assert body["error"]["details"][0]["reason"] == "METHOD_NOT_FOUND"


def test_curl_d_without_a_content_type_is_told_what_to_send(server: ServerThread) -> None:
    form = {**V1, "Content-Type": "application/x-www-form-urlencoded"}  # what curl -d sends
    body = {**send_body(), "id": "call-7"}
    refused = HTTP.post(server.url + "/", content=json.dumps(body), headers=form)
    assert refused.status_code == 403
    answer = refused.json()
    assert answer["id"] == "call-7"  # the request it refuses, by the id its body names
    message = answer["error"]["message"]
    assert "cross-origin" not in message
    assert message.startswith("request refused: the Content-Type must be application/json")
    admin = HTTP.post(server.url + "/_mockagent/reset", content=b"{}", headers=form)
    assert "cross-origin" not in admin.json()["error"]["message"]
    page = HTTP.post(server.url + "/", content=b"[", headers={**form, "Origin": EVIL})
    assert page.json()["id"] is None and "cross-origin" in page.json()["error"]["message"]


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--allow-host", "http://myapp.test:3000", "is a URL: give its host name only"),
        ("--allow-host", "myapp.test:3000", "has a port: give the host name only"),
        ("--allow-host", "my app", "is not a host name, an IP address or '*'"),
        ("--webhook-allow", "http://x", "is a URL: give its host (and :PORT), such as 'x'"),
        ("--admin-token", "", "the token is empty"),
        ("--admin-token", " ", "the token is empty"),
    ],
)
def test_serve_refuses_a_value_that_would_never_match(
    answers: Path, option: str, value: str, said: str
) -> None:
    result = CliRunner().invoke(main, ["serve", str(answers), "--port", "0", option, value])
    assert result.exit_code == 2
    assert f"Invalid value for {option}" in result.output and said in result.output


@pytest.mark.parametrize("value", ["http://a.test:3000", "a.test:3000"])
def test_record_refuses_an_allow_host_that_would_never_match(tmp_path: Path, value: str) -> None:
    """Before, `record --allow-host http://a.test:3000` started and the name never matched."""
    cassette = str(tmp_path / "rec.yaml")
    args = ["record", "--upstream", "http://127.0.0.1:9", "--cassette", cassette]
    result = CliRunner().invoke(main, [*args, "--port", "0", "--allow-host", value])
    assert result.exit_code == 2
    assert "Invalid value for --allow-host" in result.output


def test_allow_host_takes_names_addresses_and_the_wildcard() -> None:
    for name in ("myapp.test", "my_service", "10.0.0.5", "::1", "[::1]", "*", "host.test."):
        assert allow_host_problem(name) is None, name
    with pytest.raises(ValueError, match="allow_hosts: 'http://x.test' is a URL"):
        create_app(KIT_RUNNER, allow_hosts=["http://x.test"])


def test_the_token_help_says_how_a_browser_views_the_inspector() -> None:
    help_text = " ".join(CliRunner().invoke(main, ["serve", "--help"]).output.split())
    assert "A browser cannot send it" in help_text and "SSH tunnel" in help_text
    shown = (Path(__file__).parents[2] / "docs" / "serving.md").read_text()
    assert "the inspector page answers a browser\n401" in shown


def test_the_inspector_page_allows_only_its_own_style(server: ServerThread) -> None:
    page = HTTP.get(server.url + "/_mockagent/")
    assert page.status_code == 200
    policy = dict(
        part.strip().split(" ", 1) for part in page.headers["Content-Security-Policy"].split(";")
    )
    assert policy["default-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert "script-src" not in policy and "<script" not in page.text
    css = re.search(r"<style>(.*?)</style>", page.text, re.DOTALL)
    assert css is not None
    digest = base64.b64encode(hashlib.sha256(css.group(1).encode()).digest()).decode()
    assert policy["style-src"] == f"'sha256-{digest}'"  # the page's style, and only it
    assert page.headers["X-Frame-Options"] == "DENY"
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    assert page.headers["Referrer-Policy"] == "no-referrer"


def test_the_card_varies_by_host(server: ServerThread) -> None:
    card = HTTP.get(server.url + "/.well-known/agent-card.json", headers={"Host": "localhost:1"})
    assert card.headers["Cache-Control"].startswith("public")
    assert card.headers["Vary"] == "Host"  # its interface URLs are built from the Host
    assert card.json()["supportedInterfaces"][0]["url"] == "http://localhost:1"
    again = HTTP.get(
        server.url + "/.well-known/agent-card.json",
        headers={"If-None-Match": card.headers["ETag"], "Host": "localhost:1"},
    )
    assert again.status_code == 304 and again.headers["Vary"] == "Host"
