"""The admin API under /_mockagent/: views, filters, control actions, runtime loads, switching
off."""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from mockagent.server.app import create_app
from mockagent.server.thread import serve_in_thread

HEADER = """\
version: 1
agent:
  name: {name}
  description: A test agent.
  capabilities: {{pushNotifications: true}}
  skills: [{{id: s, name: S, description: A skill.}}]
clock:
  start: 2026-10-06T09:00:00Z
  tick: {{ms: 250}}
"""

INTERACTIONS = """\
interactions:
  - name: question
    match: {text: {endswith: "?"}}
    reply: {message: "Yes."}
  - name: slow
    match: {text: slow}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
            after: {ms: 60000}
  - name: gated
    match: {text: gated}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: log, parts: [{text: done}]}
            after: {polls: 3}
          - state: TASK_STATE_COMPLETED
  - name: never
    match: {text: never}
    reply: {message: "Nobody asks."}
"""

OTHER = """\
interactions:
  - name: hello
    match: {text: hello}
    reply: {message: "Hi from the new cassette."}
"""


def cassette_text(name: str = "tester", body: str = INTERACTIONS) -> str:
    return HEADER.format(name=name) + body


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "cassettes"
    root.mkdir()
    (root / "alpha.yaml").write_text(cassette_text("alpha"))
    (root / "beta.yaml").write_text(cassette_text("beta"))
    return root


@pytest.fixture
def client(folder: Path) -> FlaskClient:
    app = create_app(folder)
    yield app.test_client()
    app.extensions["mockagent"].close()


