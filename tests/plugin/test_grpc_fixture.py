"""The fixture with `grpc=True`: the A2A gRPC binding beside HTTP, on a free port, from the same
agents; unmatched gRPC calls fail the test as HTTP ones do; a clear failure without the extra."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import cassette, make_test, run

GRPC_CALLS = """
import grpc
from tests.helpers.grpc_calls import VERSION, send_request, stub
"""


def test_grpc_true_serves_the_cassette_over_grpc_too(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        GRPC_CALLS
        + """
@pytest.mark.mockagent("reviewer.yaml", grpc=True)
def test_languages(mockagent):
    host, port = mockagent.grpc_url.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    with stub(mockagent.grpc_url) as a2a:
        reply = a2a.SendMessage(send_request("Which languages?"), metadata=VERSION)
    assert reply.message.parts[0].text == "Python, Go and TypeScript."
    assert [(e.interaction, e.binding) for e in mockagent.journal] == [("languages", "GRPC")]
    interfaces = get_json(mockagent.card_url)["supportedInterfaces"]
    assert interfaces[-1]["protocolBinding"] == "GRPC"
    assert interfaces[-1]["url"] == mockagent.grpc_url


@pytest.mark.mockagent("reviewer.yaml")
def test_off_by_default(mockagent):
    with pytest.raises(ValueError, match="grpc=True"):
        mockagent.grpc_url
    bindings = [i["protocolBinding"] for i in get_json(mockagent.card_url)["supportedInterfaces"]]
    assert bindings == ["JSONRPC", "HTTP+JSON"]
""",
    )
    result = run(pytester, "--strict-markers")
    result.assert_outcomes(passed=2)


def test_an_unmatched_grpc_call_fails_the_test_with_the_report(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        GRPC_CALLS
        + """
@pytest.mark.mockagent("reviewer.yaml", grpc=True)
def test_unmatched(mockagent):
    with stub(mockagent.grpc_url) as a2a, pytest.raises(grpc.RpcError):
        a2a.SendMessage(send_request("Review this, please"), metadata=VERSION)
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*languages*"])


def test_grpc_true_without_the_extra_says_which_to_install(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    pytester.makeconftest(
        """
import sys

sys.modules["grpc"] = None  # as if grpcio were not installed: importing it raises ImportError
"""
    )
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml", grpc=True)
def test_needs_grpc(mockagent):
    pass
""",
    )
    result = pytester.runpytest_subprocess("-p", "no:hypothesispytest")
    result.assert_outcomes(errors=1)
    # (fnmatch reads [grpc] as a character class: ? stands for each bracket)
    result.stdout.fnmatch_lines(
        ["*grpc=True needs the gRPC extra: pip install 'mockagent-server?grpc?'*"]
    )
