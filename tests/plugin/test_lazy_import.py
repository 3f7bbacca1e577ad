"""Installing mockagent registers its pytest plugin in every session of the environment: importing
it must load nothing heavy, and only a test that uses the fixture loads the server."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("flask", "werkzeug", "pydantic", "yaml", "httpx", "mockagent.server", "mockagent.engine")


def test_importing_the_plugin_and_the_package_root_loads_nothing_heavy() -> None:
    probe = (
        "import sys, pytest, mockagent, mockagent.testing.plugin; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_root_names_load_on_first_use() -> None:
    import mockagent
    from mockagent.server.app import create_app
    from mockagent.testing.fixture import MockAgent

    assert mockagent.MockAgent is MockAgent and mockagent.create_app is create_app
    assert set(mockagent.__all__) == {
        *mockagent._HOMES,
        "__version__",
    }  # nothing listed twice or missed
    assert set(mockagent.__all__) <= set(dir(mockagent))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        mockagent.nothing  # noqa: B018


CASSETTE = """\
version: 1
agent: {name: Lazy, description: Answers., skills: [{id: s, name: S, description: S.}]}
interactions:
  - name: any
    match: {text: {endswith: "?"}}
    reply: {message: "Yes."}
"""


def test_flask_loads_only_when_a_test_uses_the_fixture(pytester: pytest.Pytester) -> None:
    (pytester.path / "lazy.yaml").write_text(CASSETTE)
    pytester.makepyfile(
        test_lazy="""
import sys

import pytest
from mockagent import MockAgent


def test_a_without_the_fixture():
    assert "flask" not in sys.modules and "mockagent.server" not in sys.modules


@pytest.mark.mockagent("lazy.yaml")
def test_b_with_the_fixture(mockagent: MockAgent):
    assert isinstance(mockagent, MockAgent)
    assert "flask" in sys.modules
"""
    )
    # A fresh interpreter: this session has long imported Flask.
    result = pytester.runpytest_subprocess("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
