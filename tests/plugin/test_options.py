"""A misspelled setting of the plugin is never ignored: an unknown marker option or
`mockagent_config` key, a wrong value, an unknown `--mockagent-…` flag each stop the test (or the
session) with "did you mean", as a cassette's fields do, every problem at once."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import cassette, make_test, run


def test_unknown_marker_options_error_the_test_with_a_suggestion(
    pytester: pytest.Pytester,
) -> None:
    cassette(pytester.path / "c.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("c.yaml", strcit=True, record_mod="once")
def test_typos(mockagent):
    pass


@pytest.mark.mockagent("c.yaml", record_mode="onc", pace="instnat", strict="yes", grpc=1)
def test_values(mockagent):
    pass


@pytest.mark.mockagent("c.yaml", "d.yaml", upstream="127.0.0.1:9", pace="scale=fast")
def test_more(mockagent):
    pass


@pytest.mark.mockagent("c.yaml", strict=True, pace="scale=0.5", record_mode="none")
def test_right(mockagent):
    send(mockagent.url, "Which languages?")
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_typos*",
            "mockagent: @pytest.mark.mockagent: unknown option 'strcit'; did you mean 'strict'?",
            "mockagent: @pytest.mark.mockagent: unknown option 'record_mod'; "
            "did you mean 'record_mode'?",
            "*ERROR at setup of test_values*",
            "mockagent: @pytest.mark.mockagent: record_mode 'onc' is not a record mode; "
            "did you mean 'once'?",
            "mockagent: @pytest.mark.mockagent: pace 'instnat' is not a pace; "
            "did you mean 'instant'?",
            "mockagent: @pytest.mark.mockagent: strict takes True or False, got 'yes'",
            "mockagent: @pytest.mark.mockagent: grpc takes True or False, got 1",
            "*ERROR at setup of test_more*",
            "mockagent: @pytest.mark.mockagent: takes one cassette path, got ('c.yaml', 'd.yaml', "
            "'upstream', 'pace')",
            "mockagent: @pytest.mark.mockagent: upstream '127.0.0.1:9' is not an http(s) URL*",
            "mockagent: @pytest.mark.mockagent: pace 'scale=fast' is not a pace: scale=F takes a "
            "number F from 0 to 1000",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_unknown_config_keys_error_the_test_with_a_suggestion(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest

@pytest.fixture
def mockagent_config():
    return {"recordmode": "none", "path": "c.yaml", "cassete_dir": "x", "pace_cap_ms": -1}
"""
    )
    make_test(
        pytester,
        """
@pytest.mark.mockagent
def test_config(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "mockagent: mockagent_config: unknown key 'recordmode'; did you mean 'record_mode'?",
            "mockagent: mockagent_config: unknown key 'path'; a cassette is named by the marker*",
            "mockagent: mockagent_config: unknown key 'cassete_dir'; did you mean 'cassette_dir'?",
            "mockagent: mockagent_config: pace_cap_ms takes a number ≥ 0, got -1",
        ]
    )


def test_command_line_values_and_flags_are_refused_with_a_suggestion(
    pytester: pytest.Pytester,
) -> None:
    make_test(pytester, "def test_nothing():\n    pass\n")
    mode = run(pytester, "--mockagent-record-mode=onc")
    assert mode.ret == pytest.ExitCode.USAGE_ERROR
    mode.stderr.fnmatch_lines(
        ["*argument --mockagent-record-mode: 'onc' is not a record mode; did you mean 'once'?"]
    )
    upstream = run(pytester, "--mockagent-upstream", "127.0.0.1:9")
    assert upstream.ret == pytest.ExitCode.USAGE_ERROR
    upstream.stderr.fnmatch_lines(["*--mockagent-upstream: '127.0.0.1:9' is not an http(s) URL*"])
    flag = run(pytester, "--mockagent-strcit", "--mockagent-recordmode=once")
    assert flag.ret == pytest.ExitCode.USAGE_ERROR
    flag.stderr.fnmatch_lines(
        [
            "*unknown option --mockagent-strcit; did you mean '--mockagent-strict'?",
            "unknown option --mockagent-recordmode; did you mean '--mockagent-record-mode'?",
        ]
    )
    run(pytester, "--mockagent-record-mode=none", "--mockagent-strict").assert_outcomes(passed=1)


def test_outer_markers_are_checked_and_their_options_apply(pytester: pytest.Pytester) -> None:
    """A module's or class's marker is merged under the test's own, as pytest-recording's are:
    its options apply, and a misspelled one errors the test (before, both were ignored)."""
    cassette(pytester.path / "c.yaml")
    make_test(
        pytester,
        """
pytestmark = pytest.mark.mockagent(redact_names=["x-tenant"], allow_values="public")


@pytest.mark.mockagent(strict=True)
class TestStrict:
    @pytest.mark.mockagent("c.yaml")
    def test_unused(self, mockagent):
        pass


@pytest.mark.mockagent(strcit=True)
class TestTypo:
    @pytest.mark.mockagent("c.yaml")
    def test_typo(self, mockagent):
        pass


@pytest.mark.mockagent("c.yaml")
class TestPath:
    @pytest.mark.mockagent(pace="instant")
    def test_path_from_the_class(self, mockagent):
        send(mockagent.url, "Which languages?")
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of TestTypo.test_typo*",
            "mockagent: @pytest.mark.mockagent: unknown option 'strcit'; did you mean 'strict'?",
        ]
    )
    result.stdout.fnmatch_lines(["*strict mode: every interaction must be used*"])


def test_a_misspelled_placeholder_in_cassette_dir_is_refused() -> None:
    """`{modul}` would make a folder named `{modul}`, beside the tests, without a word."""
    from mockagent.testing.options import problems

    given = {"cassette_dir": "cassettes/{modul}"}
    assert problems("where", "option", given, ["cassette_dir"]) == [
        "where: cassette_dir 'cassettes/{modul}' has {modul}; did you mean 'module'?"
    ]
    assert problems("where", "option", {"cassette_dir": "c/{module}"}, ["cassette_dir"]) == []
