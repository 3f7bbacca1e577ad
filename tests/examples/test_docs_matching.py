"""docs/cassettes.md's claims about calls, as the page makes them: `where` sees the call as
mockagent normalises it (the journal shows those values), both forms of `error:`, and the same
bytes from a fresh start or after a reset (Determinism, and the README)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.cassette_text import cassette
from tests.helpers.docs import ROOT, block, page

HTTP = httpx.Client(timeout=10.0, trust_env=False)
V1 = {"A2A-Version": "1.0"}


def served(text: str, path: Path) -> Iterator[ServerThread]:
    path.write_text(cassette(text), encoding="utf-8")
    with serve_in_thread(path, pace="instant") as server:
        yield server


@pytest.fixture
def normalised(tmp_path: Path) -> Iterator[ServerThread]:
    yield from served(
        block("docs/cassettes.md", "yaml", "name: a-user-who-will-poll").text, tmp_path / "w.yaml"
    )


@pytest.fixture
def errors(tmp_path: Path) -> Iterator[ServerThread]:
    yield from served(
        block("docs/cassettes.md", "yaml", "error: TaskNotFound").text, tmp_path / "e.yaml"
    )


def rpc(url: str, method: str, params: dict[str, Any], headers: dict[str, str]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = HTTP.post(url, headers=headers, json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_where_matches_the_normalised_role_and_keys_of_v1_and_v0_3_calls(
    normalised: ServerThread,
) -> None:
    url = normalised.agent_url()
    v1 = {  # as a client may send it: the role enum's name, snake_case keys
        "message": {"message_id": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"return_immediately": True},
    }
    assert rpc(url, "SendMessage", v1, V1)["result"]["message"]["parts"] == [{"text": "Noted."}]
    v0_3 = {
        "message": {
            "messageId": "m2",
            "kind": "message",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        },
        "configuration": {"blocking": False},
    }
    assert rpc(url, "message/send", v0_3, {})["result"]["parts"] == [
        {"kind": "text", "text": "Noted."}
    ]
    blocking = {"message": {"messageId": "m3", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    assert rpc(url, "SendMessage", blocking, V1)["error"]["code"] == -32004  # no match: as said
    journal = normalised.journal()
    assert [entry.interaction for entry in journal] == ["a-user-who-will-poll"] * 2 + [None]
    # the journal shows the values to match, not the bytes sent
    assert [entry.params["message"]["role"] for entry in journal] == ["user"] * 3
    assert journal[0].params["message"]["messageId"] == "m1"
    assert journal[1].params["message"]["parts"] == [{"text": "hi"}]
    assert [entry.params.get("configuration") for entry in journal] == [
        {"returnImmediately": True},
        {"returnImmediately": True},
        None,
    ]


def test_the_short_and_the_long_error_form(errors: ServerThread) -> None:
    url = errors.agent_url()
    for text, message, status in [
        ("Rebuild 7", "Task not found", 404),  # the short form: the error's own message
        ("Restore 7", "The build is gone", 409),
    ]:
        params = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}}
        error = rpc(url, "SendMessage", params, V1)["error"]  # JSON-RPC: HTTP 200
        assert (error["code"], error["message"]) == (-32001, message)
        rest = HTTP.post(f"{url}/message:send", headers=V1, json=params)
        assert rest.status_code == status
        assert (rest.json()["error"]["status"], rest.json()["error"]["message"]) == (
            "NOT_FOUND",
            message,
        )


def test_same_bytes_from_a_fresh_start_or_after_a_reset_not_twice_in_one_run(
    tmp_path: Path,
) -> None:
    """What Determinism (and the README) say: a second identical call gets new ids; a reset
    brings back the first answer, byte for byte."""
    said = " ".join(page("docs/cassettes.md").text.split())
    assert "after `POST /_mockagent/reset`" in said and "gets new ids" in said
    path = tmp_path / "runner.yaml"
    shutil.copyfile(ROOT / "cassettes" / "kit" / "test-runner.yaml", path)
    params = {
        "message": {
            "messageId": "m",
            "role": "ROLE_USER",
            "parts": [{"text": "Run the tests at 9f3c2e1"}],
        }
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}

    def answer(url: str) -> bytes:
        return HTTP.post(url, headers=V1, json=body).content

    with serve_in_thread(path, pace="instant") as server:
        first, second = answer(server.agent_url()), answer(server.agent_url())
        assert second != first
        assert HTTP.post(server.url + "/_mockagent/reset").status_code == 200
        assert answer(server.agent_url()) == first
    with serve_in_thread(path, pace="instant") as fresh:
        assert answer(fresh.agent_url()) == first
