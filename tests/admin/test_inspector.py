"""The inspector page at /_mockagent/: server-rendered HTML from the admin views, escaped, and
rendered by a real headless Chromium where one is installed."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tomllib
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from flask import render_template
from flask.testing import FlaskClient

from mockagent.server.admin import inspector
from mockagent.server.app import create_app
from mockagent.server.thread import serve_in_thread

ROOT = Path(__file__).resolve().parents[2]
AGENTEX = ROOT / "cassettes" / "agentex" / "sync-agent.yaml"
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
    params: dict[str, Any] = {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
    }
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
    said = post(
        "/sync-agent/agents/agent-sync-1/rpc",
        {
            "method": "message/send",
            "params": {"content": {"type": "text", "author": "user", "content": "Hi?"}},
        },
    )
    assert said["error"] is None
    return task["id"]


@pytest.fixture
def client(folder: Path) -> Iterator[FlaskClient]:
    app = create_app(folder)
    yield app.test_client()
    app.extensions["mockagent"].close()


def section(page: str, key: str) -> str:
    """One section of the page, without the whitespace between its tags (the template's indent)."""
    found = re.search(rf'<section id="{key}">(.*?)</section>', page, re.S)
    assert found, f"no #{key} section"
    return re.sub(r">\s*\n\s*<", "><", found.group(1))


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
    rows = re.findall(
        r'<tr class="interaction (used|unused)"><td>(.*?)</td><td>(.*?)</td><td>(\d+)</td>'
        r'<td class="uses">(.*?)</td>',
        interactions,
    )
    by_name = {(agent, name): (css, uses) for css, agent, name, _, uses in rows}
    assert by_name[("alpha", "question")] == ("used", "1 / ∞")
    assert by_name[("alpha", "gated")] == ("used", "1 / ∞")
    assert by_name[("alpha", "never")] == ("unused", "0 / 1")
    assert by_name[("sync-agent", "question")][0] == "used"

    tasks = section(page, "tasks")
    timeline = re.search(
        rf'id="task-{re.escape(task_id)}">.*?<ol class="timeline">(.*?)</ol>', tasks, re.S
    )
    assert timeline, "no timeline for the polled task"
    states = re.findall(r'state <span class="state">(\w+)</span>', timeline.group(1))
    assert states == ["working", "completed"]
    assert "artifact <code>log</code>" in timeline.group(1)
    assert '<span class="muted stamp">2026-10-06T09:00:00.000Z</span>' in timeline.group(1)
    assert "said <code>" in tasks  # the Agentex agent's message

    journal = section(page, "journal")
    assert re.search(
        r'<tr class="call matched"><td>1</td><td>alpha</td><td>SendMessage</td>'
        r'<td>JSONRPC</td><td class="outcome"><span class="matched">matched</span> '
        r"<strong>question</strong>",
        journal,
    )
    miss = re.search(
        r'<tr class="call unmatched"><td>2</td><td>alpha</td>.*?<pre class="near-miss">(.*?)</pre>'
        r"(.*?)</tr>",
        journal,
        re.S,
    )
    assert miss, "no near-miss report"
    report = html.unescape(miss.group(1))
    assert report.startswith("No interaction in ") and 'endswith "?"' in report
    assert "<code>" in miss.group(2)  # the differing paths, listed

    assert "<script" not in page.lower()  # neither the message text nor the card's description
    assert SCRIPT in html.unescape(journal)
    assert "<script>alert('card')</script>" in html.unescape(agents)


def test_an_interaction_added_at_runtime_shows_as_added(client: FlaskClient) -> None:
    body = {"name": "hello", "match": {"text": "hello"}, "reply": {"message": "Hi."}}
    assert client.post("/_mockagent/interactions?agent=alpha", json=body).status_code == 201
    rows = section(client.get("/_mockagent/").get_data(as_text=True), "interactions")
    assert "<td>alpha</td><td>hello</td><td>added</td>" in rows


def test_an_empty_server_says_so(client: FlaskClient) -> None:
    page = client.get("/_mockagent/").get_data(as_text=True)
    assert "No live tasks." in section(page, "tasks")
    assert "No calls yet." in section(page, "journal")
    every = client.get("/_mockagent/interactions").get_json()["interactions"]
    assert len(every) > 3 and section(page, "interactions").count(
        'class="interaction unused"'
    ) == len(every)
    assert 'class="interaction used"' not in page


def test_the_templates_are_package_data() -> None:
    """A wheel without them serves a 500 for the page (editable installs hide that)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["mockagent"]
    package = Path(inspector.__file__).parents[2]
    files = [
        PurePosixPath(p.relative_to(package).as_posix())
        for p in (package / "server" / "admin" / "templates").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    assert PurePosixPath("server/admin/templates/inspector.html") in files
    missing = [str(f) for f in files if not any(f.match(pattern) for pattern in patterns)]
    assert missing == []


EVIL_A2A = """\
version: 1
agent:
  name: 'Evil "<script>alert(1)</script>'
  description: '"><img src=x onerror=alert(2)>'
  skills: [{id: s, name: S, description: A skill.}]
clock:
  start: 2026-10-06T09:00:00Z
interactions:
  - name: '<script>alert("interaction")</script>'
    match: {text: {endswith: "?"}}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: '"><script>alert(3)</script>', parts: [{text: x}]}
          - state: TASK_STATE_COMPLETED
