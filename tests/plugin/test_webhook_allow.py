"""The marker's (or mockagent_config's) `webhook_allow`: push notifications may go to these hosts
besides loopback, as with `serve --webhook-allow`; a malformed rule fails the test naming it."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import cassette, make_test, run
from tests.helpers.recording import CODE_REVIEWER, upstream_agent


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


def test_a_recording_honours_it_where_the_proxy_answers_itself(pytester: pytest.Pytester) -> None:
    """While recording, what the proxy answers itself (new_episodes' replay, expect()) sends push
    notifications as a replay does: to loopback and to what webhook_allow names."""
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
from mockagent.proxy.app import RECORDING

def allows(mockagent, host):
    proxy = mockagent.server.app.extensions[RECORDING]
    policy = proxy.replay.push.deliverer._policy
    return policy.refusal(host, 80, [host]) is None


@pytest.mark.mockagent(
    "reviewer.yaml", record_mode="new_episodes", webhook_allow=["10.0.0.0/8"]
)
def test_new_episodes(mockagent):
    assert allows(mockagent, "10.0.0.5") and not allows(mockagent, "192.168.0.5")


@pytest.mark.mockagent("fresh.yaml", record_mode="all", webhook_allow=["10.0.0.0/8"])
def test_expect(mockagent):
    mockagent.expect(text="ping").reply_message("pong")
    assert allows(mockagent, "10.0.0.5") and not allows(mockagent, "192.168.0.5")


@pytest.mark.mockagent("other.yaml", record_mode="all")
def test_loopback_only(mockagent):
    mockagent.expect(text="ping").reply_message("pong")
    assert not allows(mockagent, "10.0.0.5")
""",
    )
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        run(pytester, f"--mockagent-upstream={upstream.url}").assert_outcomes(passed=3)
