"""mockagent: a record-and-replay mock agent server for testing agent clients.

The names below load on first use (PEP 562): installing mockagent registers a pytest plugin, so
every pytest session imports this package, and only sessions that use it should pay for Flask,
pydantic and the server.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockagent.cassette import LoadedCassette, json_schema, load_cassette, load_folder
    from mockagent.engine import Call, Engine
    from mockagent.errors import CassetteError, MockagentError, ProtocolError
    from mockagent.server.app import create_app
    from mockagent.server.thread import ServerThread, serve_in_thread
    from mockagent.testing.fixture import MockAgent

__version__ = "0.1.0"

_HOMES = {
    "Call": "mockagent.engine",
    "Engine": "mockagent.engine",
    "CassetteError": "mockagent.errors",
    "MockagentError": "mockagent.errors",
    "ProtocolError": "mockagent.errors",
    "LoadedCassette": "mockagent.cassette",
    "json_schema": "mockagent.cassette",
    "load_cassette": "mockagent.cassette",
    "load_folder": "mockagent.cassette",
    "MockAgent": "mockagent.testing.fixture",
    "ServerThread": "mockagent.server.thread",
    "serve_in_thread": "mockagent.server.thread",
    "create_app": "mockagent.server.app",
}

__all__ = [
    "Call",
    "CassetteError",
    "Engine",
    "LoadedCassette",
    "MockAgent",
    "MockagentError",
    "ProtocolError",
    "ServerThread",
    "__version__",
    "create_app",
    "json_schema",
    "load_cassette",
    "load_folder",
    "serve_in_thread",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mockagent' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