def rpc(client: FlaskClient, agent: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = client.post(
        f"/{agent}/" if agent else "/",
        headers={"A2A-Version": "1.0"},
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
    )
    return response.get_json()


def send(client: FlaskClient, agent: str, text: str, **configuration: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
    }
    if configuration:
        params["configuration"] = configuration
    return rpc(client, agent, "SendMessage", params)


def get(client: FlaskClient, path: str) -> Any:
    response = client.get(f"/_mockagent/{path}")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    return response.get_json()


def post(client: FlaskClient, path: str, body: Any = None, status: int = 200) -> Any:
    response = (
        client.post(f"/_mockagent/{path}", json=body)
        if body is not None
        else client.post(f"/_mockagent/{path}")
    )
    assert response.status_code == status, response.get_data(as_text=True)
    return response.get_json()


# -- views ------------------------------------------------------------------------------------


def test_agents_lists_the_mounts(client: FlaskClient, folder: Path) -> None:
    agents = get(client, "agents")["agents"]
    assert [(a["name"], a["protocol"], a["url"], a["interactions"]) for a in agents] == [
        ("alpha", "a2a", "/alpha/", 4),
        ("beta", "a2a", "/beta/", 4),
    ]
    assert Path(agents[0]["cassette"]) == folder / "alpha.yaml"


def test_calls_show_the_journal_and_filter(client: FlaskClient) -> None:
    send(client, "alpha", "Ready?")
    send(client, "beta", "Really?")
    send(client, "alpha", "what is this")
    calls = get(client, "calls")["calls"]
    # Agent by agent; the numbers are the folder's, in arrival order across agents.
    assert [
        (
            c["agent"],
            c["seq"],
            c["operation"],
            c["binding"],
            c["interaction"],
            c["matched"],
            c["error"],
        )
        for c in calls
    ] == [
        ("alpha", 1, "SendMessage", "JSONRPC", "question", True, None),
        ("alpha", 3, "SendMessage", "JSONRPC", None, False, "NoMatch"),
        ("beta", 2, "SendMessage", "JSONRPC", "question", True, None),
    ]
    assert calls[0]["params"]["message"]["parts"] == [{"text": "Ready?"}]
    assert [c["seq"] for c in get(client, "calls?matched=false")["calls"]] == [3]
    assert [c["agent"] for c in get(client, "calls?matched=true")["calls"]] == ["alpha", "beta"]
    assert [c["agent"] for c in get(client, "calls?agent=beta")["calls"]] == ["beta"]
    assert get(client, "calls?operation=GetTask")["calls"] == []
    assert len(get(client, "calls?operation=SendMessage&matched=true&agent=alpha")["calls"]) == 1


def test_near_misses_carry_the_report(client: FlaskClient) -> None:
    send(client, "alpha", "Ready?")
    send(client, "alpha", "what is this")
    misses = get(client, "near-misses")["nearMisses"]
    assert len(misses) == 1
    report = misses[0]["report"]
    assert misses[0]["matched"] is False and misses[0]["agent"] == "alpha"
    assert report["@type"].endswith("NearMissReport")
    assert report["closest"][0]["interaction"] == "question"
    assert report["report"].startswith("No interaction in ")


def test_tasks_show_state_polls_and_events(client: FlaskClient) -> None:
    task = send(client, "alpha", "gated", returnImmediately=True)["result"]["task"]
    rpc(client, "alpha", "GetTask", {"id": task["id"]})
    [view] = get(client, "tasks")["tasks"]
    assert view["id"] == task["id"] and view["contextId"] == task["contextId"]
    assert (
        view["agent"],
        view["state"],
        view["origin"],
        view["polls"],
        view["remainingSteps"],
    ) == ("alpha", "working", "gated", 1, 2)
    assert [(e["seq"], e.get("state")) for e in view["events"]] == [(0, "working")]
    assert view["events"][0]["timestamp"] == "2026-10-06T09:00:00.000Z"
    assert get(client, "tasks?agent=beta")["tasks"] == []


def test_interactions_show_uses_and_lines(client: FlaskClient) -> None:
    send(client, "alpha", "Ready?")
    send(client, "alpha", "Steady?")
    views = get(client, "interactions?agent=alpha")["interactions"]
    assert [(v["name"], v["uses"], v["used"]) for v in views] == [
        ("question", 2, True),
        ("slow", 0, False),
        ("gated", 0, False),
        ("never", 0, False),
    ]
    text = cassette_text("alpha")
    assert views[3]["line"] == line_of(text, "- name: never")
    unused = get(client, "interactions?unused=true&agent=alpha")["interactions"]
    assert [v["name"] for v in unused] == ["slow", "gated", "never"]
    assert [v["name"] for v in get(client, "interactions?unused=false")["interactions"]] == [
        "question"
    ]


def test_deliveries_show_webhook_attempts(client: FlaskClient) -> None:
    config = {"url": "http://192.0.2.1/hook", "id": "hook-1"}  # refused: not loopback
    task = send(client, "alpha", "slow", returnImmediately=True, taskPushNotificationConfig=config)
    task_id = task["result"]["task"]["id"]
    deadline = time.monotonic() + 5
    while (
        not (deliveries := get(client, "deliveries")["deliveries"]) and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    assert deliveries, "no delivery was journaled"
    first = deliveries[0]
    assert (
        first["agent"],
        first["url"],
        first["taskId"],
        first["configId"],
        first["ok"],
        first["status"],
    ) == ("alpha", "http://192.0.2.1/hook", task_id, "hook-1", False, None)
    assert "refused: 192.0.2.1 is not loopback" in first["error"]
    assert set(first) == {
        "agent",
        "seq",
        "url",
        "taskId",
        "configId",
        "event",
        "status",
        "error",
        "ok",
    }


def test_a_webhook_to_a_host_not_allowed_is_refused_in_the_journal(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside: list[Any] = []  # connections tried past loopback: none, and none let through
    real = socket.create_connection

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        if address[0] not in ("127.0.0.1", "::1", "localhost"):
            outside.append(address)
            raise ConnectionRefusedError(111, "refused by the test")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", create_connection)
    url = "http://169.254.169.254/latest/meta-data/"
    config = {
        "url": url,
        "id": "hook-1",
        "authentication": {"scheme": "Bearer", "credentials": "x"},
    }
    send(client, "alpha", "slow", returnImmediately=True, taskPushNotificationConfig=config)
    deadline = time.monotonic() + 5
    while not (view := get(client, "deliveries"))["deliveries"] and time.monotonic() < deadline:
        time.sleep(0.02)
    [first, *_] = view["deliveries"]
    assert (first["url"], first["ok"], first["status"]) == (url, False, None)
    assert first["error"] == (
        "refused: 169.254.169.254 is not loopback and not allowed by --webhook-allow or the "
        "cassette's webhooks.allow"
    )
    assert view["dropped"] == 0
    assert outside == []


def test_deliveries_keep_the_last_thousand_and_count_the_rest(client: FlaskClient) -> None:
    from mockagent.engine.webhooks.delivery import Delivery

    engine = client.application.extensions["mockagent"].agents["alpha"]
    for seq in range(1, 1006):
        engine.journal.deliveries.append(Delivery(seq, "u", "t", "c", "e", 204, None))
    view = get(client, "deliveries?agent=alpha")
    assert [d["seq"] for d in view["deliveries"]][:1] == [6]
    assert (len(view["deliveries"]), view["dropped"]) == (1000, 5)


def seqs(client: FlaskClient) -> list[tuple[str, int]]:
    return [(c["agent"], c["seq"]) for c in get(client, "calls")["calls"]]


def test_the_agents_of_a_folder_share_one_numbering(client: FlaskClient, folder: Path) -> None:
    send(client, "alpha", "Ready?")
    send(client, "beta", "Really?")
    post(client, "reset", {"agent": "alpha"})  # beta keeps its 2: alpha's next call is not 1 or 2
    send(client, "alpha", "Steady?")
    assert seqs(client) == [("alpha", 3), ("beta", 2)]
    (folder / "gamma.yaml").write_text(cassette_text("gamma", OTHER))
    post(client, "cassettes/load", {"path": "gamma.yaml"})  # an agent loaded later counts on
    send(client, "gamma", "hello")
    post(client, "cassettes/load", {"path": "gamma.yaml", "agent": "beta"})  # beta's journal goes
    send(client, "beta", "hello")
    assert seqs(client) == [("alpha", 3), ("beta", 5), ("gamma", 4)]
    post(client, "reset")  # every journal empty: count from 1 again
    send(client, "beta", "hello")
    send(client, "alpha", "Ready?")
    assert seqs(client) == [("alpha", 2), ("beta", 1)]


def test_a_folder_restarts_its_numbering_on_mounts_reset(folder: Path) -> None:
    app = create_app(folder)
    client = app.test_client()
    send(client, "alpha", "Ready?")
    app.extensions["mockagent"].reset()  # as the pytest fixture's server does between tests
    send(client, "beta", "Really?")
    send(client, "alpha", "Steady?")
    assert seqs(client) == [("alpha", 2), ("beta", 1)]
    app.extensions["mockagent"].close()


FIXTURE_TEST = """
import json, urllib.error, urllib.request

import pytest


def send(url, text):
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}}
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    request = urllib.request.Request(url + "/", data=json.dumps(body).encode(), headers=headers)
    try:
        urllib.request.urlopen(request, timeout=5).close()
    except urllib.error.HTTPError as exc:  # the unmatched call
        exc.close()


@pytest.mark.mockagent("cassettes")
def test_numbers(mockagent):
    for agent, text in [("alpha", "Ready?"), ("beta", "Really?"), ("alpha", "what is this"),
                        ("beta", "Steady?")]:
        send(mockagent.agent_url(agent), text)
    with urllib.request.urlopen(mockagent.url + "/_mockagent/calls", timeout=5) as response:
        api = [(c["seq"], c["matched"]) for c in json.load(response)["calls"]]
    journal = [(e.seq, e.matched) for e in mockagent.journal]
    assert journal == api == [(1, True), (3, False), (2, True), (4, True)]
    mockagent.reset()  # the unmatched call, on purpose: it would fail the test at teardown
"""


def test_the_fixture_journal_and_the_api_agree(pytester: pytest.Pytester, folder: Path) -> None:
    shutil.copytree(folder, pytester.path / "cassettes")
    pytester.makepyfile(test_numbers=FIXTURE_TEST)
    pytester.runpytest("-p", "no:hypothesispytest").assert_outcomes(passed=1)


# -- control ----------------------------------------------------------------------------------


def test_reset_forgets_one_agent_or_all(client: FlaskClient) -> None:
    send(client, "alpha", "Ready?")
    send(client, "beta", "slow", returnImmediately=True)
    assert post(client, "reset", {"agent": "alpha"}) == {"reset": ["alpha"]}
    assert [c["agent"] for c in get(client, "calls")["calls"]] == ["beta"]
    assert get(client, "interactions?agent=alpha&unused=false")["interactions"] == []
    assert len(get(client, "tasks")["tasks"]) == 1
    assert post(client, "reset") == {"reset": ["alpha", "beta"]}
    assert get(client, "calls")["calls"] == [] and get(client, "tasks")["tasks"] == []


def test_clock_advance_makes_a_timed_step_due(client: FlaskClient) -> None:
    task = send(client, "alpha", "slow", returnImmediately=True)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    polled = rpc(client, "alpha", "GetTask", {"id": task["id"]})["result"]
    assert polled["status"]["state"] == "TASK_STATE_WORKING"  # a minute has not passed
    assert post(client, "clock/advance", {"ms": 60000, "agent": "alpha"}) == {
        "advancedMs": 60000,
        "agents": ["alpha"],
    }
    polled = rpc(client, "alpha", "GetTask", {"id": task["id"]})["result"]
    assert polled["status"]["state"] == "TASK_STATE_COMPLETED"
    assert get(client, "tasks")["tasks"][0]["state"] == "completed"


def test_polls_pass_a_polls_gate(client: FlaskClient) -> None:
    task_id = send(client, "alpha", "gated", returnImmediately=True)["result"]["task"]["id"]
    view = post(client, f"tasks/{task_id}/polls", {"polls": 2})["task"]
    assert (view["id"], view["state"], view["polls"], view["remainingSteps"]) == (
        task_id,
        "working",
        2,
        2,
    )
    view = post(client, f"tasks/{task_id}/polls", {"polls": 1})["task"]
    assert view["state"] == "completed" and view["remainingSteps"] == 0
    assert [e.get("artifactId") for e in view["events"]] == [None, "log", None]
    got = rpc(client, "alpha", "GetTask", {"id": task_id})["result"]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"
    post(client, "tasks/nope/polls", {"polls": 1}, status=404)


def test_unknown_agent_is_404(client: FlaskClient) -> None:
    response = client.get("/_mockagent/calls?agent=gamma")
    assert response.status_code == 404
    assert response.get_json()["error"] == {
        "code": 404,
        "message": "no agent 'gamma'; agents: 'alpha', 'beta'",
    }
    post(client, "reset", {"agent": "gamma"}, status=404)


# -- runtime loads ----------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[int, float]]:
    return {
        str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime)
        for p in sorted(root.rglob("*"))
    }


def test_load_adds_and_replaces_agents_from_the_folder(client: FlaskClient, folder: Path) -> None:
    (folder / "more").mkdir()
    (folder / "more" / "gamma.yaml").write_text(cassette_text("gamma", OTHER))
    before = snapshot(folder.parent)
    added = post(client, "cassettes/load", {"path": "more/gamma.yaml"})
    assert (added["agent"], added["replaced"], added["url"], added["interactions"]) == (
        "gamma",
        False,
        "/gamma/",
        1,
    )
    assert (
        send(client, "gamma", "hello")["result"]["message"]["parts"][0]["text"]
        == "Hi from the new cassette."
    )

    send(client, "alpha", "Ready?")
    replaced = post(client, "cassettes/load", {"path": "more/gamma.yaml", "agent": "alpha"})
    assert replaced["replaced"] is True and replaced["agent"] == "alpha"
    assert (
        send(client, "alpha", "hello")["result"]["message"]["parts"][0]["text"]
        == "Hi from the new cassette."
    )
    assert "error" in send(client, "alpha", "Ready?")  # the old interactions are gone
    assert [a["name"] for a in get(client, "agents")["agents"]] == ["alpha", "beta", "gamma"]
    assert [c["agent"] for c in get(client, "calls?agent=alpha")["calls"]] == ["alpha", "alpha"]
    assert snapshot(folder.parent) == before  # nothing written


def test_load_into_a_single_cassette(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text(cassette_text("one"))
    (tmp_path / "two.yaml").write_text(cassette_text("two", OTHER))
    app = create_app(tmp_path / "one.yaml")
    client = app.test_client()
    try:
        assert post(client, "cassettes/load", {"path": "two.yaml"})["agent"] == ""
        assert (
            send(client, "", "hello")["result"]["message"]["parts"][0]["text"]
            == "Hi from the new cassette."
        )
        refused = post(client, "cassettes/load", {"path": "two.yaml", "agent": "two"}, status=400)
        assert "single cassette" in refused["error"]["message"]
    finally:
        app.extensions["mockagent"].close()


def test_load_refuses_paths_outside_the_folder(client: FlaskClient, folder: Path) -> None:
    outside = folder.parent / "outside.yaml"
    outside.write_text(cassette_text("outside", OTHER))
    (folder / "escape.yaml").symlink_to(outside)
    (folder / "linked").symlink_to(folder.parent, target_is_directory=True)
    cases = {
        str(outside): "absolute",
        "/etc/passwd.yaml": "absolute",
        "../outside.yaml": "'..'",
        "more/../../outside.yaml": "'..'",
        "escape.yaml": "outside the cassette folder",
        "linked/outside.yaml": "outside the cassette folder",
        "alpha.txt": ".yaml",
        "C:/x.yaml": "absolute",
        "a\\..\\b.yaml": "relative path",
    }
    for path, says in cases.items():
        body = post(client, "cassettes/load", {"path": path, "agent": "evil"}, status=400)
        assert body["error"]["code"] == 400 and says in body["error"]["message"], (path, body)
    assert "evil" not in [a["name"] for a in get(client, "agents")["agents"]]
    assert (
        post(client, "cassettes/load", {"path": "missing.yaml"}, status=404)["error"]["code"] == 404
    )


def test_load_refuses_a_broken_cassette_and_bad_names(client: FlaskClient, folder: Path) -> None:
    (folder / "broken.yml").write_text("version: 1\nagent: {}\n")
    body = post(client, "cassettes/load", {"path": "broken.yml"}, status=400)
    assert "broken.yml" in body["error"]["message"]
    for agent in ("_mockagent", "a/b", "", 7):
        post(client, "cassettes/load", {"path": "alpha.yaml", "agent": agent}, status=400)
    assert [a["name"] for a in get(client, "agents")["agents"]] == ["alpha", "beta"]


# -- robustness and switching off -------------------------------------------------------------

GARBAGE = [
    b"{",
    b"[]",
    b"null",
    b'"x"',
    b"\xff\xfe",
    b'{"ms": "ten"}',
    b'{"ms": -1}',
    b'{"ms": true}',
    b'{"ms": 1e999}',
    b'{"polls": 0}',
    b'{"polls": 1.5}',
    b'{"polls": 99999999}',
    b'{"path": 5}',
    b'{"path": ""}',
    b'{"agent": 7}',
    b'{"agent": ["alpha"]}',
    b'{"path": "a\\u0000.yaml"}',
]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"ms": NaN}', "NaN is not JSON"),
        (b'{"ms": -Infinity}', "-Infinity is not JSON"),
        (b'{"ms": 1e999}', "out of range"),
        (b'{"ms": ', "Expecting value"),
        (b"\xff", "can't decode"),
    ],
)
def test_a_body_that_is_not_json_is_a_400_saying_why(
    client: FlaskClient, body: bytes, why: str
) -> None:
    response = client.post("/_mockagent/clock/advance", data=body, content_type="application/json")
    message = response.get_json()["error"]["message"]
    assert response.status_code == 400 and message.startswith("the body must be a JSON object: ")
    assert why in message, message


