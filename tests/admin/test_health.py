"""`GET /_mockagent/health` with the in-process store: 200 with the store's kind and nothing of
the journal, on with the admin API off (while the other admin routes are not), HEAD too, 405 in
the admin API's shape for other methods, no token asked, and the guard's refusals of a foreign
Origin or a page on another site, while a probe by `localhost` or a pod's IP passes."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mockagent.server.app import create_app, served_on
from mockagent.server.health import HEALTH_PATH
from mockagent.server.thread import serve_in_thread
from tests.helpers.paths import KIT

QUESTION = "Which languages do you review?"
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": QUESTION}]}},
}


@pytest.fixture(scope="module", params=[True, False], ids=["admin", "no-admin"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[httpx.Client, bool]]:
    """A kit server (admin API on or off) that has answered one call, with a client on it."""
    admin = request.param
    with (
        serve_in_thread(KIT, admin=admin, admin_token="s3cret") as server,
        httpx.Client(base_url=server.url) as client,
    ):
        answer = client.post("/code-reviewer/", json=SEND, headers={"A2A-Version": "1.0"})
        assert "result" in answer.json()
        yield client, admin


def test_health_is_200_with_the_store_and_no_journal(served: tuple[httpx.Client, bool]) -> None:
    client, _ = served
    answer = client.get(HEALTH_PATH)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.json() == {"status": "ok", "store": {"kind": "memory", "reachable": True}}
    for told in (QUESTION, "code-reviewer", "kit", "m1"):  # no call, agent or cassette
        assert told not in answer.text


def test_health_needs_no_token_while_the_admin_api_does(served: tuple[httpx.Client, bool]) -> None:
    client, admin = served
    assert client.get(HEALTH_PATH).status_code == 200  # no Authorization header
    other = client.get("/_mockagent/agents")
    # the admin API asks for its token; off, /_mockagent/agents is no route at all
    assert other.status_code == (401 if admin else 404)
    if admin:
        headers = {"Authorization": "Bearer s3cret"}
        assert client.get("/_mockagent/agents", headers=headers).status_code == 200


def test_head_answers_as_get_without_a_body(served: tuple[httpx.Client, bool]) -> None:
    client, _ = served
    answer = client.head(HEALTH_PATH)
    assert answer.status_code == 200 and answer.content == b""
    assert int(answer.headers["content-length"]) == len(client.get(HEALTH_PATH).content)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"])
def test_other_methods_are_405_in_the_admin_apis_shape(
    served: tuple[httpx.Client, bool], method: str
) -> None:
    client, _ = served
    answer = client.request(method, HEALTH_PATH, json={} if method != "OPTIONS" else None)
    assert answer.status_code == 405 and answer.headers["allow"] == "GET, HEAD"
    assert answer.json() == {
        "error": {"code": 405, "message": f"{method} {HEALTH_PATH}: use GET, HEAD"}
    }
    assert client.get(HEALTH_PATH).status_code == 200  # the connection goes on


@pytest.mark.parametrize(
    "host", ["localhost:8080", "127.0.0.1", "10.244.1.17:8080", "[fd00::17]:8080"]
)
def test_a_probe_by_localhost_or_a_pod_ip_passes(
    served: tuple[httpx.Client, bool], host: str
) -> None:
    """The kubelet sends the pod's IP as Host, Docker's healthcheck `localhost`: neither sends
    an Origin. An IP Host passes the guard even served on loopback (no rebound page has one)."""
    client, _ = served
    assert client.get(HEALTH_PATH, headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://attacker.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Host": "attacker.example"},  # served on loopback: a rebound name
    ],
    ids=["origin", "null-origin", "cross-site", "rebound-host"],
)
def test_the_guard_refuses_pages_of_other_sites(
    served: tuple[httpx.Client, bool], headers: dict[str, str]
) -> None:
    client, _ = served
    answer = client.get(HEALTH_PATH, headers=headers)
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == 403 and "refused" in answer.json()["error"]["message"]


def test_a_page_on_this_server_passes(served: tuple[httpx.Client, bool]) -> None:
    client, _ = served
    origin = str(client.base_url).rstrip("/")
    assert client.get(HEALTH_PATH, headers={"Origin": origin}).status_code == 200


def test_served_on_another_interface_any_host_passes() -> None:
    """On a non-loopback --host agents answer any Host (containers call them by a service
    name), and so does the health route; a foreign Origin is still refused."""
    app = create_app(KIT, admin=False)
    served_on(app, "0.0.0.0")
    try:
        client = app.test_client()
        assert client.get(HEALTH_PATH, headers={"Host": "mockagent:8080"}).status_code == 200
        foreign = {"Host": "mockagent:8080", "Origin": "https://attacker.example"}
        assert client.get(HEALTH_PATH, headers=foreign).status_code == 403
    finally:
        app.extensions["mockagent"].close()