"""

EVIL_AGENTEX = """\
version: 1
protocol: agentex
agents:
  - id: agent-evil
    name: '<script>alert("agent")</script>'
    description: '"><svg onload=alert(6)>'
    acp_type: sync
clock: {start: 2026-10-06T09:00:00Z}
interactions:
  - name: turn
    match: {text: hi}
    reply:
      task:
        steps:
          - say: '<script>alert("said")</script>'
"""

EVIL_CALL = "' onmouseover='alert(4)' \"><script>alert(5)</script>"
EVIL_CONTEXT = '<script>alert("context")</script>'
HOSTILE = "\"'><script>alert(1)</script><img src=x onerror=alert(2)>&amp;"


class Markup(HTMLParser):
    """The elements, attributes and text a browser would make of a page."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)


def assert_inert(page: str) -> Markup:
    """No element or attribute that runs script: every value stayed text."""
    markup = Markup(page)
    assert {tag for tag, _ in markup.tags} <= {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "header",
        "h1",
        "h2",
        "h3",
        "h4",
        "nav",
        "a",
        "p",
        "code",
        "main",
        "section",
        "article",
        "dl",
        "dt",
        "dd",
        "details",
        "summary",
        "pre",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "span",
        "strong",
        "ol",
        "ul",
        "li",
        "time",
    }
    assert not [name for _, attrs in markup.tags for name in attrs if name.startswith("on")]
    return markup


def test_hostile_names_texts_and_reports_come_out_escaped(tmp_path: Path) -> None:
    root = tmp_path / "kit"
    root.mkdir()
    (root / "evil.yaml").write_text(EVIL_A2A)
    (root / "evilx.yaml").write_text(EVIL_AGENTEX)
    app = create_app(root)
    client = app.test_client()

    def post(path: str, body: Any) -> Any:
        return client.post(path, json=body, headers={"A2A-Version": "1.0"}).get_json()

    message = {
        "messageId": "m1",
        "role": "ROLE_USER",
        "parts": [{"text": "Evil?"}],
        "contextId": EVIL_CONTEXT,
    }
    task = rpc(post, "evil", "SendMessage", {"message": message})["result"]["task"]
    assert task["contextId"] == EVIL_CONTEXT
    unmatched = {**message, "parts": [{"text": EVIL_CALL}]}
    assert "error" in rpc(post, "evil", "SendMessage", {"message": unmatched})
    said = post(
        "/evilx/agents/agent-evil/rpc",
        {
            "method": "message/send",
            "params": {"content": {"type": "text", "author": "user", "content": "hi"}},
        },
    )
    assert said["error"] is None
    page = client.get("/_mockagent/").get_data(as_text=True)
    [miss] = client.get("/_mockagent/near-misses").get_json()["nearMisses"]
    app.extensions["mockagent"].close()

    markup = assert_inert(page)
    for text in [
        '<script>alert("interaction")</script>',
        '"><script>alert(3)</script>',  # an artifact id
        EVIL_CONTEXT,
        miss["report"]["report"],  # a task's context, the near-miss report
        '<script>alert("agent")</script>',
        '"><svg onload=alert(6)>',
    ]:  # Agentex agents
        assert text in markup.text, text
    for text in [
        'Evil "<script>alert(1)</script>',
        '"><img src=x onerror=alert(2)>',  # the card
        '<script>alert("said")</script>',
    ]:  # shown as JSON
        assert json.dumps(text)[1:-1] in markup.text, text
    assert '"><script>alert(5)</script>' in miss["report"]["report"]


