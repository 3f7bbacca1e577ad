"""Helpers for the unit tests: write a cassette to `tmp_path`, load it, build an Engine, send calls.

Cassettes are written as YAML text on purpose: the loader's line numbers and error messages are
part of what is tested, and a test reads best when its cassette is right there in the test.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mockagent.cassette import LoadedCassette, load_cassette
from mockagent.engine import Call, Engine, Outcome

HEADER = """\
version: 1
agent:
  name: tester
  description: A test agent.
  skills:
    - {id: s, name: S, description: A skill.}
clock:
  start: 2026-10-06T09:00:00Z
  tick: {ms: 250}
ids:
  seed: unit
"""
"""A valid cassette without interactions; `cassette()` appends the interactions."""


def cassette(interactions: str = "", header: str = HEADER) -> str:
    """Cassette text: HEADER plus `interactions:` with the given (dedented) YAML list items."""
    body = textwrap.dedent(interactions).strip("\n")
    if not body:
        return header + "interactions: []\n"
    return header + "interactions:\n" + textwrap.indent(body, "  ") + "\n"


def line_of(text: str, needle: str) -> int:
    """1-based number of the only line of `text` that contains `needle`."""
    found = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(found) == 1, f"{needle!r} is on lines {found}"
    return found[0]


def user_message(
    text: str | None = None,
    *,
    parts: list[dict[str, Any]] | None = None,
    task_id: str | None = None,
    context_id: str | None = None,
    message_id: str = "msg-1",
) -> dict[str, Any]:
    """A user message as a dialect hands it to the engine (role already neutral)."""
    message: dict[str, Any] = {
        "messageId": message_id,
        "role": "user",
        "parts": parts if parts is not None else [{"text": text or ""}],
    }
    if task_id is not None:
        message["taskId"] = task_id
    if context_id is not None:
        message["contextId"] = context_id
    return message


def send_call(
    text: str | None = None,
    *,
    operation: str = "SendMessage",
    configuration: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    **message_fields: Any,
) -> Call:
    params: dict[str, Any] = {"message": user_message(text, **message_fields)}
    if configuration is not None:
        params["configuration"] = configuration
    return Call(operation=operation, params=params, binding="JSONRPC", headers=headers or {})


def send(engine: Engine, text: str | None = None, **kwargs: Any) -> Outcome:
    """SendMessage with one text part (or `parts=`); see `send_call` for the options."""
    return engine.handle(send_call(text, **kwargs))


def task_call(operation: str, **params: Any) -> Call:
    return Call(operation=operation, params=params, binding="JSONRPC")


def get_task(engine: Engine, task_id: str, **params: Any) -> Outcome:
    return engine.handle(task_call("GetTask", id=task_id, **params))


def texts(messages: list[dict[str, Any]] | None) -> list[str]:
    """The text of each message (its parts joined), for comparing histories."""
    return ["".join(p.get("text", "") for p in m["parts"]) for m in messages or []]


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

    def _make(interactions: str = "", *, header: str = HEADER, text: str | None = None,
              record_mode: str = "none") -> Engine:
        return Engine(load(text if text is not None else cassette(interactions, header)),
                      record_mode=record_mode)

    return _make
