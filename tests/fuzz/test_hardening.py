"""Hardening: loopback by default, a body limit answered 413 in each protocol's shape, the admin
API off by default on a non-loopback bind.

Also hardening, tested elsewhere: YAML tags that construct objects are refused
(tests/fuzz/test_hostile_yaml.py); cassette paths loaded through the admin API stay in their
folder, no `..`, no absolute paths, no symlinks out
(tests/admin/test_admin_api.py::test_load_refuses_paths_outside_the_folder).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mockagent.cli import main as cli
from mockagent.cli import serve as cli_serve
from mockagent.server.app import MAX_BODY, create_app

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
LIMIT = 1000


@pytest.fixture(scope="module")
def kit():
    app = create_app(CASSETTES / "kit", max_body=LIMIT)
    yield app.test_client()
    app.extensions["mockagent"].close()


@pytest.fixture(scope="module")
def agentex():
    app = create_app(CASSETTES / "agentex", max_body=LIMIT)
    yield app.test_client()
    app.extensions["mockagent"].close()


def test_serve_and_record_listen_on_loopback_by_default():
    runner = CliRunner()
    for command in ("serve", "record"):
        result = runner.invoke(cli.main, [command, "--help"], terminal_width=200)
        assert result.exit_code == 0
        assert "--host TEXT" in result.output and "[default: 127.0.0.1]" in result.output, (
            result.output
        )


def test_serve_help_shows_the_body_limit_and_admin_switch():
    result = CliRunner().invoke(cli.main, ["serve", "--help"], terminal_width=200)
    assert f"[default: {MAX_BODY};" in result.output and "--admin / --no-admin" in result.output


def _big(size: int = LIMIT + 1) -> bytes:
    return json.dumps({"pad": "x" * (size - 11)}).encode()


def test_big_is_the_size_it_says():
    assert len(_big()) == LIMIT + 1 and len(_big(LIMIT)) == LIMIT


# (client, path, check of the body): one per protocol shape.
SHAPES = [
    (
        "kit",
        "/deployer/",
        lambda b: b["jsonrpc"] == "2.0" and b["id"] is None and b["error"]["code"] == -32600,
    ),
    (
        "kit",
        "/deployer/message:send",
        lambda b: b["error"]["code"] == 413 and b["error"]["status"] == "INVALID_ARGUMENT",
    ),
    ("kit", "/deployer/projects/p/message:send", lambda b: b["error"]["code"] == 413),
    ("kit", "/deployer/v1/message:send", lambda b: set(b) == {"message", "type"}),
    ("kit", "/nowhere/", lambda b: b["error"]["code"] == 413),
    (
        "kit",
        "/_mockagent/reset",
        lambda b: b["error"]["code"] == 413 and set(b["error"]) == {"code", "message"},
    ),
    (
        "agentex",
        "/sync-agent/agents/name/echo-bot/rpc",
        lambda b: b["jsonrpc"] == "2.0" and b["error"]["code"] == -32602,
    ),
    ("agentex", "/sync-agent/agents/agent-sync-1/rpc", lambda b: b["error"]["code"] == -32602),
    ("agentex", "/sync-agent/tasks/t-1/cancel", lambda b: b["code"] == 413 and b["data"] is None),
    ("agentex", "/_mockagent/reset", lambda b: b["error"]["code"] == 413),
]


@pytest.mark.parametrize(
    ("client", "path", "check"), SHAPES, ids=[f"{c}:{p}" for c, p, _ in SHAPES]
)
def test_a_body_over_the_limit_is_413_in_the_protocols_shape(request, client, path, check):
    response = request.getfixturevalue(client).post(
        path, data=_big(), content_type="application/json"
    )
    assert response.status_code == 413, response.data
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert "larger than the limit of 1000 bytes" in json.dumps(body) and check(body), body


@pytest.mark.parametrize(
    ("client", "path"), [(c, p) for c, p, _ in SHAPES], ids=[f"{c}:{p}" for c, p, _ in SHAPES]
)
def test_a_body_at_the_limit_is_read(request, client, path):
    response = request.getfixturevalue(client).post(
        path, data=_big(LIMIT), content_type="application/json"
    )
    assert response.status_code != 413 and response.status_code < 500, response.data


def test_a_body_without_a_length_is_counted_while_read(kit, agentex):
    """A chunked body (no Content-Length) is read up to the limit + 1 bytes, then refused."""
    for client, path, key in (
        (kit, "/deployer/", "error"),
        (kit, "/deployer/message:send", "error"),
        (agentex, "/async-agent/agents/name/research-bot/rpc", "error"),
        (kit, "/_mockagent/reset", "error"),  # the admin API's too: read before Flask sees it
    ):
        response = client.post(
            path,
            input_stream=io.BytesIO(_big(10 * LIMIT)),
            headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
            environ_overrides={"wsgi.input_terminated": True},
        )
        assert response.status_code == 413 and key in response.get_json(), response.data


class BrokenFraming(io.BytesIO):
    """A chunked body as a server's reader sees it when the framing is malformed: it raises."""

    def read(self, size: int | None = -1) -> bytes:
        raise OSError("Invalid chunk header")

    readline = read1 = read


