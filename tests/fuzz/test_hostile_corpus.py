"""The hostile-input corpus (tests/helpers/hostile_corpus*.py) over raw sockets, on every binding:
against `mockagent serve` (granian, as users run it, with gRPC), the pytest fixture's server, and
the recording proxy in front of a stub upstream. Each probe: no 5xx, no hang, no Python name in
the answer, strict JSON, a server that still answers a fresh call at once, and for a refused
state change, agents left as they were. PENDING probes are strict xfails (known bugs)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.hostile_corpus import (
    AGENT,
    PENDING,
    Probe,
    cases,
    jsonrpc,
    message,
    pending,
    python_names,
    request,
    strict_json,
    write_folder,
)
from tests.helpers.hostile_corpus_agents import MARKUP, agent_probes, proxy_probes
from tests.helpers.hostile_corpus_checks import (
    admin_json,
    fresh,
    request_of,
    reset,
    run,
    send_probe,
    sound,
    state,
)
from tests.helpers.hostile_corpus_control import control_probes
from tests.helpers.hostile_corpus_grpc import grpc_probes, send
from tests.helpers.hostile_http import (
    Target,
    fixture_server,
    serve_process,
)

GRPC_S = 3.0
PYTHON_GRPC_FAILURES = (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL)


@pytest.fixture(scope="module", params=["serve", "fixture"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    folder = write_folder(tmp_path_factory.mktemp(f"corpus-{request.param}"))
    start = (
        serve_process(folder, "--grpc-port", "0")
        if request.param == "serve"
        else fixture_server(folder, 0)
    )
    with start as running:
        reset(running.port)  # a task that ends in an hour: a refused advance would show on it
        yield running


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, list[str]]]:
    """(proxy port, the POSTs its upstream got): the recording proxy in front of the A2A
    agent. What reaches the upstream is what counts: a real agent (a2a-sdk's) has no guard."""
    folder = tmp_path_factory.mktemp("proxy")
    (folder / "upstream.yaml").write_text(AGENT)
    with serve_in_thread(folder / "upstream.yaml") as upstream:
        posts: list[str] = []
        wsgi = upstream.app.wsgi_app

        def seen(environ: dict[str, Any], start_response: Any) -> Any:
            if environ["REQUEST_METHOD"] == "POST":
                posts.append(environ["PATH_INFO"])
            return wsgi(environ, start_response)

        upstream.app.wsgi_app = seen  # type: ignore[method-assign]
        app = create_recording_app(upstream.url, folder / "recorded.yaml", "all")
        server = ServerThread(app).start()
        try:
            yield server.port, posts
        finally:
            server.stop()
            finish_recording(app)


@pytest.mark.parametrize("probe", cases(agent_probes() + control_probes()))
def test_probe(request: pytest.FixtureRequest, target: Target, probe: Probe) -> None:
    pending(request, probe.id, target.name)
    run(target.port, probe, "/a2a/.well-known/agent-card.json", lambda: state(target.port))


@pytest.mark.parametrize("probe", cases(proxy_probes()))
def test_proxy_probe(
    request: pytest.FixtureRequest, proxy: tuple[int, list[str]], probe: Probe
) -> None:
    pending(request, probe.id)
    port, posts = proxy
    run(port, probe, "/.well-known/agent-card.json", lambda: list(posts), admin=False)


@pytest.mark.parametrize("probe", cases(grpc_probes()))
def test_grpc_probe(request: pytest.FixtureRequest, target: Target, probe: Any) -> None:
    pending(request, probe.id, target.name)
    where = f"127.0.0.1:{target.grpc}"
    with grpc.insecure_channel(where) as channel:
        call = channel.unary_unary(
            f"/lf.a2a.v1.A2AService/{probe.method}",
            request_serializer=lambda raw: raw,
            response_deserializer=lambda raw: raw,
        )
        try:
            call(probe.data, timeout=GRPC_S, metadata=(("a2a-version", "1.0"),))
        except grpc.RpcError as error:
            code, details = error.code(), error.details() or ""
            assert code is not grpc.StatusCode.DEADLINE_EXCEEDED, "no answer: a hang"
            assert code not in PYTHON_GRPC_FAILURES, f"{code}: {details}"
            assert python_names(details) == [], details
        fresh_call = channel.unary_unary(
            "/lf.a2a.v1.A2AService/SendMessage",
            request_serializer=lambda raw: raw,
            response_deserializer=lambda raw: raw,
        )
        answer = fresh_call(send(), timeout=GRPC_S, metadata=(("a2a-version", "1.0"),))
        assert answer, "a fresh call after the probe"


def test_nothing_hostile_is_echoed_after_the_corpus(target: Target) -> None:
    """After every probe (when run with them): the journal, the tasks and ListTasks are strict
    JSON with no NaN or infinity in them, and the inspector shows a call's markup as text."""
    for path in ("calls", "tasks", "near-misses", "deliveries", "interactions"):
        text = json.dumps(admin_json(target.port, path))
        assert not re.search(r"\b(NaN|Infinity)\b", text), path
    listed = send_probe(target.port, request_of("/a2a/", jsonrpc("ListTasks", {})))
    strict_json(listed.responses[0].body)
    markup = jsonrpc("SendMessage", {"message": message(MARKUP)})
    assert send_probe(target.port, request_of("/backtrack/", markup)).statuses == [200]
    page = send_probe(target.port, Probe("page", request("GET", "/_mockagent/", None, None)))
    assert page.statuses == [200] and python_names(page.responses[0].body.decode()) == []
    shown = page.responses[0].body
    assert b"&lt;script&gt;alert(1)" in shown and b"<script>alert" not in shown


def test_the_corpus_at_once_is_a_bounded_load_that_ends(target: Target) -> None:
    """Every agent and control probe (but the PENDING ones and those that read state) sent by 8
    clients at once, one pass: each answer is sound, and the server then answers at once."""
    burst = [
        probe
        for probe in agent_probes() + control_probes()
        if probe.id not in PENDING
        and f"{probe.id}@{target.name}" not in PENDING
        and not (probe.unchanged or probe.webhook or probe.journal)
    ]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda probe: send_probe(target.port, probe), burst))
    for probe, answer in zip(burst, answers, strict=True):
        sound(answer, probe)
    fresh(target.port, "/a2a/.well-known/agent-card.json")


def test_pending_names_probes_of_the_corpus() -> None:
    """Every PENDING entry names a probe (a typo would xfail nothing), and probe ids are unique."""
    ids = [p.id for p in agent_probes() + control_probes() + proxy_probes() + grpc_probes()]
    assert len(ids) == len(set(ids))
    named = {key.split("@")[0] for key in PENDING if not key.startswith(("values-", "deep-"))}
    assert named <= set(ids), named - set(ids)
