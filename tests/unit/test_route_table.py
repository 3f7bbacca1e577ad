"""One HTTP+JSON route table: `mockagent.dialects.a2a.routes` routes what `serve` answers, what the
recording proxy records and what `verify` (observe) calls an operation. observe kept its own
table beside rest.py's, with its own idea of prefixes and v0.3 paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mockagent import errors
from mockagent.dialects.a2a import routes
from mockagent.verify.observe import operation_of

PACKAGE = Path(__file__).resolve().parents[2] / "mockagent"
GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


def _sample(pattern: str) -> str:
    """A path the pattern matches: each group becomes its name (`/tasks/id:cancel`)."""
    return GROUP.sub(lambda m: m.group(1), pattern)


V1_ROUTES = [
    (verb, _sample(path), op) for verbs, path, op in routes.ROUTES for verb in sorted(verbs)
]
V03_ROUTES = [
    (verb, _sample(path), op) for verbs, path, op in routes.V0_3_ROUTES for verb in sorted(verbs)
]


@pytest.mark.parametrize(("verb", "path", "operation"), V1_ROUTES)
def test_every_v1_route_is_one_operation_behind_any_tenant(verb, path, operation) -> None:
    found = routes.classify(verb, path, "1.0")
    assert found is not None and (found.operation, found.v0_3) == (operation, False)
    found = routes.classify(verb, "/projects/p/locations/l" + path, "1.0")
    assert found is not None and found.path_params["tenant"] == "projects/p/locations/l"
    assert operation_of(verb, "/agents/a" + path + "?historyLength=1", None) == operation


@pytest.mark.parametrize(("verb", "path", "operation"), V03_ROUTES)
def test_every_v0_3_route_is_one_operation_below_v1(verb, path, operation) -> None:
    found = routes.classify(verb, "/v1" + path)
    assert found is not None and (found.operation, found.v0_3) == (operation, True)
    assert operation_of(verb, "/agents/a/v1" + path, None) == operation  # below a mount too


def test_v1_is_a_tenant_when_the_version_is_1_0() -> None:
    found = routes.classify("POST", "/v1/message:send", "1.0")
    assert found == routes.Route("SendMessage", {"tenant": "v1"}, v0_3=False)
    with pytest.raises(errors.MethodNotFound):
        routes.classify("DELETE", "/tasks/t")
    assert operation_of("DELETE", "/tasks/t", None) == "DELETE /tasks/t"
    assert operation_of("GET", "/a/.well-known/agent-card.json", None) == "AgentCard"


def test_no_other_module_keeps_a_route_table() -> None:
    owners = {PACKAGE / "dialects" / "a2a" / "routes.py"}
    # a raw string (a route's pattern) naming an A2A route's path
    pattern = re.compile(
        r"""\brf?["'][^"']*(message:s|:cancel|:subscribe|pushNotificationConfigs)"""
    )
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in owners
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
