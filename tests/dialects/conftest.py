"""Dialect tests drive the Flask app in process (`test_client`); interop tests use real HTTP.

The cassette text and call helpers are in tests/helpers/dialects.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mockagent.server.app import create_app
from tests.helpers.dialects import SMALL
from tests.helpers.paths import KIT


@pytest.fixture
def small(tmp_path: Path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return create_app(path).test_client()


@pytest.fixture
def kit():
    """The bundled kit at instant pace: its streams' `after: {ms}` gaps order events, and no
    dialect test is about how long they take (tests/streams and tests/interop test pacing)."""
    return create_app(KIT, pace="instant").test_client()
