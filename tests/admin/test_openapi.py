"""The admin API's OpenAPI document, docs/reference/admin-openapi.yaml: an OpenAPI 3.1 document
whose every `$ref` resolves, listing exactly the routes the server answers under /_mockagent (a
route added without documenting it fails here), and whose schemas a served agent's answers meet."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from jsonschema import Draft202012Validator

from mockagent.errors import StoreError
from mockagent.server.admin import api
from mockagent.server.app import create_app
from mockagent.server.health import HEALTH_PATH
from mockagent.server.thread import ServerThread, serve_in_thread

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs" / "reference" / "admin-openapi.yaml"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))


def refs(node: Any) -> Iterator[str]:
    """Every `$ref` in the document."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def resolve(document: dict[str, Any], node: Any) -> Any:
    """`node`, or what its `$ref` (a pointer into this document) names, followed to the end."""
    while isinstance(node, dict) and "$ref" in node:
        pointer = node["$ref"]
        assert pointer.startswith("#/"), f"{pointer}: only refs inside the document"
        node = document
        for part in pointer[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            assert isinstance(node, dict) and part in node, f"{pointer} does not resolve"
            node = node[part]
    return node


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any], Any]]:
    """(METHOD, path, operation, path item) of every documented operation."""
    for path, item in document["paths"].items():
        item = resolve(document, item)
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method], item


# -- the document itself ---------------------------------------------------------------------


def test_it_is_an_openapi_3_1_document(document: dict[str, Any]) -> None:
    assert re.fullmatch(r"3\.1\.\d+", document["openapi"])
    assert document["info"]["title"] and document["info"]["version"]
    assert document["paths"]
    assert all(path.startswith(api.PREFIX) for path in document["paths"])
    for method, path, operation, item in operations(document):
        assert operation["responses"], f"{method} {path} has no responses"
        assert all(re.fullmatch(r"[1-5]\d\d", code) for code in operation["responses"])
        # a path template's every {parameter} is declared `in: path`, and only those
        declared = {
            parameter["name"]
            for parameter in map(
                lambda p: resolve(document, p),
                [*item.get("parameters", []), *operation.get("parameters", [])],
            )
            if parameter["in"] == "path"
        }
        assert declared == set(re.findall(r"\{(\w+)\}", path)), f"{method} {path}"
    # one operation may serve two paths (the inspector's, by $ref), one id one operation
    ids = {id(operation): operation["operationId"] for _, _, operation, _ in operations(document)}
    assert len(ids) == len(set(ids.values()))


def test_every_ref_resolves(document: dict[str, Any]) -> None:
    found = sorted(set(refs(document)))
    assert len(found) > 20
    for pointer in found:
        assert resolve(document, {"$ref": pointer}) is not None


def test_the_bearer_token_is_optional(document: dict[str, Any]) -> None:
    assert document["components"]["securitySchemes"]["adminToken"] == {
        **document["components"]["securitySchemes"]["adminToken"],
        "type": "http",
        "scheme": "bearer",
    }
    assert {} in document["security"] and {"adminToken": []} in document["security"]


def test_every_operation_documents_the_guard_refusals(document: dict[str, Any]) -> None:
    """403 everywhere; 401 wherever the admin token is asked for, which is all but the health
    probe (`security: []`)."""
    for method, path, operation, _ in operations(document):
        refusals = {"403"} if operation.get("security") == [] else {"401", "403"}
        assert refusals <= operation["responses"].keys(), f"{method} {path}"
    assert [path for _, path, op, _ in operations(document) if op.get("security") == []] == [
        HEALTH_PATH
    ]


# -- the document against the code -----------------------------------------------------------


