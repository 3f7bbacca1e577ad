"""Interop fixtures: the bundled kit cassettes served once per session, driven by the official
`a2a-sdk` client over every binding, JSON-RPC, HTTP+JSON and gRPC (the client code is in
tests/helpers/interop.py).

Every test asks for `kit` (a `Kit` bound to one binding); the `binding` fixture parametrizes it,
so each test runs over JSON-RPC, HTTP+JSON and gRPC.

Tests share one server, so they never depend on what other tests did: each works with the task
and context ids it created, and reads only the journal entries its own calls added.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockagent.engine.player import Pace
from mockagent.server.thread import serve_in_thread
from tests.helpers.interop import BINDINGS, Kit
from tests.helpers.paths import KIT


@pytest.fixture(scope="session")
def kit_server() -> Iterator[Any]:
    """One server for the whole session, with every kit cassette mounted at /NAME/ (and over
    gRPC as the tenant NAME).

    Streams are played at instant pace: the cassettes' `after: {ms}` gaps order the events but
    no test waits for them.
    """
    with serve_in_thread(str(KIT), grpc_port=0, pace=Pace.parse("instant")) as server:
        yield server


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def kit(kit_server: Any, binding: str, request: pytest.FixtureRequest) -> Kit:
    return Kit(kit_server, binding, request.node.name)