@pytest.mark.parametrize(
    ("client", "path", "check"), SHAPES, ids=[f"{c}:{p}" for c, p, _ in SHAPES]
)
def test_a_body_the_server_cannot_read_is_400_in_the_protocols_shape(request, client, path, check):
    """Every server's reader raises on a malformed chunked body (werkzeug OSError, others their
    own): the client's fault, answered 400 like a body over the limit, not a 500."""
    response = request.getfixturevalue(client).post(
        path,
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input": BrokenFraming(), "wsgi.input_terminated": True},
    )
    assert response.status_code == 400, response.data
    body = response.get_json()
    text = json.dumps(body)
    assert "could not be read: Invalid chunk header" in text, body
    assert check(json.loads(text.replace("400", "413"))), body  # the 413's shape, with 400


@pytest.mark.parametrize(
    ("client", "path", "check"), SHAPES, ids=[f"{c}:{p}" for c, p, _ in SHAPES]
)
def test_transfer_encoding_in_http_1_0_is_400_in_the_protocols_shape(request, client, path, check):
    """HTTP/1.0 has no chunked coding (RFC 9112 6.1): werkzeug's server decodes it anyway, so
    the app refuses the faulty framing whatever server it runs on."""
    response = request.getfixturevalue(client).post(
        path,
        input_stream=io.BytesIO(b"2\r\n{}\r\n0\r\n\r\n"),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        environ_overrides={"SERVER_PROTOCOL": "HTTP/1.0", "wsgi.input_terminated": True},
    )
    assert response.status_code == 400, response.data
    text = json.dumps(response.get_json())
    assert "Transfer-Encoding in an HTTP/1.0 request" in text, text
    assert check(json.loads(text.replace("400", "413"))), text


def test_the_default_limit_takes_a_few_megabytes():
    app = create_app(CASSETTES / "kit")
    client = app.test_client()
    text = "x" * (MAX_BODY // 2)
    params = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}}
    ok = client.post(
        "/deployer/", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    )
    assert ok.status_code == 200
    refused = client.post("/deployer/", data=b" " * (MAX_BODY + 1), content_type="application/json")
    assert refused.status_code == 413 and refused.get_json()["error"]["code"] == -32600
    app.extensions["mockagent"].close()


def test_no_limit_when_asked():
    app = create_app(CASSETTES / "kit", max_body=None)
    response = app.test_client().post(
        "/deployer/", data=b" " * (MAX_BODY + 1), content_type="application/json"
    )
    assert response.status_code == 200 and response.get_json()["error"]["code"] == -32700
    app.extensions["mockagent"].close()


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_loopback_hosts(host, loopback):
    assert cli_serve.is_loopback(host) is loopback
    assert cli_serve.admin_enabled(host, None) is loopback
    assert cli_serve.admin_enabled(host, True) is True
    assert cli_serve.admin_enabled(host, False) is False


def _served(monkeypatch, *args: str) -> tuple[Any, Any]:
    """Run `mockagent serve ARGS` up to the point it would listen: (app, result)."""
    seen: dict[str, Any] = {}

    monkeypatch.setattr(cli_serve, "_listen", lambda host, port: seen.update(host=host))
    monkeypatch.setattr(cli_serve, "_announce", lambda sock, lines, how="": None)
    monkeypatch.setattr(
        cli_serve, "_run", lambda app, sock, announce, threads=32, **how: seen.update(app=app)
    )
    result = CliRunner().invoke(cli.main, ["serve", str(CASSETTES / "kit"), *args])
    assert result.exit_code == 0, result.output
    return seen["app"], seen["host"]


@pytest.mark.parametrize(
    ("args", "admin"),
    [
        ((), True),
        (("--host", "localhost"), True),
        (("--host", "::1"), True),
        (("--host", "0.0.0.0"), False),
        (("--host", "192.168.1.10"), False),
        (("--host", "0.0.0.0", "--admin"), True),
        (("--no-admin",), False),
        (("--host", "0.0.0.0", "--no-admin"), False),
    ],
)
def test_serve_admin_api_only_on_loopback_unless_asked(monkeypatch, args, admin):
    app, _ = _served(monkeypatch, *args)
    response = app.test_client().get("/_mockagent/agents")
    if admin:
        assert response.status_code == 200 and "agents" in response.get_json()
    else:  # just a path no agent is mounted at
        assert (
            response.status_code == 404
            and "No agent at /_mockagent/agents" in response.get_json()["error"]["message"]
        )
    app.extensions["mockagent"].close()


def test_serve_max_body(monkeypatch):
    app, host = _served(monkeypatch, "--max-body", "100")
    assert host == "127.0.0.1"
    client = app.test_client()
    assert (
        client.post(
            "/deployer/message:send", data=b" " * 101, content_type="application/json"
        ).status_code
        == 413
    )
    assert (
        client.post(
            "/deployer/message:send", data=b"{}", content_type="application/json"
        ).status_code
        != 413
    )
    app.extensions["mockagent"].close()
    assert (
        CliRunner().invoke(cli.main, ["serve", str(CASSETTES / "kit"), "--max-body", "0"]).exit_code
        == 2
    )
