"""Secrets never reach a recorded cassette: headers, query keys, push-notification tokens and
credentials, passwords in URLs are redacted (with a placeholder that says what was removed), the
lists are configurable, and a secret that slips through anyway stops the cassette from being
written (LeakError), leaving a scrubbed PATH.partial."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.cassette.loader import load_cassette
from mockagent.cassette.secrets.redact import Redactor
from mockagent.proxy.session import LeakError, partial_path
from tests.helpers.recording import (
    HTTP,
    TEST_RUNNER,
    closed_port,
    message,
    recording,
    upstream_agent,
)

# An upstream whose answers carry what the tests need to see redacted (or leaked).
ECHO = """\
version: 1
agent:
  name: echo
  description: Answers with fixed texts the tests choose.
  capabilities: {streaming: true, pushNotifications: true}
  skills:
    - {id: echo, name: Echo, description: Echoes.}
clock: {start: 2026-10-06T09:00:00Z}
ids: {seed: echo}
interactions:
  - name: files
    match: {text: {contains: fetch}}
    reply:
      task:
        steps:
          - state: TASK_STATE_COMPLETED
            message:
              parts:
                - text: "Fetched https://user:hunter2@files.example/file?token=abc&sessionid=sid-4242-q&page=2"
                - url: "https://user:hunter2@files.example/file?token=abc"
                  mediaType: text/plain
              metadata: {apiKey: mk-7731-meta, sessionRef: sess-5521-extra, traceRef: tr-5521-extra}
  - name: echo-header
    match: {text: {contains: echo}}
    reply: {message: "hdr-7788-custom"}
  - name: cookie
    match: {text: {contains: cookie}}
    reply: {message: "Your session is ck-9090-val"}
  - name: leak
    match: {text: {contains: leak}}
    reply: {message: "The token is zq-SECRET-9931"}
