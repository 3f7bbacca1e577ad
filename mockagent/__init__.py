"""mockagent: a record-and-replay mock agent server for testing agent clients."""

from mockagent.cassette import LoadedCassette, json_schema, load_cassette, load_folder
from mockagent.engine import Call, Engine
from mockagent.errors import CassetteError, MockagentError, ProtocolError
from mockagent.server.app import create_app
from mockagent.server.thread import ServerThread, serve_in_thread

__version__ = "0.1.0"

__all__ = [
    "Call", "CassetteError", "Engine", "LoadedCassette", "MockagentError", "ProtocolError",
    "ServerThread", "__version__", "create_app", "json_schema", "load_cassette", "load_folder",
    "serve_in_thread",
]
