"""Interactions added, removed, verified and saved over the admin API (WireMock's habit), against
a server started on a real port."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest, TaskState

from mockagent.cassette.loader import load_cassette
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.cassette_text import HEADER

HTTP = httpx.Client(timeout=10.0, trust_env=False)
OWN = """\
interactions:
  - name: start
    match: {text: start}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which branch?
  - name: branch
    match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: start}}
    reply:
      task:
        steps:
          - state: TASK_STATE_COMPLETED
            message: Done.
  - name: question
    match: {text: {endswith: "?"}}
    reply: {message: "Yes."}
"""


def cassette(folder: Path, name: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(HEADER.replace("name: tester", f"name: {name}") + OWN)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "cassettes"
    root.mkdir()
    cassette(root, "alpha")
    cassette(root, "beta")
    return root


@pytest.fixture
def server(folder: Path) -> Iterator[ServerThread]:
    with serve_in_thread(folder) as started:
        yield started


def admin(server: ServerThread, method: str, path: str, **kwargs: Any) -> httpx.Response:
    if "content" in kwargs:  # a YAML body; without its type it would be refused (a web page's)
        kwargs.setdefault("headers", {"Content-Type": "application/yaml"})
    response = HTTP.request(method, f"{server.url}/_mockagent/{path}", **kwargs)
    assert response.status_code < 500, response.text
    return response


def send(url: str, text: str, **message: Any) -> dict[str, Any]:
    parts = [{"text": text}]
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": parts, **message}},
    }
    response = HTTP.post(url + "/", json=body, headers={"A2A-Version": "1.0"})
    return dict(response.json())


def text_of(answer: dict[str, Any]) -> str:
    return str(answer["result"]["message"]["parts"][0]["text"])


def test_an_added_interaction_answers_until_it_is_removed(server: ServerThread) -> None:
    beta = server.agent_url("beta")
    added = admin(
        server,
        "POST",
        "interactions?agent=beta",
        json={"name": "hello", "match": {"text": "hello"}, "reply": {"message": "Hi."}},
    )
    assert added.status_code == 201
    assert added.json() == {"agent": "beta", "added": ["hello"], "interactions": 4}
    assert text_of(send(beta, "hello")) == "Hi."
    assert text_of(send(beta, "hello")) == "Hi."
    assert "error" in send(server.agent_url("alpha"), "hello")  # per agent
    listed = admin(server, "GET", "interactions?agent=beta").json()["interactions"]
    assert [(i["name"], i["added"], i["uses"], i["line"] is None) for i in listed] == [
        ("hello", True, 2, True),  # tried first
        ("start", False, 0, False),
        ("branch", False, 0, False),
        ("question", False, 0, False),
    ]
    one = admin(server, "GET", "interactions/hello").json()["interaction"]  # the one agent with it
    assert (one["agent"], one["uses"], one["times"], one["added"]) == ("beta", 2, None, True)
    assert one["definition"]["match"] == {"text": "hello"}
    assert [(c["seq"], c["interaction"], c["agent"]) for c in one["calls"]] == [
        (1, "hello", "beta"),
        (2, "hello", "beta"),
    ]
    assert one["calls"][0]["params"]["message"]["parts"] == [{"text": "hello"}]
    removed = admin(server, "DELETE", "interactions/hello?agent=beta")
    assert removed.json() == {"agent": "beta", "removed": "hello", "interactions": 3}
    assert send(beta, "hello")["error"]["code"] == -32004  # a near miss again
    server.reset()  # the near miss was this test's own


def test_yaml_lists_are_all_or_nothing_with_the_loaders_errors(server: ServerThread) -> None:
    body = (
        "- name: fine\n"
        "  match: {text: fine}\n"
        "  reply: {message: Fine.}\n"
        "- name: typo\n"
        "  match:\n"
        "    txt: hello\n"
        "  reply: {message: Hi.}\n"
    )
    refused = admin(server, "POST", "interactions?agent=alpha", content=body)
    assert refused.status_code == 400
    assert refused.json() == {
        "error": {
            "code": 400,
            "message": "body:6: interaction 'typo' (#2): match.txt: unknown field; "
            "did you mean 'text'?",
        }
    }
    names = [
        i["name"] for i in admin(server, "GET", "interactions?agent=alpha").json()["interactions"]
    ]
    assert names == ["start", "branch", "question"]
    fixed = admin(server, "POST", "interactions?agent=alpha", content=body.replace("txt", "text"))
    assert fixed.status_code == 201 and fixed.json()["added"] == ["fine", "typo"]


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        (
            "interactions?agent=alpha",
            {"name": "question", "reply": {"message": "x"}},
            409,
            "there is an interaction named 'question' already: remove it first",
        ),
        (
            "interactions?agent=alpha",
            {"name": "x", "match": {"task": {"from": "nope"}}, "reply": {"message": "x"}},
            400,
            "interaction 'x' (#1): match.task.from: names 'nope', which is no interaction",
        ),
        (
            "interactions?agent=alpha",
            {"name": "x", "reply": {"error": "NoSuchError"}},
            400,
            "interaction 'x' (#1): reply.error: unknown error 'NoSuchError'",
        ),
        (
            "interactions?agent=alpha",
            {"name": "x", "match": {"text": {"regex": "("}}, "reply": {"message": "x"}},
            400,
            "interaction 'x' (#1): match.text.regex: bad regex '('",
        ),
        (
            "interactions?agent=alpha",
            {"name": "x"},
            400,
            "interaction 'x' (#1): an interaction needs",
        ),
        ("interactions?agent=alpha", 3, 400, "give an interaction (a mapping"),
        (
            "interactions",
            {"name": "x", "reply": {"message": "x"}},
            400,
            "name the agent with ?agent=NAME; agents: 'alpha', 'beta'",
        ),
        (
            "interactions?agent=gamma",
            {"name": "x", "reply": {"message": "x"}},
            404,
            "no agent 'gamma'",
        ),
    ],
)
def test_refusals_are_4xx_in_the_admin_shape(
    server: ServerThread, path: str, body: Any, status: int, message: str
) -> None:
    refused = admin(server, "POST", path, json=body)
    assert refused.status_code == status
    error = refused.json()["error"]
    assert error["code"] == status and message in error["message"], error


SHADOWED = (
    "interaction 'late': shadowed can never match: interaction 'anything' comes first, "
    "has no `times` limit and matches every call this one does"
)


def names_of(server: ServerThread, agent: str) -> list[str]:
    listed = admin(server, "GET", f"interactions?agent={agent}").json()["interactions"]
    return [i["name"] for i in listed]


def test_an_added_interaction_behind_an_added_catch_all_is_422_naming_it(
    server: ServerThread,
) -> None:
    catch_all = {"name": "anything", "reply": {"message": "Anything."}}
    assert admin(server, "POST", "interactions?agent=alpha", json=catch_all).status_code == 201
    late = {"name": "late", "match": {"text": "hello"}, "reply": {"message": "Hi."}}
    refused = admin(server, "POST", "interactions?agent=alpha", json=late)
    assert refused.status_code == 422
    assert refused.json() == {
        "error": {
            "code": 422,
            "message": SHADOWED,
            "findings": [
                {
                    "interaction": "late",
                    "code": "shadowed",
                    "message": SHADOWED.removeprefix("interaction 'late': shadowed "),
                    "line": None,
                    "shadowedBy": "anything",
                }
            ],
        }
    }
    assert names_of(server, "alpha") == ["anything", "start", "branch", "question"]
    assert text_of(send(server.agent_url("alpha"), "hello")) == "Anything."


def test_a_fault_the_card_never_plays_is_422_with_the_body_line(server: ServerThread) -> None:
    body = (
        "- name: fine\n"
        "  match: {text: fine}\n"
        "  reply: {message: Fine.}\n"
        "- name: cut\n"
        "  match: {text: build it}\n"
        "  fault: {dropAfter: 2}\n"
        "  reply: {message: Built.}\n"
    )
    refused = admin(server, "POST", "interactions?agent=alpha", content=body)
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["message"] == (
        "body:4: interaction 'cut': streaming-off fault.dropAfter only applies to streams, but "
        "the card says capabilities.streaming: false"
    )
    assert [(f["code"], f["line"], f["shadowedBy"]) for f in error["findings"]] == [
        ("streaming-off", 4, None)
    ]
    assert names_of(server, "alpha") == ["start", "branch", "question"]  # nothing of the body


def test_a_shadow_by_a_predicate_and_a_card_operation_are_422(server: ServerThread) -> None:
    body = (
        "- name: builds\n"
        "  match: {text: {startswith: build}}\n"
        "  reply: {message: Building.}\n"
        "- name: build\n"
        "  match: {text: build it}\n"
        "  reply: {message: Built.}\n"
    )
    refused = admin(server, "POST", "interactions?agent=alpha", content=body)
    assert refused.status_code == 422
    assert [
        (f["code"], f["line"], f["shadowedBy"]) for f in refused.json()["error"]["findings"]
    ] == [("shadowed", 4, "builds")]
    card = {
        "name": "card",
        "match": {"operation": "GetExtendedAgentCard"},
        "reply": {"error": "TaskNotFound"},
    }
    refused = admin(server, "POST", "interactions?agent=alpha", json=card)
    assert refused.status_code == 422
    assert refused.json()["error"]["message"] == (
        "interaction 'card': extended-card-off matches GetExtendedAgentCard, but the card says "
        "capabilities.extendedAgentCard: false"
    )
    assert names_of(server, "alpha") == ["start", "branch", "question"]


def test_a_gate_goes_in_one_body_with_the_follow_up_that_opens_it(server: ServerThread) -> None:
    gate = {
        "name": "deploy",
        "match": {"text": "deploy"},
        "reply": {
            "task": {
                "steps": [
                    {"state": "TASK_STATE_INPUT_REQUIRED", "message": "Which env?"},
                    {"state": "TASK_STATE_COMPLETED"},
                ]
            }
        },
    }
    refused = admin(server, "POST", "interactions?agent=alpha", json=gate)
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert [f["code"] for f in error["findings"]] == ["unreachable-steps"]
    assert "no follow-up continues the task" in error["message"]
    assert error["message"].endswith("go in one body: a list is added at once)")
    follow_up = {
        "name": "env",
        "match": {"task": {"from": "deploy"}},
        "reply": {"task": {"steps": [{"state": "TASK_STATE_COMPLETED", "message": "Deployed."}]}},
    }
    added = admin(server, "POST", "interactions?agent=alpha", json=[gate, follow_up])
    assert added.status_code == 201 and added.json()["added"] == ["deploy", "env"]
    alone = {**follow_up, "name": "orphan", "match": {"task": {"from": "question"}}}
    refused = admin(server, "POST", "interactions?agent=alpha", json=alone)
    assert refused.status_code == 422
    assert refused.json()["error"]["message"] == (
        "interaction 'orphan': unreachable-follow-up can never match: its task would come from "
        "'question', which answers with a message, not a task"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the body is empty"),
        (b"\xff\xfe", "the body is not UTF-8 text"),
        (b"a: [", "not valid YAML"),
        (b"!!python/object:os.system {}", "not valid YAML"),
        (b"- 1\n- two\n", "interaction #1: "),
        (
            b"version: 1\nagent: {name: other}\ninteractions: []\n",
            "this is a whole cassette (with `version:`, `agent:`): give only its `interactions:`",
        ),
        (b"interactions: x\n", "`interactions:` takes a list of interactions; got the string 'x'"),
        (b"interactions:\n", "`interactions:` takes a list of interactions; got null"),
        (b"null\n", "or `interactions:` with the list; got null"),
    ],
)
def test_bad_bodies_are_400(server: ServerThread, content: bytes, message: str) -> None:
    refused = admin(server, "POST", "interactions?agent=alpha", content=content)
    assert refused.status_code == 400 and message in refused.json()["error"]["message"]


def test_removing_and_reset(server: ServerThread) -> None:
    assert admin(server, "DELETE", "interactions/start?agent=alpha").json() == {
        "error": {
            "code": 409,
            "message": "interaction 'start' is the `from` of 'branch': remove those first",
        }
    }
    assert admin(server, "DELETE", "interactions/nope?agent=alpha").status_code == 404
    assert admin(server, "GET", "interactions/nope").status_code == 404
    assert admin(server, "GET", "interactions/question").json()["error"]["message"] == (
        "agents 'alpha', 'beta' each have 'question': add ?agent=NAME"
    )
    assert admin(server, "DELETE", "interactions/branch?agent=alpha").status_code == 200
    assert admin(server, "DELETE", "interactions/start?agent=alpha").status_code == 200
    admin(server, "POST", "interactions?agent=alpha", json={"name": "n", "reply": {"message": "N"}})
    assert admin(server, "PUT", "interactions/n?agent=alpha").status_code == 405
    assert admin(server, "POST", "reset", json={"agent": "alpha"}).json() == {"reset": ["alpha"]}
    listed = admin(server, "GET", "interactions?agent=alpha").json()["interactions"]
    assert [(i["name"], i["added"]) for i in listed] == [
        ("start", False),
        ("branch", False),
        ("question", False),
    ]


def test_delete_without_agent_finds_the_one_agent_that_has_it(server: ServerThread) -> None:
    """As GET /_mockagent/interactions/NAME does (and WireMock's DELETE by id): in a folder, a
    name only one agent has needs no ?agent=."""
    added = {"name": "only-beta", "match": {"text": "b"}, "reply": {"message": "B"}}
    assert admin(server, "POST", "interactions?agent=beta", json=added).status_code == 201
    assert admin(server, "DELETE", "interactions/only-beta").json() == {
        "agent": "beta",
        "removed": "only-beta",
        "interactions": 3,
    }
    assert admin(server, "DELETE", "interactions/only-beta").json()["error"] == {
        "code": 404,
        "message": "no interaction named 'only-beta' in any agent",
    }
    assert admin(server, "DELETE", "interactions/question").json()["error"] == {
        "code": 400,
        "message": "agents 'alpha', 'beta' each have 'question': add ?agent=NAME",
    }
    unknown = admin(server, "DELETE", "interactions/nope?agent=alpha").json()["error"]["message"]
    assert unknown == "no interaction named 'nope'; the agent has 'start', 'branch', 'question'"


def test_a_saved_cassette_answers_byte_for_byte(server: ServerThread, tmp_path: Path) -> None:
    added = (
        "- name: build\n"
        "  match: {text: build, where: {message.metadata.env: prod}}\n"
        "  times: 1\n"
        "  reply:\n"
        "    task:\n"
        "      steps:\n"
        "        - {state: TASK_STATE_WORKING}\n"
        "        - artifact: {artifactId: log, parts: [{text: built}]}\n"
        "          lastChunk: true\n"
        "        - {state: TASK_STATE_COMPLETED, message: Built.}\n"
        "- name: build-again\n"
        "  match: {text: build}\n"
        "  reply: {message: Already built.}\n"
    )
    assert admin(server, "POST", "interactions?agent=beta", content=added).status_code == 201
    assert admin(server, "DELETE", "interactions/question?agent=beta").status_code == 200
    saved = admin(server, "GET", "cassette?agent=beta")
    assert saved.headers["Content-Type"] == "application/yaml; charset=utf-8"
    assert not saved.text.startswith("#")  # no schema.json in its folder: no machine's path
    data = yaml.safe_load(saved.text)
    assert [i["name"] for i in data["interactions"]] == ["build", "build-again", "start", "branch"]
    path = tmp_path / "saved.yaml"
    path.write_text(saved.text)
    assert (
        load_cassette(path).cassette.agent
        == load_cassette(server.mounts.agents["beta"].loaded.path).cassette.agent
    )

    def conversation(url: str) -> list[bytes]:
        bodies = []
        for text, metadata in [("build", {"env": "prod"}), ("build", {}), ("start", {})]:
            body = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "SendMessage",
                "params": {
                    "message": {
                        "messageId": "m",
                        "role": "ROLE_USER",
                        "parts": [{"text": text}],
                        "metadata": metadata,
                    }
                },
            }
            bodies.append(HTTP.post(url + "/", json=body, headers={"A2A-Version": "1.0"}).content)
        return bodies

    live = conversation(server.agent_url("beta"))
    assert b"Built." in live[0] and b"Already built." in live[1] and b"Which branch?" in live[2]
    with serve_in_thread(path) as fresh:
        assert conversation(fresh.agent_url()) == live


def test_an_official_client_gets_the_added_answer(server: ServerThread) -> None:
    admin(
        server,
        "POST",
        "interactions?agent=alpha",
        content="name: tests\nmatch: {text: {startswith: Run}}\n"
        "reply:\n  task:\n    steps:\n      - state: TASK_STATE_WORKING\n"
        "      - {state: TASK_STATE_COMPLETED, message: 12 passed}\n",
    )

    async def main() -> tuple[str, str]:
        config = ClientConfig(supported_protocol_bindings=["HTTP+JSON"], streaming=False)
        async with await create_client(server.agent_url("alpha"), client_config=config) as client:
            message = new_text_message("Run the tests", role=Role.ROLE_USER)
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            task = events[0].task
            return TaskState.Name(task.status.state), task.status.message.parts[0].text

    assert asyncio.run(main()) == ("TASK_STATE_COMPLETED", "12 passed")
    assert admin(server, "GET", "interactions/tests").json()["interaction"]["uses"] == 1


def test_the_endpoints_are_the_admin_apis_and_go_with_it(folder: Path) -> None:
    body = {"name": "hello", "match": {"text": "hello"}, "reply": {"message": "Hi."}}
    with serve_in_thread(folder) as on:
        assert (
            HTTP.post(f"{on.url}/_mockagent/interactions?agent=alpha", json=body).status_code == 201
        )
        assert HTTP.get(f"{on.url}/_mockagent/cassette?agent=alpha").status_code == 200
    with serve_in_thread(folder, admin=False) as off:
        refused = HTTP.post(f"{off.url}/_mockagent/interactions?agent=alpha", json=body)
        assert refused.status_code == 404 and "No agent at" in refused.text
        assert HTTP.get(f"{off.url}/_mockagent/cassette?agent=alpha").status_code == 404
        assert [i.name for i in off.agents["alpha"].interactions] == ["start", "branch", "question"]
