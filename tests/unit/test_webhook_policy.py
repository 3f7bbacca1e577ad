"""Where webhooks may go: loopback and what the user allows, checked on every resolved address,
and the POST pinned to the checked address. No traffic ever leaves loopback here: refused
destinations are decided before any connection, and an allowed non-loopback one meets a patched
`socket.create_connection` that records the attempt and refuses it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mockagent.cassette import load_cassette
from mockagent.cassette.webhooks import parse_rule
from mockagent.cli.main import main
from mockagent.engine.webhooks.delivery import Deliverer
from mockagent.engine.webhooks.policy import SOURCES, WebhookPolicy
from mockagent.errors import CassetteError

REFUSED = f"is not loopback and not allowed by {SOURCES}"


@pytest.mark.parametrize(
    ("rule", "fields"),
    [
        ("*", (None, None, None)),
        ("10.0.0.0/8", ("10.0.0.0/8", None, None)),
        ("10.0.0.5:8080", ("10.0.0.5/32", None, 8080)),
        ("[fd00::1]:9000", ("fd00::1/128", None, 9000)),
        ("fd00::/8", ("fd00::/8", None, None)),
        ("Hooks.Test.", (None, "hooks.test", None)),
        ("hooks.test:443", (None, "hooks.test", 443)),
    ],
)
def test_rules_parse(rule: str, fields: tuple[Any, ...]) -> None:
    parsed = parse_rule(rule)
    network = str(parsed.network) if parsed.network else None
    assert (network, parsed.name, parsed.port) == fields


# "example.com\n:80": a `$`-anchored name check once passed the newline left before the port.
@pytest.mark.parametrize(
    "rule", ["", "10.0.0.0/33", "host:0", "host:http", "[::1", "a b", "a/b", "example.com\n:80"]
)
def test_malformed_rules_are_refused_by_name(rule: str) -> None:
    with pytest.raises(ValueError, match="webhook allow rule"):
        parse_rule(rule)


@pytest.mark.parametrize(
    ("host", "addresses", "allow", "why"),
    [
        ("169.254.169.254", ["169.254.169.254"], [], f"169.254.169.254 {REFUSED}"),
        ("10.0.0.5", ["10.0.0.5"], [], f"10.0.0.5 {REFUSED}"),
        ("metadata.test", ["169.254.169.254"], [], f"metadata.test (169.254.169.254) {REFUSED}"),
        ("::ffff:169.254.169.254", ["::ffff:169.254.169.254"], [], REFUSED),
        ("0.0.0.0", ["0.0.0.0"], [], REFUSED),  # reaches this machine, but nobody said so
        ("localhost", ["127.0.0.1", "10.0.0.5"], [], f"localhost (10.0.0.5) {REFUSED}"),
        ("10.0.0.5", ["10.0.0.5"], ["10.0.0.5:81"], REFUSED),  # another port only
        ("10.0.0.5", ["10.0.0.5"], ["192.168.0.0/16", "hooks.test"], REFUSED),
        ("nowhere.test", [], [], "nowhere.test resolves to no address"),
        ("localhost", ["127.0.0.1", "::1"], [], None),
        ("127.8.9.10", ["127.8.9.10"], [], None),
        ("10.0.0.5", ["10.0.0.5"], ["10.0.0.0/8"], None),
        ("10.0.0.5", ["10.0.0.5"], ["10.0.0.5:80"], None),
        ("hooks.test", ["10.0.0.5"], ["hooks.test"], None),
        ("hooks.test", ["203.0.113.9"], ["*"], None),
    ],
)
def test_every_resolved_address_must_be_allowed(
    host: str, addresses: list[str], allow: list[str], why: str | None
) -> None:
    refusal = WebhookPolicy.of(allow).refusal(host, 80, addresses)
    if why is None:
        assert refusal is None
    else:
        assert refusal is not None and why in refusal


class Attempts:
    """Connections httpx tries to open: loopback ones go through, others are recorded and fail
    as if refused (so no packet leaves the machine)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.outside: list[tuple[str, int]] = []
        real = socket.create_connection

        def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
            if address[0] not in ("127.0.0.1", "::1", "localhost"):
                self.outside.append((address[0], address[1]))
                raise ConnectionRefusedError(111, "refused by the test")
            return real(address, *args, **kwargs)

        monkeypatch.setattr(socket, "create_connection", create_connection)


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> Attempts:
    return Attempts(monkeypatch)


