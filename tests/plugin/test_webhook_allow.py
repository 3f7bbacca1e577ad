"""The marker's (or mockagent_config's) `webhook_allow`: push notifications may go to these hosts
besides loopback, as with `serve --webhook-allow`; a malformed rule fails the test naming it."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import cassette, make_test, run


def test_the_marker_allows_webhook_hosts(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml", webhook_allow=["10.0.0.0/8", "hooks.test:8080"])
def test_allowed(mockagent):
    assert mockagent.server.mounts.webhook_allow == ("10.0.0.0/8", "hooks.test:8080")


@pytest.mark.mockagent("reviewer.yaml")
def test_loopback_only(mockagent):
    assert mockagent.server.mounts.webhook_allow == ()
""",
    )
    run(pytester).assert_outcomes(passed=2)


def test_a_malformed_rule_fails_the_test_naming_it(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml", webhook_allow=["10.0.0.0/33"])
def test_bad(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*webhook_allow*10.0.0.0/33*"])
