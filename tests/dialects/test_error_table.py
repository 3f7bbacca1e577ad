"""The error table an agent answers with: spec 1.0.1's (the default, a2a-sdk's) or spec 1.0.0's
(`agent.errorTable: "1.0.0"`: the TCK's 1.0-dev branch, a2a-java), for REST and for gRPC."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from mockagent import errors
from mockagent.cassette import load_cassette
from mockagent.dialects.a2a.error_table import TABLE, TABLES, jsonrpc_error, rest_error
from mockagent.dialects.a2a.grpc_binding import code_of, status_details
from mockagent.errors import CassetteError
from tests.helpers.cassette_text import HEADER, cassette

# kind → ((HTTP status, google.rpc.Code = gRPC code) in spec 1.0.1, the same in spec 1.0.0):
# reference a2a.md §5, a2a-java's A2AErrorCodes, the TCK's ERROR_BINDINGS.
CHANGED = {
    "TaskNotCancelable": ((400, "FAILED_PRECONDITION"), (409, "FAILED_PRECONDITION")),
    "PushNotificationNotSupported": ((400, "FAILED_PRECONDITION"), (400, "UNIMPLEMENTED")),
    "UnsupportedOperation": ((400, "FAILED_PRECONDITION"), (400, "UNIMPLEMENTED")),
    "ContentTypeNotSupported": ((400, "INVALID_ARGUMENT"), (415, "INVALID_ARGUMENT")),
    "InvalidAgentResponse": ((500, "INTERNAL"), (502, "INTERNAL")),
    "VersionNotSupported": ((400, "FAILED_PRECONDITION"), (400, "UNIMPLEMENTED")),
    "NoMatch": ((400, "FAILED_PRECONDITION"), (400, "UNIMPLEMENTED")),  # UnsupportedOperation
}


class Report:
    """A near-miss report, as much of one as NoMatch reads."""

    cassette, operation = "agent.yaml", "SendMessage"

    def text(self) -> str:
        return "No interaction matches this call"

    def as_detail(self) -> dict[str, str]:
        return {"@type": "type.googleapis.com/mockagent.v1.NearMissReport", "closest": "none"}


def error_of(kind: str) -> errors.ProtocolError:
    return errors.NoMatch(Report()) if kind == "NoMatch" else errors.scripted(kind)


@pytest.mark.parametrize("kind", CHANGED)
def test_rest_renders_each_changed_error_by_the_agents_table(kind: str) -> None:
    exc = error_of(kind)
    for table, (http, status) in zip(("1.0.1", "1.0.0"), CHANGED[kind], strict=True):
        body, sent = rest_error(exc, table)
        assert (sent, body["error"]["code"], body["error"]["status"]) == (http, http, status)


@pytest.mark.parametrize("kind", CHANGED)
def test_grpc_sends_the_code_the_same_table_names_in_rest(kind: str) -> None:
    exc = error_of(kind)
    for table, (_, status) in zip(("1.0.1", "1.0.0"), CHANGED[kind], strict=True):
        code, error = code_of(exc, table)
        assert (code, error["status"]) == (grpc.StatusCode[status], status)
        assert status_details(exc, table)[0] == code
    assert code_of(exc)[0] == grpc.StatusCode[CHANGED[kind][0][1]], "1.0.1 unless told"


def test_only_those_rows_differ_and_never_in_json_rpc_codes_or_reasons() -> None:
    old = TABLES["1.0.0"]
    assert TABLES["1.0.1"] is TABLE and old.keys() == TABLE.keys()
    assert {kind for kind in TABLE if old[kind] != TABLE[kind]} == set(CHANGED)
    assert all((old[k].code, old[k].reason) == (TABLE[k].code, TABLE[k].reason) for k in TABLE)
    exc = errors.UnsupportedOperation("nope")
    assert jsonrpc_error(exc, 1)["error"]["code"] == -32004  # one JSON-RPC rendering for both


def test_a_status_the_error_carries_wins_over_either_table() -> None:
    """A recorded agent's status (`error: {status: 400}`) is what it sent, whatever its table."""
    recorded = errors.TaskNotCancelable("done", http_status=400)
    assert rest_error(recorded, "1.0.0")[1] == 400
    unsupported = errors.ContentTypeNotSupported("text/plain", http_status=415)
    assert rest_error(unsupported, "1.0.1")[0]["error"]["status"] == "INVALID_ARGUMENT"
    limited = errors.UnsupportedOperation("slow down", http_status=429)
    body, status = rest_error(limited, "1.0.0")
    assert (status, body["error"]["status"]) == (429, "RESOURCE_EXHAUSTED")
    assert code_of(limited, "1.0.0")[0] == grpc.StatusCode.RESOURCE_EXHAUSTED


def _load(tmp_path: Path, agent_lines: str):
    path = tmp_path / "agent.yaml"
    path.write_text(cassette(header=HEADER.replace("clock:", agent_lines + "clock:")))
    return load_cassette(path)


def test_the_cassette_field_defaults_to_1_0_1_and_takes_1_0_0(tmp_path: Path) -> None:
    assert _load(tmp_path, "").cassette.agent.errorTable == "1.0.1"
    assert _load(tmp_path, '  errorTable: "1.0.0"\n').cassette.agent.errorTable == "1.0.0"


@pytest.mark.parametrize(
    "written, says",
    [
        ('  errortable: "1.0.0"\n', "agent.errortable: unknown field; did you mean 'errorTable'?"),
        ('  errorTabel: "1.0.0"\n', "agent.errorTabel: unknown field; did you mean 'errorTable'?"),
        ('  errorTable: "1.0"\n', "agent.errorTable: Input should be '1.0.1' or '1.0.0'"),
    ],
)
def test_a_misspelt_field_or_an_unknown_table_is_refused(
    tmp_path: Path, written: str, says: str
) -> None:
    with pytest.raises(CassetteError) as refused:
        _load(tmp_path, written)
    assert says in str(refused.value)