class _Hosts(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.hosts.append(self.headers["Host"])  # type: ignore[attr-defined]
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hosts)
    server.hosts = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def deliver(d: Deliverer, url: str) -> tuple[int | None, str | None]:
    d.post(url, b"{}", {"Authorization": "Bearer s"}, task_id="t", config_id="c", event="e")
    assert d.wait_idle(5)
    [result] = d.results()
    return result.status, result.error


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.5:8080/hook"]
)
def test_a_refused_destination_is_never_connected_to(attempts: Attempts, url: str) -> None:
    d = Deliverer()
    try:
        status, error = deliver(d, url)
    finally:
        d.close()
    host = url.split("/")[2].split(":")[0]
    assert (status, error) == (None, f"refused: {host} {REFUSED}")
    assert attempts.outside == []


def test_a_name_resolving_outside_is_refused_before_connecting(attempts: Attempts) -> None:
    d = Deliverer(resolver=lambda host, port: ["10.0.0.5"])
    try:
        assert deliver(d, "http://rebind.test/hook") == (
            None,
            f"refused: rebind.test (10.0.0.5) {REFUSED}",
        )
    finally:
        d.close()
    assert attempts.outside == []


def test_an_allowed_network_is_connected_to_at_the_checked_address(attempts: Attempts) -> None:
    d = Deliverer(policy=WebhookPolicy.of(["10.0.0.0/8"]), resolver=lambda h, p: ["10.0.0.5"])
    try:
        assert deliver(d, "http://hooks.test:8080/hook") == (None, "connection refused")
    finally:
        d.close()
    assert attempts.outside == [("10.0.0.5", 8080)]


def test_the_post_goes_to_the_checked_address_not_a_second_lookup(
    receiver: ThreadingHTTPServer,
) -> None:
    # The name resolves once, to loopback; the system cannot resolve it at all, so a second
    # lookup (httpx's own, at connect) would fail. The receiver still sees the name as Host.
    port = receiver.server_address[1]
    lookups: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    d = Deliverer(resolver=resolver)
    try:
        assert deliver(d, f"http://rebind.invalid:{port}/hook") == (204, None)
    finally:
        d.close()
    assert lookups == ["rebind.invalid"]
    assert receiver.hosts == [f"rebind.invalid:{port}"]  # type: ignore[attr-defined]


def test_localhost_tries_each_loopback_address_until_one_listens(
    receiver: ThreadingHTTPServer,
) -> None:
    port = receiver.server_address[1]  # listens on 127.0.0.1 only; ::1 (first) refuses
    d = Deliverer(resolver=lambda host, p: ["::1", "127.0.0.1"])
    try:
        assert deliver(d, f"http://localhost:{port}/hook") == (204, None)
    finally:
        d.close()


CASSETTE = """\
version: 1
agent:
  name: pusher
  description: Pushes.
  capabilities: {pushNotifications: true}
  skills: [{id: s, name: S, description: S}]
webhooks:
  allow: [%s]
interactions: []
"""


def test_the_cassette_allows_more_destinations(tmp_path: Path) -> None:
    from mockagent.dialects.a2a.push import PushNotifier
    from mockagent.engine import Engine

    path = tmp_path / "pusher.yaml"
    path.write_text(CASSETTE % '"10.0.0.0/8"')
    engine = Engine(load_cassette(path))
    notifier = PushNotifier(engine, allow=["hooks.test"])
    try:
        policy = notifier.deliverer.policy
        assert policy.refusal("x.test", 80, ["10.0.0.5"]) is None
        assert policy.refusal("hooks.test", 80, ["192.168.1.1"]) is None
        assert policy.refusal("x.test", 80, ["192.168.1.1"]) is not None
    finally:
        notifier.close()
        engine.close()


def test_a_malformed_cassette_rule_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "pusher.yaml"
    path.write_text(CASSETTE % '"10.0.0.0/33"')
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert "webhooks.allow" in str(caught.value) and "10.0.0.0/33" in str(caught.value)


def test_serve_refuses_a_malformed_webhook_allow(tmp_path: Path) -> None:
    path = tmp_path / "pusher.yaml"
    path.write_text(CASSETTE % "")
    result = CliRunner().invoke(main, ["serve", str(path), "--webhook-allow", "10.0.0.0/33"])
    assert result.exit_code == 2
    assert "--webhook-allow" in result.output and "10.0.0.0/33" in result.output