@pytest.mark.parametrize("path", ["reset", "clock/advance", "tasks/t1/polls", "cassettes/load"])
@pytest.mark.parametrize("body", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_bodies_get_a_json_error_not_a_500(
    client: FlaskClient, path: str, body: bytes
) -> None:
    response = client.post(f"/_mockagent/{path}", data=body, content_type="application/json")
    assert response.status_code in (200, 400, 404), response.get_data(as_text=True)
    answer = response.get_json()
    if body in GARBAGE[:5]:  # not a JSON object at all
        assert answer["error"]["code"] == 400
        assert answer["error"]["message"].startswith("the body must be a JSON object")
    if response.status_code == 200:  # only a reset ignores fields it does not take
        assert path == "reset" and "agent" not in json.loads(body), answer
    else:
        assert answer["error"]["code"] == response.status_code


def test_bad_queries_methods_and_paths_are_json_errors(client: FlaskClient) -> None:
    assert client.get("/_mockagent/calls?matched=maybe").get_json()["error"]["code"] == 400
    wrong = client.get("/_mockagent/reset")
    assert wrong.status_code == 405 and wrong.headers["Allow"] == "POST"
    assert client.post("/_mockagent/calls").status_code == 405
    response = client.get("/_mockagent/nothing/here")  # /_mockagent/ itself is the inspector page
    assert response.status_code == 404 and response.get_json()["error"]["code"] == 404


def test_admin_off_is_an_unknown_path(folder: Path) -> None:
    app = create_app(folder, admin=False)
    client = app.test_client()
    try:
        admin = client.get("/_mockagent/calls")
        other = client.get("/_elsewhere/calls")
        assert admin.status_code == other.status_code != 200
        assert "No agent at /_mockagent/calls" in admin.get_data(as_text=True)
        assert client.post("/_mockagent/reset").status_code == other.status_code
    finally:
        app.extensions["mockagent"].close()


def test_over_http_and_switched_off_in_a_thread(folder: Path) -> None:
    with serve_in_thread(folder) as server:
        with urllib.request.urlopen(server.url + "/_mockagent/agents", timeout=5) as response:
            assert response.headers["Content-Type"] == "application/json"
            assert [a["name"] for a in json.load(response)["agents"]] == ["alpha", "beta"]
        request = urllib.request.Request(
            server.url + "/_mockagent/clock/advance",
            data=b'{"ms": 5}',
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert json.load(response) == {"advancedMs": 5, "agents": ["alpha", "beta"]}
    with serve_in_thread(folder, admin=False) as server:
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(server.url + "/_mockagent/agents", timeout=5)
        assert "No agent at /_mockagent/agents" in failed.value.read().decode()
    assert os.path.exists(folder / "alpha.yaml")
