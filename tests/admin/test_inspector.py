"""The inspector page at /_mockagent/: server-rendered HTML from the admin views, escaped, and
rendered by a real headless Chromium where one is installed."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from mockagent.server.app import create_app
from mockagent.server.thread import serve_in_thread

AGENTEX = Path(__file__).resolve().parents[2] / "cassettes" / "agentex" / "sync-agent.yaml"
SCRIPT = "<script>alert('x')</script>"

ALPHA = """\
version: 1
agent:
  name: alpha
  description: "A test agent. <script>alert('card')</script>"
  skills: [{id: s, name: S, description: A skill.}]
clock:
  start: 2026-10-06T09:00:00Z
  tick: {ms: 250}
interactions:
  - name: question
    match: {text: {endswith: "?"}}
    reply: {message: "Yes."}
  - name: gated
    match: {text: gated}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: log, parts: [{text: done}]}
            after: {polls: 2}
          - state: TASK_STATE_COMPLETED
  - name: never
    match: {text: never}
    times: 1
    reply: {message: "Nobody asks."}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "kit"
    root.mkdir()
    (root / "alpha.yaml").write_text(ALPHA)
    shutil.copy(AGENTEX, root / "sync-agent.yaml")
    return root


def rpc(post: Any, agent: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return post(f"/{agent}/", {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def send(post: Any, text: str, **configuration: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}
    if configuration:
        params["configuration"] = configuration
    return rpc(post, "alpha", "SendMessage", params)


def make_calls(post: Any) -> str:
    """A matched call, an unmatched one (with markup in its text), a polled task to completion and
    an Agentex turn; the task's id."""
    assert send(post, "Ready?")["result"]["message"]["parts"] == [{"text": "Yes."}]
    assert "error" in send(post, f"hello {SCRIPT}")
    task = send(post, "gated", returnImmediately=True)["result"]["task"]
    for _ in range(3):
        state = rpc(post, "alpha", "GetTask", {"id": task["id"]})["result"]["status"]["state"]
    assert state == "TASK_STATE_COMPLETED"
    said = post("/sync-agent/agents/agent-sync-1/rpc",
                {"method": "message/send", "params": {"content": {"type": "text", "author": "user",
                                                                  "content": "Hi?"}}})
    assert said["error"] is None
    return task["id"]


@pytest.fixture
def client(folder: Path) -> Iterator[FlaskClient]:
    app = create_app(folder)
    yield app.test_client()
    app.extensions["mockagent"].close()


def section(page: str, key: str) -> str:
    found = re.search(rf'<section id="{key}">(.*?)</section>', page, re.S)
    assert found, f"no #{key} section"
    return found.group(1)


def test_the_page_shows_agents_interactions_tasks_and_journal(client: FlaskClient) -> None:
    def post(path: str, body: Any) -> Any:
        return client.post(path, json=body, headers={"A2A-Version": "1.0"}).get_json()

    task_id = make_calls(post)
    response = client.get("/_mockagent/")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    page = response.get_data(as_text=True)
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert client.get("/_mockagent").get_data(as_text=True).count('<section id="') == 4
    assert client.head("/_mockagent/").status_code == 200
    assert client.post("/_mockagent/").status_code == 405
    assert client.get("/_mockagent/calls").mimetype == "application/json"  # the JSON stays

    agents = section(page, "agents")
    assert 'data-agent="alpha"' in agents and 'data-agent="sync-agent"' in agents
    card = re.search(r'<pre class="card">(.*?)</pre>', agents, re.S)
    assert card, "no A2A card"
    parsed = json.loads(html.unescape(card.group(1)))
    assert parsed["name"] == "alpha"
    assert parsed["supportedInterfaces"][0]["url"] == "http://localhost/alpha"
    assert "agent-sync-1" in agents and "echo-bot" in agents  # the Agentex agents list
    assert "agentex" in agents

    interactions = section(page, "interactions")
    rows = re.findall(r'<tr class="interaction (used|unused)"><td>(.*?)</td><td>(.*?)</td><td>(\d+)</td>'
                      r'<td class="uses">(.*?)</td>', interactions)
    by_name = {(agent, name): (css, uses) for css, agent, name, _, uses in rows}
    assert by_name[("alpha", "question")] == ("used", "1 / ∞")
    assert by_name[("alpha", "gated")] == ("used", "1 / ∞")
    assert by_name[("alpha", "never")] == ("unused", "0 / 1")
    assert by_name[("sync-agent", "question")][0] == "used"

    tasks = section(page, "tasks")
    timeline = re.search(rf'id="task-{re.escape(task_id)}">.*?<ol class="timeline">(.*?)</ol>', tasks, re.S)
    assert timeline, "no timeline for the polled task"
    states = re.findall(r'state <span class="state">(\w+)</span>', timeline.group(1))
    assert states == ["working", "completed"]
    assert "artifact <code>log</code>" in timeline.group(1)
    assert "2026-10-06T09:00:00.000Z" in timeline.group(1)
    assert "said <code>" in tasks  # the Agentex agent's message

    journal = section(page, "journal")
    assert re.search(r'<tr class="call matched"><td>1</td><td>alpha</td><td>SendMessage</td><td>JSONRPC</td>'
                     r'<td><span class="matched">matched</span> <strong>question</strong>', journal)
    miss = re.search(r'<tr class="call unmatched"><td>2</td><td>alpha</td>.*?<pre class="near-miss">(.*?)</pre>'
                     r'(.*?)</tr>', journal, re.S)
    assert miss, "no near-miss report"
    report = html.unescape(miss.group(1))
    assert report.startswith("No interaction in ") and 'endswith "?"' in report
    assert "<code>" in miss.group(2)  # the differing paths, listed

    assert "<script" not in page.lower()  # neither the message text nor the card's description
    assert html.escape(SCRIPT) in journal
    assert html.escape("<script>alert('card')</script>") in agents


def test_an_empty_server_says_so(client: FlaskClient) -> None:
    page = client.get("/_mockagent/").get_data(as_text=True)
    assert "No live tasks." in section(page, "tasks")
    assert "No calls yet." in section(page, "journal")
    every = client.get("/_mockagent/interactions").get_json()["interactions"]
    assert len(every) > 3 and section(page, "interactions").count('class="interaction unused"') == len(every)
    assert 'class="interaction used"' not in page


def test_headless_chromium_renders_the_page(folder: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium installed")
    with serve_in_thread(folder) as server:
        def post(path: str, body: Any) -> Any:
            request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), headers={
                "Content-Type": "application/json", "A2A-Version": "1.0"})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return json.load(response)
            except urllib.error.HTTPError as exc:  # an unmatched call may answer with an HTTP error
                return json.load(exc)

        task_id = make_calls(post)
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'chromium-profile'}", "--dump-dom", server.url + "/_mockagent/"],
            capture_output=True, text=True, timeout=60)
    dom = done.stdout
    assert done.returncode == 0 and "<body" in dom, done.stderr[-2000:]
    for key in ("agents", "interactions", "tasks", "journal"):
        assert f'<section id="{key}">' in dom
    assert "<title>mockagent inspector</title>" in dom
    assert 'data-agent="alpha"' in dom and "echo-bot" in dom
    assert f'id="task-{task_id}"' in dom and '<span class="state">completed</span>' in dom
    assert '<pre class="near-miss">' in dom and "endswith \"?\"" in html.unescape(dom)
    assert re.search(r'<td class="uses">0 / 1</td>', dom)
    assert "<script" not in dom.lower()  # the browser saw text, not a script element
