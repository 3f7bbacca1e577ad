"""pytest-xdist: a suite run with `-n 4` passes, each worker serving its tests on its own server
and port (the fixture binds port 0 in the worker's process)."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import cassette, make_test, run

SUITE = """
import os
from pathlib import Path


def note(mockagent):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    port = mockagent.server.url.rsplit(":", 1)[1]
    Path(__file__).with_name("ports").mkdir(exist_ok=True)
    Path(__file__).with_name("ports").joinpath(f"{worker}-{port}-{os.getpid()}").write_text(worker)


@pytest.mark.mockagent("reviewer.yaml")
@pytest.mark.parametrize("n", range(8))
def test_named(mockagent, n):
    reply = send(mockagent.url, "Which languages do you review?")
    assert reply["result"]["message"]["parts"][0]["text"] == "Python, Go and TypeScript."
    note(mockagent)


@pytest.mark.mockagent(agent={"name": "Agent"})
@pytest.mark.parametrize("n", range(8))
def test_own(mockagent, n):
    assert get_json(mockagent.card_url)["name"] == "Agent"
    assert mockagent.path.name == f"test_own[{n}].yaml"
    note(mockagent)
"""


def test_a_suite_passes_on_four_workers_each_with_its_own_servers(
    pytester: pytest.Pytester,
) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(pytester, SUITE)
    result = run(pytester, "-n", "4")
    result.assert_outcomes(passed=16)
    notes = {p.name: p.read_text() for p in (pytester.path / "ports").iterdir()}
    assert len(notes) == 16
    workers = set(notes.values())
    assert len(workers) > 1 and workers <= {"gw0", "gw1", "gw2", "gw3"}
