"""A SendMessage whose params hold a list or an object where the recorder reads a value (the
message, its taskId, a part's text, the configuration) is forwarded and answered as the upstream
answers it (or, where `serve` refuses the params, as `serve` does), never a 500 of the proxy.
Real HTTP on 127.0.0.1."""

from __future__ import annotations

import copy

import pytest

from tests.helpers.recording import HEADERS, HTTP, TEST_RUNNER, recording, upstream_agent

MESSAGE = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "run the tests"}]}
ODD = [[1], {"a": 1}]


def params_with(path: tuple[object, ...], value: object) -> dict[str, object]:
    params: dict[str, object] = {"message": copy.deepcopy(MESSAGE), "configuration": {}}
    where: object = params
    for key in path[:-1]:
        where = where[key]  # type: ignore[index]
    where[path[-1]] = value  # type: ignore[index]
    return params


PATHS = [("message",), ("message", "taskId"), ("message", "parts", 0, "text"), ("configuration",)]


@pytest.mark.parametrize("value", ODD, ids=["list", "object"])
@pytest.mark.parametrize("path", PATHS, ids=[".".join(map(str, p)) for p in PATHS])
def test_odd_params_get_the_upstreams_answer(tmp_path, path, value):
    params = params_with(path, value)
    with upstream_agent(TEST_RUNNER, pace="instant") as upstream:
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            for method in ("SendMessage", "SendStreamingMessage"):
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                proxied = HTTP.post(rec.url + "/", json=body, headers=HEADERS)
                served = HTTP.post(upstream.url + "/", json=body, headers=HEADERS)
                assert proxied.status_code == served.status_code == 200, proxied.text
                assert ('"error"' in proxied.text) == ('"error"' in served.text), proxied.text
            proxied = HTTP.post(rec.url + "/message:send", json=params, headers=HEADERS)
            served = HTTP.post(upstream.url + "/message:send", json=params, headers=HEADERS)
            assert proxied.status_code == served.status_code < 500, proxied.text
            rec.finish()  # it records only the calls whose params `serve` would take
