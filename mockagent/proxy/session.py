"""One recording: the recorder, where it writes, and the rules that nothing is lost or leaked.

While recording, `PATH.partial` holds everything so far (rewritten atomically after each call), so
a recording killed with SIGKILL loses nothing and never touches `PATH`. `finish()` validates the
cassette, scans it for every secret seen, and only then renames it into place.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from mockagent.cassette.models import Cassette
from mockagent.cassette.redact import Redactor
from mockagent.cassette.store import dump_cassette, parse_yaml, schema_comment, write_atomic
from mockagent.errors import CassetteError
from mockagent.proxy.recorder import Recorder
from mockagent.vocabulary import RECORDING_MODES

ITEM = re.compile(r"^( *)- name: (.*)$")  # an interaction starts (at the first one's indent)
NOTE = "# recorded: "


class LeakError(CassetteError):
    """The written cassette would hold a secret seen during the recording."""


def partial_path(path: str | Path) -> Path:
    return Path(f"{path}.partial")


def read_existing(path: Path) -> dict[str, Any] | None:
    """The cassette already at `path` as plain data (for new_episodes), or None."""
    if not path.exists():
        return None
    data, _ = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    return data if isinstance(data, dict) else None


class Session:
    """A recording into `path`; thread-safe (calls are recorded from the server's threads)."""

    def __init__(self, path: str | Path, mode: str, redactor: Redactor | None = None) -> None:
        if mode not in RECORDING_MODES:
            raise ValueError(
                f"record mode {mode!r} does not record; use one of {', '.join(RECORDING_MODES)}"
            )
        self.path = Path(path)
        self.mode = mode
        self.redactor = redactor or Redactor()
        existing = read_existing(self.path) if mode == "new_episodes" else None
        self.recorder = Recorder(self.path.stem, self.redactor, existing)
        self.lock = threading.RLock()
        # Streams whose answer is still being recorded, and how to cut each off when the
        # recording stops; why an interaction got a fault, written above it as a comment.
        self.open_streams: dict[int, Callable[[], None]] = {}
        self.notes = notes_of(self.path.read_text(encoding="utf-8")) if existing else {}
        self.finished = False  # a stream that ends later must not write PATH.partial again

    def _text(self, data: dict[str, Any]) -> str:
        data = self.redactor.scan(data, str(self.path))  # the leak scan: secrets by name and shape
        return schema_comment(self.path) + with_notes(dump_cassette(data), self.notes)

    def save_partial(self) -> None:
        """Keep what was recorded so far in PATH.partial, secrets scrubbed."""
        with self.lock:
            if self.recorder.recorded and not self.finished:
                text = self.redactor.scrub(self._text(self.recorder.cassette()))
                write_atomic(partial_path(self.path), text)

    def finish(self) -> Path | None:
        """Write the cassette (None when nothing was recorded); LeakError or CassetteError if it
        cannot be kept, in which case PATH.partial holds the recording, secrets scrubbed."""
        with self.lock:
            for stop in list(self.open_streams.values()):  # cut off where the client was cut off
                stop()
            if not self.recorder.recorded:
                return None
            data = self.recorder.cassette()
            text = self._text(data)
            leaks = self.redactor.leaks(text)
            if leaks:
                self.save_partial()
                raise LeakError(
                    f"the recording holds {len(leaks)} secret value(s) seen in headers or configs "
                    f"({', '.join(leaks)}); the cassette was not written, "
                    f"and {partial_path(self.path)} "
                    "keeps the recording with them scrubbed: add the field to the redaction list",
                    path=str(self.path),
                )
            try:
                Cassette.model_validate(data)
            except ValueError as exc:
                self.save_partial()
                raise CassetteError(
                    f"the recorded cassette does not validate ({exc}); "
                    f"{partial_path(self.path)} keeps it",
                    path=str(self.path),
                ) from None
            write_atomic(self.path, text)
            partial_path(self.path).unlink(missing_ok=True)
            self.finished = True
            return self.path


def with_notes(text: str, notes: dict[str, str]) -> str:
    """The YAML text of a cassette with each note as a `# recorded:` comment above the `fault:`
    of the interaction it names (the interactions are the last top-level key)."""
    head, found, body = text.partition("\ninteractions:\n")
    if not notes or not found:
        return text
    out: list[str] = []
    indent, note = 0, None
    for line in body.split("\n"):
        item = ITEM.match(line)
        if item and (not out or len(item.group(1)) == indent):  # an interaction starts
            indent = len(item.group(1))
            name = yaml.safe_load(item.group(2))
            note = notes.get(name) if isinstance(name, str) else None
        elif note and line.startswith(" " * (indent + 2) + "fault:"):
            out.append(" " * (indent + 2) + NOTE + note)
            note = None
        out.append(line)
    return head + found + "\n".join(out)


def notes_of(text: str) -> dict[str, str]:
    """The notes `with_notes` wrote into a cassette's text, by interaction (new_episodes keeps
    them when it writes the cassette anew)."""
    notes: dict[str, str] = {}
    name, indent = None, None
    for line in text.partition("\ninteractions:\n")[2].split("\n"):
        item = ITEM.match(line)
        if item and indent in (None, len(item.group(1))):
            indent, name = len(item.group(1)), yaml.safe_load(item.group(2))
        elif isinstance(name, str) and line.lstrip().startswith(NOTE):
            notes[name] = line.lstrip()[len(NOTE) :]
    return notes