def hostile(value: Any) -> Any:
    """`value` with every string in it replaced by HOSTILE (numbers and flags kept)."""
    if isinstance(value, str):
        return HOSTILE
    if isinstance(value, dict):
        return {key: hostile(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(hostile(item) for item in value)
    return value


def test_every_value_the_template_shows_is_escaped(folder: Path) -> None:
    app = create_app(folder)
    client = app.test_client()
    make_calls(
        lambda path, body: client.post(path, json=body, headers={"A2A-Version": "1.0"}).get_json()
    )
    mounts = app.extensions["mockagent"]
    shown = inspector.context(mounts, "http://localhost")
    assert shown["agents"] and shown["interactions"] and shown["tasks"] and shown["calls"]
    with app.test_request_context():
        page = render_template(inspector.TEMPLATE, **hostile(shown))
    mounts.close()
    markup = assert_inert(page)
    assert markup.text.count(HOSTILE) > 40  # names, ids, states, events, reports, paths, ...
    attributes = [value for _, attrs in markup.tags for value in attrs.values()]
    assert f"task-{HOSTILE}" in attributes  # an id stays one attribute value
    assert HOSTILE in attributes  # data-agent, the row's class


def times(page: str) -> list[str]:
    return re.findall(r"<time>(.*?)</time>", section(page, "tasks"))


def test_timeline_times_are_whole_milliseconds(client: FlaskClient) -> None:
    assert inspector.elapsed(3914.0012020000086) == "+3914 ms"
    assert inspector.elapsed(1234.6) == "+1235 ms" and inspector.elapsed(0.0) == "+0 ms"

    def post(path: str, body: Any) -> Any:
        return client.post(path, json=body, headers={"A2A-Version": "1.0"}).get_json()

    make_calls(post)
    page = client.get("/_mockagent/").get_data(as_text=True)
    found = times(page)
    assert len(found) >= 4 and "artifact <code>log</code>" in section(page, "tasks")
    assert all(re.fullmatch(r"\+\d+ ms", when) for when in found), found  # states, artifacts, said
    assert page.count('class="muted stamp"') == 2  # the states' timestamps, as a client sees them


def test_the_journal_is_in_arrival_order_across_agents(client: FlaskClient) -> None:
    def post(path: str, body: Any) -> Any:
        return client.post(path, json=body, headers={"A2A-Version": "1.0"}).get_json()

    send(post, "Ready?")
    content = {"type": "text", "author": "user", "content": "Hi?"}
    post(
        "/sync-agent/agents/agent-sync-1/rpc",
        {"method": "message/send", "params": {"content": content}},
    )
    send(post, "Steady?")
    rows = re.findall(
        r'<tr class="call \w+"><td>(\d+)</td><td>(.*?)</td>',
        section(client.get("/_mockagent/").get_data(as_text=True), "journal"),
    )
    assert rows == [("1", "alpha"), ("2", "sync-agent"), ("3", "alpha")]


def test_long_near_miss_reports_wrap_in_their_cell(client: FlaskClient) -> None:
    page = client.get("/_mockagent/").get_data(as_text=True)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert style
    rules = dict(re.findall(r"^([^{}\n]+?)\s*\{([^}]*)\}", style.group(1), re.M))
    assert "white-space: pre-wrap" in rules["pre.near-miss"]
    assert "overflow-wrap: anywhere" in rules["pre.near-miss"]
    assert "overflow-wrap: anywhere" in rules["td.outcome"]


PROBE = """<script>
const root = document.documentElement;
const tables = [...document.querySelectorAll("table")]
  .map(t => Math.ceil(t.getBoundingClientRect().right));
document.body.setAttribute("data-fit", JSON.stringify(
  {width: root.clientWidth, scroll: root.scrollWidth, tables}));
</script>"""


def chromium_dom(chromium: str, url: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=800,900",
            f"--user-data-dir={profile}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_headless_chromium_renders_the_page(folder: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium installed")
    with serve_in_thread(folder) as server:

        def post(path: str, body: Any) -> Any:
            request = urllib.request.Request(
                server.url + path,
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return json.load(response)
            except urllib.error.HTTPError as exc:  # an unmatched call may answer with an HTTP error
                return json.load(exc)

        task_id = make_calls(post)
        assert "error" in send(post, "x" * 400)  # a near-miss report far wider than the window
        with urllib.request.urlopen(server.url + "/_mockagent/", timeout=10) as response:
            page = response.read().decode()
        done = chromium_dom(chromium, server.url + "/_mockagent/", tmp_path / "chromium-profile")
    dom = done.stdout
    assert done.returncode == 0 and "<body" in dom, done.stderr[-2000:]
    for key in ("agents", "interactions", "tasks", "journal"):
        assert f'<section id="{key}">' in dom
    assert "<title>mockagent inspector</title>" in dom
    assert 'data-agent="alpha"' in dom and "echo-bot" in dom
    assert f'id="task-{task_id}"' in dom and '<span class="state">completed</span>' in dom
    assert '<pre class="near-miss">' in dom and 'endswith "?"' in html.unescape(dom)
    assert re.search(r'<td class="uses">0 / 1</td>', dom)
    assert "<script" not in dom.lower()  # the browser saw text, not a script element
    assert re.search(r"<time>\+\d+ ms</time> — artifact <code>log</code>", dom)

    # The same page, measured: a script added here (the page has none) notes the tables' widths.
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", PROBE + "</body>"))
    measured = chromium_dom(chromium, probe.as_uri(), tmp_path / "chromium-profile")
    fit = re.search(r'data-fit="([^"]*)"', measured.stdout)
    assert fit, measured.stderr[-2000:]
    sizes = json.loads(html.unescape(fit.group(1)))
    assert len(sizes["tables"]) >= 3 and sizes["width"] <= 800
    assert sizes["scroll"] <= sizes["width"] and max(sizes["tables"]) <= sizes["width"], sizes


FAULTS = """\
version: 1
agent:
  name: faults
  description: Faults, fired or not.
  skills: [{id: s, name: S, description: A skill.}]
  capabilities: {streaming: true}
interactions:
  - name: broken
    match: {text: broken}
    fault: {errorAfter: 1}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
"""


def test_the_journal_shows_a_fault_that_fired_and_one_that_did_not(tmp_path: Path) -> None:
    path = tmp_path / "faults.yaml"
    path.write_text(FAULTS)
    app = create_app(path)
    client = app.test_client()
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "broken"}]}
    headers = {"A2A-Version": "1.0"}
    streamed = client.post("/message:stream", json={"message": message}, headers=headers)
    assert b'"INTERNAL"' in streamed.get_data()  # the error event after the first answer
    blocking = client.post("/message:send", json={"message": message}, headers=headers)
    assert blocking.get_json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    journal = section(client.get("/_mockagent/").get_data(as_text=True), "journal")
    shown = inspector.context(app.extensions["mockagent"], "http://localhost")
    with app.test_request_context():  # the badges' labels and reasons are text too
        hostile_page = render_template(inspector.TEMPLATE, **hostile(shown))
    app.extensions["mockagent"].close()
    assert_inert(hostile_page)
    assert [(f["fired"], f["why"] is None) for c in shown["calls"] for f in c["faults"]] == [
        (True, True),
        (False, False),
    ]
    rows = re.findall(r'<tr class="call matched">(.*?)</tr>', journal, re.S)
    assert len(rows) == 2
    assert '<span class="fault fired">fault errorAfter 1 (Internal) fired</span>' in rows[0]
    assert "not-fired" not in rows[0]
    assert '<span class="fault not-fired">fault errorAfter 1 (Internal) not fired</span>' in rows[1]
    why = re.search(r'<span class="why">(.*?)</span>', rows[1])
    assert why and html.unescape(why.group(1)).startswith(
        "SendMessage is answered with one response, not a stream: errorAfter applies to streams"
    )
