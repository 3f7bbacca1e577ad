"""Fixtures for the unit tests: write a cassette to `tmp_path`, load it, build an Engine.

The cassette text and the calls these tests send are in tests/helpers (cassette_text,
engine_calls).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mockagent.cassette import LoadedCassette, load_cassette
from mockagent.engine import Engine
from tests.helpers.cassette_text import HEADER, cassette


@pytest.fixture
def write_cassette(tmp_path: Path) -> Callable[..., Path]:
    """`write_cassette(text, name="cassette")` → the path of `NAME.yaml` in tmp_path."""

    def write(text: str, name: str = "cassette") -> Path:
        path = tmp_path / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def load(write_cassette: Callable[..., Path]) -> Callable[..., LoadedCassette]:
    """`load(text)` → the LoadedCassette (or the CassetteError it raises)."""

    def _load(text: str, name: str = "cassette") -> LoadedCassette:
        return load_cassette(write_cassette(text, name))

    return _load


@pytest.fixture
def make_engine(load: Callable[..., LoadedCassette]) -> Callable[..., Engine]:
    """`make_engine(interactions_yaml)` → an Engine on HEADER plus those interactions.

    Pass `header=` to replace the agent/clock/ids part, or `text=` for a whole cassette.
    """

    def _make(
        interactions: str = "",
        *,
        header: str = HEADER,
        text: str | None = None,
        record_mode: str = "none",
    ) -> Engine:
        return Engine(
            load(text if text is not None else cassette(interactions, header)),
            record_mode=record_mode,
        )

    return _make
