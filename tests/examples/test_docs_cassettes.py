"""The cassette examples of docs/cassettes.md and docs/agentex.md load, pass `mockagent lint`,
and answer as the pages say.

The A2A example is driven through the flow its comments describe, over HTTP+JSON with
`returnImmediately`: a question gets a direct reply; a diff starts a task whose 1st GetTask shows
WORKING and whose 2nd asks "Which base branch?"; the answer on that task completes it with the
review artifact. The Agentex example answers the official `agentex-client`, whole and streamed.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentex import Agentex

from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.docs import README_URL, ROOT, block, local_env, mockagent_command, page

HEADERS = {"A2A-Version": "1.0"}
HTTP = httpx.Client(timeout=10.0, trust_env=False)
DIFF = {"text": "--- a/app.py\n+++ b/app.py\n", "mediaType": "text/x-diff"}


def a2a_example() -> str:
    return block("docs/cassettes.md", "yaml", "name: code-reviewer").text


def agentex_example() -> str:
    return block("docs/agentex.md", "yaml", "protocol: agentex").text


def serve_text(text: str, path: Path) -> Iterator[ServerThread]:
    path.write_text(text, encoding="utf-8")
    with serve_in_thread(path, pace="instant") as server:
        yield server


@pytest.fixture
def a2a(tmp_path: Path) -> Iterator[ServerThread]:
    """The A2A cassette example, served."""
    yield from serve_text(a2a_example(), tmp_path / "code-reviewer.yaml")


@pytest.fixture
def agentex(tmp_path: Path) -> Iterator[ServerThread]:
    """The Agentex cassette example, served."""
    yield from serve_text(agentex_example(), tmp_path / "sync-agent.yaml")


def send(
    url: str, *parts: dict[str, Any], return_immediately: bool = False, **ids: str
) -> dict[str, Any]:
    message = {"messageId": f"m{len(parts)}", "role": "ROLE_USER", "parts": list(parts), **ids}
    body: dict[str, Any] = {"message": message}
    if return_immediately:
        body["configuration"] = {"returnImmediately": True}
    answer = HTTP.post(f"{url}/message:send", headers=HEADERS, json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def status(url: str, task_id: str) -> dict[str, Any]:
    answer = HTTP.get(f"{url}/tasks/{task_id}", headers=HEADERS)
    assert answer.status_code == 200, answer.text
    return answer.json()["status"]


def test_a2a_example_answers_a_question_directly(a2a: ServerThread) -> None:
    answer = send(a2a.agent_url(), {"text": "Which languages do you review?"})
    assert answer["message"]["parts"] == [{"text": "I review Python, TypeScript, Go and Rust."}]
    assert "task" not in answer
    assert [entry.interaction for entry in a2a.journal()] == ["languages"]


def test_a2a_example_reviews_a_diff_after_asking_for_the_branch(a2a: ServerThread) -> None:
    url = a2a.agent_url()
    task = send(url, {"text": "Please review"}, DIFF, return_immediately=True)["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert status(url, task["id"])["state"] == "TASK_STATE_WORKING"
    asked = status(url, task["id"])
    assert asked["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked["message"]["parts"] == [{"text": "Which base branch?"}]

    done = send(url, {"text": "main"}, taskId=task["id"], contextId=task["contextId"])["task"]
    assert (done["id"], done["status"]["state"]) == (task["id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"] == [
        {
            "artifactId": "review",
            "name": "review.md",
            "parts": [{"text": "LGTM", "mediaType": "text/markdown"}],
        }
    ]
    assert [entry.interaction for entry in a2a.journal() if entry.operation == "SendMessage"] == [
        "review",
        "base-branch",
    ]


def test_agentex_example_answers_the_official_client(agentex: ServerThread) -> None:
    question = {"type": "text", "author": "user", "content": "How are you?"}
    with httpx.Client(trust_env=False) as http:
        # Any: the client's unions of content types say nothing this test checks.
        client: Any = Agentex(base_url=agentex.url, max_retries=0, http_client=http)
        answer = client.agents.send_message(
            agent_name="echo-bot", params={"content": question, "task_name": "readme"}
        )
        assert [m.content.content for m in answer.result] == ["Hello! You asked a question."]
        chunks = list(
            client.agents.send_message_stream(
                agent_name="echo-bot", params={"content": question, "task_name": "readme"}
            )
        )
    deltas = [c.result.delta.text_delta for c in chunks if c.result.type == "delta"]
    assert deltas == ["Hel", "lo! ", "You asked a question."]  # the example's `deltas`


def test_agentex_client_line_reaches_the_bundled_sync_agent() -> None:
    said = re.search(
        r'against `mockagent serve (\S+)`.*?`Agentex\(base_url="([^"]+)"\)`',
        page("docs/agentex.md").text,
        re.S,
    )
    assert said is not None, "docs/agentex.md should say how to point the Agentex client at it"
    folder, base_url = said.groups()
    with (
        serve_in_thread(ROOT / folder, pace="instant") as server,
        httpx.Client(trust_env=False) as http,
    ):
        client: Any = Agentex(
            base_url=base_url.replace(README_URL, server.url), max_retries=0, http_client=http
        )
        assert [agent.name for agent in client.agents.list()] == ["echo-bot"]


def test_lint_passes_the_example_cassettes(tmp_path: Path) -> None:
    paths = []
    for name, example in [("a2a", a2a_example), ("agentex", agentex_example)]:
        path = tmp_path / f"{name}.yaml"
        path.write_text(example(), encoding="utf-8")
        paths.append(str(path))
    done = subprocess.run(
        [mockagent_command(), "lint", *paths],
        env=local_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "ok: 2 cassettes\n"), done.stderr
