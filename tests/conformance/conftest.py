"""Conformance fixtures: the TCK cassette served once per module over real HTTP, and a raw
client (tests/helpers/tck.py) for both JSON bindings."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mockagent.engine.player import Pace
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.tck import BINDINGS, CASSETTE, HEADERS, PACE, TIMEOUT, Agent


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    """The TCK cassette on a free port, once for the module; tests use their own messageIds."""
    with serve_in_thread(CASSETTE, pace=Pace.parse(PACE)) as running:
        yield running


@pytest.fixture(scope="module")
def http(server: ServerThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=HEADERS, timeout=TIMEOUT) as client:
        yield client


@pytest.fixture(params=BINDINGS)
def agent(request: pytest.FixtureRequest, http: httpx.Client) -> Agent:
    """The agent over each binding in turn."""
    return Agent(http, request.param)


@pytest.fixture
def rpc(http: httpx.Client) -> Agent:
    return Agent(http, "JSONRPC")


@pytest.fixture
def rest(http: httpx.Client) -> Agent:
    return Agent(http, "HTTP+JSON")
