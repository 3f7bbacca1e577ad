"""Nothing recorded is lost and nothing good is overwritten: PATH.partial while recording, an
atomic write at the end, a SIGKILL that leaves PATH alone, SIGTERM that writes it; an upstream
that is down or talks garbage gives the client a protocol error and records nothing; the proxy
only ever talks to its upstream."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from mockagent.cassette.loader import load_cassette
from mockagent.proxy.session import partial_path
from mockagent.proxy.upstream import Upstream
from tests.helpers.recording import (
    HTTP,
    TEST_RUNNER,
    closed_port,
    message,
    raw_http_server,
    record_process,
    recording,
    rpc,
    upstream_agent,
    wait_for,
)

CARD = "/.well-known/agent-card.json"


def names(text: str) -> list[str]:
    return [i["name"] for i in yaml.safe_load(text)["interactions"]]


def send(url: str, text: str) -> dict[str, Any]:
    return rpc(url, "SendMessage", {"message": message(text)})


# -- PATH.partial and the atomic write ----------------------------------------------------------


def test_the_partial_holds_each_call_and_finish_replaces_path_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rec.yaml"
    shutil.copy(TEST_RUNNER, path)
    before = path.read_bytes()
    partial = partial_path(path)
    assert partial == tmp_path / "rec.yaml.partial"
    with upstream_agent() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        assert not partial.exists()  # the card alone records no interaction
        send(rec.url, "Run the tests at 9f3c2e1")
        assert partial.exists()
        assert names(partial.read_text()) == ["run-the-tests-at-9f3c2e1"]
        assert load_cassette(partial).cassette.agent.name == "test-runner"
        send(rec.url, "Run the tests at deadbee")
        assert names(partial.read_text()) == [
            "run-the-tests-at-9f3c2e1",
            "run-the-tests-at-deadbee",
        ]
        assert path.read_bytes() == before  # PATH is untouched until finish

        replaced: list[tuple[Path, Path]] = []
        real_replace = os.replace

        def spy(src: Any, dst: Any) -> None:
            if Path(dst) == path:
                # At the moment of the rename, PATH still holds the old cassette and the new one is
                # complete in a temporary file beside it.
                assert path.read_bytes() == before
                assert Path(src).parent == tmp_path
                assert names(Path(src).read_text()) == [
                    "run-the-tests-at-9f3c2e1",
                    "run-the-tests-at-deadbee",
                ]
                replaced.append((Path(src), Path(dst)))
            real_replace(src, dst)

        monkeypatch.setattr(os, "replace", spy)
        assert rec.finish() == path
    assert len(replaced) == 1
    assert names(path.read_text()) == ["run-the-tests-at-9f3c2e1", "run-the-tests-at-deadbee"]
    assert not partial.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.yaml"]  # no temporary files left


def test_sigkill_leaves_path_as_it_was_and_the_partial_with_the_call(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    shutil.copy(TEST_RUNNER, path)
    before = path.read_bytes()
    partial = partial_path(path)
    with (
        upstream_agent() as upstream,
        record_process(
            "--upstream", upstream.url, "--cassette", str(path), "--mode", "all"
        ) as recorder,
    ):
        HTTP.get(recorder.url + CARD)
        reply = send(recorder.url, "Run the tests at 9f3c2e1")
        assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        wait_for(
            lambda: partial.exists() and "Run the tests at 9f3c2e1" in partial.read_text(),
            what="PATH.partial with the call",
        )
        recorder.proc.send_signal(signal.SIGKILL)
        assert recorder.proc.wait(timeout=10) == -signal.SIGKILL
    assert path.read_bytes() == before
    assert names(partial.read_text()) == ["run-the-tests-at-9f3c2e1"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_sigterm_ends_the_recording_cleanly_and_writes_the_cassette(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    with (
        upstream_agent() as upstream,
        record_process("--upstream", upstream.url, "--cassette", str(path)) as recorder,
    ):
        HTTP.get(recorder.url + CARD)
        send(recorder.url, "Run the tests at deadbee")
        recorder.proc.send_signal(signal.SIGTERM)
        assert recorder.proc.wait(timeout=10) == 0
        out = recorder.rest_of_stdout()
        err = recorder.proc.stderr.read()  # type: ignore[union-attr]
    assert f"wrote {path}" in out.splitlines()
    assert "Traceback" not in err
    assert names(path.read_text()) == ["run-the-tests-at-deadbee"]
    assert not partial_path(path).exists()
    # No schema.json in its folder: no schema line, never a path into this machine's venv. The
    # mode is the one any new file gets.
    assert "$schema" not in path.read_text() and "site-packages" not in path.read_text()
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # mkstemp made it 0600


# -- an upstream that is down or answers garbage ------------------------------------------------


def calls_through(url: str) -> tuple[dict[str, Any], Any]:
    """A JSON-RPC SendMessage and a REST one: (the JSON-RPC response, the REST httpx response)."""
    jsonrpc = send(url, "Run the tests at 9f3c2e1")  # asserts HTTP 200
    rest = HTTP.post(
        url + "/message:send",
        json={"message": message("Run the tests at 9f3c2e1")},
        headers={"A2A-Version": "1.0"},
    )
    return jsonrpc, rest


def assert_nothing_recorded(rec: Any, path: Path) -> None:
    assert rec.finish() is None
    assert not path.exists()
    assert not partial_path(path).exists()


def test_an_upstream_that_is_down_gives_errors_saying_why_and_records_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rec.yaml"
    upstream = f"http://127.0.0.1:{closed_port()}"
    reason = f"upstream {upstream} refused the connection"
    with recording(upstream, path) as rec:
        jsonrpc, rest = calls_through(rec.url)
        stream = rpc(
            rec.url, "SendStreamingMessage", {"message": message("Run the tests at 9f3c2e1")}
        )
        card = HTTP.get(rec.url + CARD)
        assert rec.app.extensions["mockagent.recording"].failures() == [
            f"{reason}: 4 calls got an error instead of an answer, and nothing of it was recorded"
        ]
        assert_nothing_recorded(rec, path)
    assert (jsonrpc["error"]["code"], jsonrpc["error"]["message"]) == (-32603, reason)
    assert (stream["error"]["code"], stream["error"]["message"]) == (-32603, reason)
    assert rest.status_code == 502
    assert rest.json()["error"]["code"] == 502
    assert rest.json()["error"]["status"] == "UNAVAILABLE"  # gRPC maps a 502 to UNAVAILABLE
    assert rest.json()["error"]["message"] == reason
    # The reason is in the status line too, where a client that shows only the status shows it.
    assert rest.reason_phrase == reason
    assert (card.status_code, card.reason_phrase) == (502, reason)
    assert card.json()["error"]["message"] == reason


def test_an_upstream_that_answers_garbage_gives_invalid_agent_response_and_records_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rec.yaml"
    with raw_http_server(b"not json") as (url, _), recording(url, path) as rec:
        jsonrpc, rest = calls_through(rec.url)
        assert_nothing_recorded(rec, path)
    assert jsonrpc["error"]["code"] == -32006
    assert rest.status_code == 502
    error = rest.json()["error"]
    assert error["code"] == 502
    assert [d.get("reason") for d in error["details"]] == ["INVALID_AGENT_RESPONSE"]


def test_an_upstream_without_a_card_says_why_in_the_status_line_too(tmp_path: Path) -> None:
    with raw_http_server(b"no", status=404) as (url, _), recording(url, tmp_path / "r.yaml") as rec:
        card = HTTP.get(rec.url + CARD)
    reason = f"upstream card: GET {CARD} answered HTTP 404"
    # Before, only the body said so: every 502 of the proxy is rendered by one table now.
    assert (card.status_code, card.reason_phrase) == (502, reason)
    assert card.json()["error"]["message"] == reason


# -- the proxy talks to its upstream only ---------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["//evil.example/x", "//evil.example:80/x?a=1", "/../evil.example/x"]
)
def test_upstream_urls_stay_on_the_upstream(path: str) -> None:
    for base in ("http://127.0.0.1:1", "http://127.0.0.1:1/agent/"):
        url = Upstream(base).url_for(path)
        parts = urlsplit(url)
        assert (parts.scheme, parts.netloc) == ("http", "127.0.0.1:1"), url
        assert parts.path.startswith(urlsplit(base).path.rstrip("/") + "/")


@pytest.mark.parametrize("target", ["//evil.example/x", "http://evil.example/x"])
def test_a_request_for_another_host_reaches_the_upstream(tmp_path: Path, target: str) -> None:
    """The target never sends the proxy elsewhere: a path that looks like a host reaches the
    upstream; an absolute URI names its own Host (evil.example), which the proxy on loopback
    refuses (403, as a DNS-rebound page), forwarding nothing."""
    with (
        raw_http_server(b"from the upstream", content_type="text/plain") as (url, seen),
        recording(url, tmp_path / "rec.yaml") as rec,
    ):
        connection = http.client.HTTPConnection("127.0.0.1", rec.proxy.port, timeout=10)
        try:
            connection.request("GET", target, headers={"Host": f"127.0.0.1:{rec.proxy.port}"})
            response = connection.getresponse()
            body = response.read()
        finally:
            connection.close()
        paths = []
        while not seen.empty():
            paths.append(seen.get())
    if target.startswith("http://"):
        assert response.status == 403 and b"evil.example" in body, body
        assert not any(p.endswith("/x") for p in paths), paths
    else:
        assert (response.status, body) == (200, b"from the upstream")
        assert any(p.endswith("/x") for p in paths if p != CARD), paths