def served_routes() -> set[tuple[str, str]]:
    """(METHOD, path template) of every route the admin API answers: its route table, with each
    named group as an OpenAPI {parameter}, the inspector page at both of its paths, and the
    health probe (served before the admin API, on or off: mockagent.server.health)."""
    out = {("GET", api.PREFIX), ("GET", f"{api.PREFIX}/"), ("GET", HEALTH_PATH)}
    for method, pattern, _ in api.routes(None):  # type: ignore[arg-type]  # only closes over it
        template = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern.pattern)
        out.add((method, f"{api.PREFIX}/" + re.sub(r"\\(.)", r"\1", template)))  # unescaped
    return out


def test_the_flask_app_routes_the_admin_api_through_the_table_only() -> None:
    """Flask sees three rules under /_mockagent, and the route table (served_routes) does the
    rest: a Flask rule added beside them fails here, to be documented and added above."""
    app = create_app(ROOT / "cassettes" / "kit")
    try:
        rules = {rule.rule for rule in app.url_map.iter_rules() if rule.rule.startswith(api.PREFIX)}
    finally:
        app.extensions["mockagent"].close()
    assert rules == {api.PREFIX, f"{api.PREFIX}/", f"{api.PREFIX}/<path:rest>"}


def test_the_document_lists_every_route_and_no_other(document: dict[str, Any]) -> None:
    documented = {(method, path) for method, path, _, _ in operations(document)}
    served = served_routes()
    assert len(served) > 10
    assert served - documented == set(), "served but not in docs/reference/admin-openapi.yaml"
    assert documented - served == set(), "documented but not served"


# -- a served agent's answers against the schemas --------------------------------------------

