"""Cassettes: the format (models), reading and writing (store)."""

from mockagent.cassette.models import Cassette, Interaction, TaskState
from mockagent.cassette.store import LoadedCassette, json_schema, load_cassette, load_folder

__all__ = [
    "Cassette",
    "Interaction",
    "LoadedCassette",
    "TaskState",
    "json_schema",
    "load_cassette",
    "load_folder",
]
