"""Cassettes: the format (models), reading and writing (loader), and the secrets kept out of
what is written (secrets)."""

from mockagent.cassette.loader import LoadedCassette, json_schema, load_cassette, load_folder
from mockagent.cassette.models import Cassette, Interaction, TaskState

__all__ = [
    "Cassette",
    "Interaction",
    "LoadedCassette",
    "TaskState",
    "json_schema",
    "load_cassette",
    "load_folder",
]
