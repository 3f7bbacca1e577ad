"""The guard's decisions (mockagent.server.guard), request by request: what a web page can send
is refused, what other clients send is not."""

from __future__ import annotations

import pytest

from mockagent.server.guard import (
    Access,
    Seen,
    admin_refusal,
    agent_refusal,
    hostname,
    origin_refusal,
)

OPEN = Access()


@pytest.mark.parametrize(
    ("authority", "name"),
    [
        ("LocalHost:8000", "localhost"),
        ("[::1]:8000", "::1"),
        ("::1", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("example.test.:80", "example.test"),
        ("example.test:", "example.test"),
    ],
)
def test_hostname_drops_port_brackets_case_and_root_dot(authority: str, name: str) -> None:
    assert hostname(authority) == name


@pytest.mark.parametrize(
    "host", ["localhost", "app.localhost:3000", "127.0.0.2:1", "[::1]", "10.0.0.5:8000", None]
)
def test_loopback_names_and_addresses_reach_the_admin_api(host: str | None) -> None:
    assert admin_refusal(Seen("GET", host=host), OPEN) is None


def test_a_name_reaches_it_only_when_allowed() -> None:
    assert admin_refusal(Seen("GET", host="mock.test:80"), OPEN) is not None
    assert admin_refusal(Seen("GET", host="mock.test:80"), Access.of(["Mock.Test:1"])) is None
    assert admin_refusal(Seen("GET", host="any.test"), Access.of(["*"])) is None


@pytest.mark.parametrize(
    ("origin", "host", "refused"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", False),
        ("http://localhost:5173", "127.0.0.1:8000", False),
        ("http://10.0.0.5", "10.0.0.5:80", False),  # this server, by its address
        ("http://10.0.0.5:3000", "10.0.0.5:80", True),  # another site on that address
        ("https://evil.example", "127.0.0.1:8000", True),
        ("http://evil.example:8000", "evil.example:8000", True),  # rebound: same, not ours
        ("null", "127.0.0.1:8000", True),
        ("not an origin", "127.0.0.1:8000", True),
    ],
)
def test_an_origin_must_be_this_server_loopback_or_allowed(
    origin: str, host: str, refused: bool
) -> None:
    assert (origin_refusal(origin, host, OPEN) is not None) is refused


@pytest.mark.parametrize(
    ("content_type", "has_body", "refused"),
    [
        ("text/plain; charset=UTF-8", True, True),
        ("Application/X-WWW-Form-Urlencoded", True, True),
        ("multipart/form-data; boundary=b", True, True),
        (None, True, True),
        (None, False, False),  # curl -X POST, a2a-sdk's subscribe
        ("application/json; charset=utf-8", True, False),
        ("application/a2a+json", True, False),
        ("application/yaml", True, False),
    ],
)
def test_a_post_a_page_could_send_is_refused(
    content_type: str | None, has_body: bool, refused: bool
) -> None:
    seen = Seen("POST", host="127.0.0.1", content_type=content_type, has_body=has_body)
    assert (admin_refusal(seen, OPEN) is not None) is refused
    assert (agent_refusal(seen, OPEN) is not None) is refused


def test_agents_take_every_read_and_any_host() -> None:
    for method in ("GET", "HEAD", "OPTIONS"):
        seen = Seen(method, host="svc", origin="https://evil.example", content_type="text/plain")
        assert agent_refusal(seen, OPEN) is None
    assert agent_refusal(Seen("POST", host="svc", content_type="application/json"), OPEN) is None
    refusal = agent_refusal(Seen("DELETE", origin="https://evil.example"), OPEN)
    assert refusal is not None and refusal.status == 403 and refusal.reason == "origin"


def test_the_token_is_a_bearer_token() -> None:
    access = Access.of([], "t0ken")
    refusal = admin_refusal(Seen("GET", host="localhost"), access)
    assert refusal is not None and refusal.status == 401
    for given in ("t0ken", "Bearer t0ke", "Basic t0ken", "Bearer t0ken2"):
        assert admin_refusal(Seen("GET", authorization=given), access) is not None
    assert admin_refusal(Seen("GET", authorization="bearer  t0ken "), access) is None
    assert Access.of([], "").admin_token is None


@pytest.mark.parametrize("method", ["post", "Post", "pOST"])
def test_a_lower_case_post_is_held_to_the_same_rules(method: str) -> None:
    seen = Seen(method, host="127.0.0.1", content_type="text/plain", has_body=True)
    assert admin_refusal(seen, OPEN) is not None
    assert agent_refusal(seen, OPEN) is not None


def test_a_cross_site_request_is_refused_unless_its_origin_is_taken() -> None:
    page = Seen("GET", host="127.0.0.1:8000", fetch_site="Cross-Site")
    for refusal in (agent_refusal(page, OPEN), admin_refusal(page, OPEN)):
        assert refusal is not None and refusal.reason == "cross-site" and refusal.status == 403
    local = Seen("GET", fetch_site="cross-site", origin="http://localhost:5173")
    assert agent_refusal(local, OPEN) is None
    assert agent_refusal(page, Access.of(["*"])) is None
    for site in ("same-origin", "same-site", "none", None):
        assert agent_refusal(Seen("GET", fetch_site=site), OPEN) is None


def test_agents_on_loopback_answer_only_this_servers_hosts() -> None:
    loopback = Access.of(["mock.test"], agent_hosts=True)
    for host in ("localhost:1", "127.0.0.1", "[::1]:8000", "mock.test", "10.0.0.5", None):
        assert agent_refusal(Seen("GET", host=host), loopback) is None, host
    refusal = agent_refusal(Seen("GET", host="attacker.example"), loopback)
    assert refusal is not None and refusal.reason == "host"
    assert agent_refusal(Seen("GET", host="attacker.example"), OPEN) is None