"""

SECRET_VALUES = [
    "s3cr3t-token",
    "c00kie-val-123",
    "xk-5599-key",
    "qk-6612-query",
    "push-tok-4471",
    "push-cred-8812",
    "hunter2",
    "user:hunter2",
    "token=abc",
    "mk-7731-meta",
]


def send(url: str, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    response = HTTP.post(url + path, json=body, headers={"A2A-Version": "1.0", **(headers or {})})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def echo(tmp_path: Path) -> Any:
    path = tmp_path / "echo-upstream.yaml"
    path.write_text(ECHO)
    with upstream_agent(path, pace="instant") as server:
        yield server


def record_with_secrets(upstream: str, path: Path, redactor: Redactor | None = None) -> str:
    """Calls over both bindings carrying every kind of secret; the cassette text."""
    hook = f"http://127.0.0.1:{closed_port()}/hook"
    push = {
        "url": hook,
        "token": "push-tok-4471",
        "authentication": {"scheme": "Bearer", "credentials": "push-cred-8812"},
    }
    secret_headers = {
        "Authorization": "Bearer s3cr3t-token",
        "Cookie": "session=c00kie-val-123",
        "X-API-Key": "xk-5599-key",
    }
    url_part = {
        "url": "https://user:hunter2@host.example/file?token=abc",
        "mediaType": "text/plain",
    }
    with recording(upstream, path, redactor=redactor) as rec:
        HTTP.get(rec.url + "/.well-known/agent-card.json", headers=secret_headers)
        rest = send(
            rec.url,
            "/message:send?api_key=qk-6612-query",
            {
                "message": message("Please fetch the file", url_part),
                "configuration": {"taskPushNotificationConfig": push},
            },
            secret_headers,
        )
        assert rest["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        rpc = send(
            rec.url,
            "/?api_key=qk-6612-query",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": message("fetch again", url_part, message_id="m2"),
                    "configuration": {"taskPushNotificationConfig": {**push, "id": "hook-2"}},
                },
            },
            secret_headers,
        )
        assert rpc["result"]["task"]["status"]["message"]["parts"][1]["url"].startswith(
            "https://user:hunter2@"
        )
        assert rec.finish() == path
    return path.read_text()


def test_no_secret_reaches_the_cassette(tmp_path: Path, echo: Any) -> None:
    path = tmp_path / "rec.yaml"
    redactor = Redactor()
    text = record_with_secrets(echo.url, path, redactor)
    # Every secret sent was seen, so the leak scan would have caught any that got through.
    assert {
        "s3cr3t-token",
        "session=c00kie-val-123",
        "xk-5599-key",
        "qk-6612-query",
        "push-tok-4471",
        "push-cred-8812",
        "hunter2",
    } <= redactor.secrets
    for secret in SECRET_VALUES:
        assert secret not in text, secret
    # What was removed is named where it was.
    assert (
        "https://<redacted:credentials>@files.example/file?token=<redacted:token>" in text
    )  # reply url
    assert "apiKey: <redacted:apiKey>" in text
    # Any spelling of a secret name is one; everything else is kept as the agent said it.
    assert "sessionRef: <redacted:sessionRef>" in text
    assert "sessionid=<redacted:sessionid>" in text
    assert "traceRef: tr-5521-extra" in text
    assert "page=2" in text
    loaded = load_cassette(path).cassette
    assert [i.name for i in loaded.interactions] == ["please-fetch-the-file", "fetch-again"]


def test_a_secret_in_the_message_text_is_redacted_in_match_and_name(
    tmp_path: Path, echo: Any
) -> None:
    path = tmp_path / "rec.yaml"
    with recording(echo.url, path) as rec:
        HTTP.get(rec.url + "/.well-known/agent-card.json")
        original = "Please fetch https://user:hunter2@host.example/f?token=abc"
        send(rec.url, "/message:send", {"message": message(original)})
        assert rec.finish() == path
    text = path.read_text()
    assert "hunter2" not in text and "token=abc" not in text
    interaction = yaml.safe_load(text)["interactions"][0]
    # The matcher stands for the secrets without holding them: the same request replays.
    assert interaction["match"]["text"] == {
        "regex": r"(?s)^Please fetch https://.+?@host\.example/f\?token=.+?$"
    }
    with upstream_agent(path, pace="instant") as replay:
        answer = send(replay.url, "/message:send", {"message": message(original)})
    assert answer["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_the_redaction_lists_are_configurable(tmp_path: Path, echo: Any) -> None:
    path = tmp_path / "rec.yaml"
    redactor = Redactor(names=("X-Custom-Ref", "page", "TRACE_REF"))
    text = record_with_secrets(echo.url, path, redactor)
    for secret in SECRET_VALUES + ["sess-5521-extra", "sid-4242-q", "tr-5521-extra", "page=2"]:
        assert secret not in text, secret
    assert "traceRef: <redacted:traceRef>" in text  # a name given in any spelling
    assert "page=<redacted:page>" in text
    # An extra header: its value is remembered (and so scanned for), like the built-in ones.
    redactor.see_headers({"x-custom-ref": "hdr-7788-custom", "X-Other": "not-a-secret"})
    assert "hdr-7788-custom" in redactor.secrets
    assert "not-a-secret" not in redactor.secrets


def test_an_extra_secret_header_is_scanned_for(tmp_path: Path, echo: Any) -> None:
    """The upstream echoes a custom header's value: with the default lists it is an ordinary
    answer; with the header listed the cassette is refused."""

    def record(path: Path, redactor: Redactor) -> None:
        with recording(echo.url, path, redactor=redactor) as rec:
            HTTP.get(rec.url + "/.well-known/agent-card.json")
            send(
                rec.url,
                "/message:send",
                {"message": message("echo it")},
                {"X-Custom-Ref": "hdr-7788-custom"},
            )
            rec.finish()

    plain = tmp_path / "plain.yaml"
    record(plain, Redactor())
    assert "hdr-7788-custom" in plain.read_text()
    listed = tmp_path / "listed.yaml"
    with pytest.raises(LeakError):
        record(listed, Redactor(names=("x-custom-ref",)))
    assert not listed.exists()


def test_a_leaked_secret_stops_the_write_and_leaves_a_scrubbed_partial(
    tmp_path: Path, echo: Any
) -> None:
    path = tmp_path / "rec.yaml"
    shutil.copy(TEST_RUNNER, path)  # a previous cassette, which must survive
    before = path.read_bytes()
    with recording(echo.url, path) as rec:
        HTTP.get(rec.url + "/.well-known/agent-card.json")
        answer = send(
            rec.url,
            "/message:send",
            {"message": message("leak it")},
            {"Authorization": "Bearer zq-SECRET-9931"},
        )
        assert answer["message"]["parts"] == [
            {"text": "The token is zq-SECRET-9931"}
        ]  # the client gets it
        with pytest.raises(LeakError) as caught:
            rec.finish()
    report = str(caught.value)
    assert "zq-SECRET-9931" not in report  # the error names the leak without repeating it
    assert "zq" in report and str(partial_path(path)) in report
    assert path.read_bytes() == before
    partial = partial_path(path).read_text()
    assert "zq-SECRET-9931" not in partial
    assert "The token is <redacted:leak>" in partial
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_echoed_cookie_value_is_caught(tmp_path: Path, echo: Any) -> None:
    path = tmp_path / "rec.yaml"
    with recording(echo.url, path) as rec:
        HTTP.get(rec.url + "/.well-known/agent-card.json")
        send(
            rec.url,
            "/message:send",
            {"message": message("my cookie")},
            {"Cookie": "session=ck-9090-val"},
        )
        with pytest.raises(LeakError):
            rec.finish()
    assert not path.exists()


def test_redactor_rules() -> None:
    redactor = Redactor()
    out = redactor.redact(
        {
            "pushConfig": {
                "url": "https://a:pw-9988@h.example/x?key=k-1234&q=1",
                "token": "t-5555",
                "authentication": {"scheme": "Basic", "credentials": "c-6666"},
            },
            "parts": [{"text": "see http://h.example/y?access_token=at-7777"}],
        }
    )
    assert out == {
        "pushConfig": {
            "url": "https://<redacted:credentials>@h.example/x?key=<redacted:key>&q=1",
            "token": "<redacted:token>",
            "authentication": {"scheme": "Basic", "credentials": "<redacted:credentials>"},
        },
        "parts": [{"text": "see http://h.example/y?access_token=<redacted:access_token>"}],
    }
    assert {"pw-9988", "k-1234", "t-5555", "c-6666", "at-7777"} <= redactor.secrets
    redactor.see_headers({"Authorization": "Bearer abcd-1234", "Content-Type": "application/json"})
    assert {"Bearer abcd-1234", "abcd-1234"} <= redactor.secrets
    assert "application/json" not in redactor.secrets
    assert redactor.leaks("x abcd-1234 y") == ["ab…(9 chars)"]
    assert redactor.scrub("x abcd-1234 y") == "x <redacted:leak> y"
    assert yaml.safe_load(redactor.scrub("k: Bearer abcd-1234")) == {"k": "<redacted:leak>"}