CASSETTE = """\
version: 1
agent:
  name: documented
  description: Answers for the OpenAPI document's schemas.
  capabilities: {pushNotifications: true}
  skills: [{id: s, name: S, description: A skill.}]
interactions:
  - name: question
    match: {text: {endswith: "?"}}
    fault: {delayMs: 1}
    reply: {message: "Yes."}
  - name: gated
    match: {text: gated}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - artifact: {artifactId: log, parts: [{text: done}]}
            after: {polls: 3}
          - state: TASK_STATE_COMPLETED
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    folder = tmp_path_factory.mktemp("cassettes")
    (folder / "documented.yaml").write_text(CASSETTE, encoding="utf-8")
    with serve_in_thread(folder) as server, httpx.Client(base_url=server.url) as client:
        for text in ("Is it documented?", "gated", "nothing matches this"):
            params = {
                "message": {"messageId": text, "role": "ROLE_USER", "parts": [{"text": text}]},
                "configuration": {"returnImmediately": True},  # the gated task waits for polls
            }
            rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
            client.post("/documented/", headers={"A2A-Version": "1.0"}, json=rpc)
        yield client


def check(document: dict[str, Any], method: str, path: str, answer: httpx.Response) -> Any:
    """Assert that `answer` is one `method path` documents, its body valid for the schema of
    its status; the body."""
    operation = resolve(document, document["paths"][path])[method.lower()]
    assert str(answer.status_code) in operation["responses"], (method, path, answer.text)
    response = resolve(document, operation["responses"][str(answer.status_code)])
    [(media, content)] = response["content"].items()
    assert answer.headers["content-type"].split(";")[0] == media
    body = answer.json() if media == "application/json" else answer.text
    schema = {**content["schema"], "components": document["components"]}  # for its $refs
    errors = sorted(Draft202012Validator(schema).iter_errors(body), key=str)
    assert errors == [], f"{method} {path}: {errors[0].message} at {list(errors[0].path)}"
    return body


def test_served_answers_meet_the_documented_schemas(
    document: dict[str, Any], served: httpx.Client
) -> None:
    prefix = api.PREFIX
    for path in ("agents", "calls", "near-misses", "tasks", "interactions", "deliveries"):
        check(document, "GET", f"{prefix}/{path}", served.get(f"{prefix}/{path}"))
    calls = check(document, "GET", f"{prefix}/calls", served.get(f"{prefix}/calls"))["calls"]
    assert [call["matched"] for call in calls] == [True, True, False]
    assert calls[0]["faults"] and calls[2]["error"]
    tasks = check(document, "GET", f"{prefix}/tasks", served.get(f"{prefix}/tasks"))["tasks"]
    assert tasks[0]["events"] and tasks[0]["waitingFor"]
    one = f"{prefix}/interactions/{{name}}"
    check(document, "GET", one, served.get(f"{prefix}/interactions/gated"))
    check(document, "GET", f"{prefix}/cassette", served.get(f"{prefix}/cassette"))
    polls = f"{prefix}/tasks/{{task_id}}/polls"
    check(
        document,
        "POST",
        polls,
        served.post(polls.format(task_id=tasks[0]["id"]), json={"polls": 3}),
    )
    advance = served.post(f"{prefix}/clock/advance", json={"ms": 10})
    check(document, "POST", f"{prefix}/clock/advance", advance)
    check(document, "GET", f"{prefix}/", served.get(f"{prefix}/"))
    health = check(document, "GET", HEALTH_PATH, served.get(HEALTH_PATH))
    assert health == {"status": "ok", "store": {"kind": "memory", "reachable": True}}


def test_served_errors_meet_the_documented_schemas(
    document: dict[str, Any], served: httpx.Client
) -> None:
    prefix = api.PREFIX
    wrong = served.delete(f"{prefix}/agents")
    assert wrong.status_code == 405 and wrong.headers["Allow"] == "GET"
    assert Draft202012Validator(
        {"$ref": "#/components/schemas/Error", "components": document["components"]}
    ).is_valid(wrong.json())
    unknown = check(document, "GET", f"{prefix}/tasks", served.get(f"{prefix}/tasks?agent=nobody"))
    assert unknown["error"]["code"] == 404
    bad = check(document, "GET", f"{prefix}/calls", served.get(f"{prefix}/calls?matched=maybe"))
    assert bad["error"]["code"] == 400
    foreign = served.get(f"{prefix}/agents", headers={"Host": "attacker.example"})
    assert check(document, "GET", f"{prefix}/agents", foreign)["error"]["code"] == 403
    page = served.get(HEALTH_PATH, headers={"Origin": "https://attacker.example"})
    assert check(document, "GET", HEALTH_PATH, page)["error"]["code"] == 403
    posted = served.post(HEALTH_PATH)
    assert posted.status_code == 405 and posted.headers["Allow"] == "GET, HEAD"
    assert Draft202012Validator(
        {"$ref": "#/components/schemas/Error", "components": document["components"]}
    ).is_valid(posted.json())


def test_an_unreachable_store_meets_the_documented_503(
    document: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that does not answer (the shared store's PING failing) is the documented 503."""
    (tmp_path / "documented.yaml").write_text(CASSETTE, encoding="utf-8")
    app = create_app(tmp_path, admin=False)
    mounts = app.extensions["mockagent"]

    def gone(timeout_s: float) -> None:
        raise StoreError("the store at redis://***@10.0.0.5:6379/0 did not answer: refused")

    monkeypatch.setattr(mounts.agents["documented"].tasks, "ping", gone)
    server = ServerThread(app).start()
    try:
        answer = httpx.get(server.url + HEALTH_PATH)
    finally:
        server.stop()
        mounts.close()
    body = check(document, "GET", HEALTH_PATH, answer)
    assert answer.status_code == 503 and body["status"] == "unavailable"


def test_a_missing_admin_token_meets_the_documented_401(
    document: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "documented.yaml").write_text(CASSETTE, encoding="utf-8")
    app = create_app(tmp_path, admin_token="s3cret")
    try:
        client = app.test_client()
        refused = client.get(f"{api.PREFIX}/agents")
        allowed = client.get(f"{api.PREFIX}/agents", headers={"Authorization": "Bearer s3cret"})
    finally:
        app.extensions["mockagent"].close()
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
    schema = {"$ref": "#/components/schemas/Error", "components": document["components"]}
    assert Draft202012Validator(schema).is_valid(refused.get_json())
    assert allowed.status_code == 200
