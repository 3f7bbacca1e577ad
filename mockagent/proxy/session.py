"""One recording: the recorder, where it writes, and the rules that nothing is lost or leaked.

While recording, `PATH.partial` holds everything so far (rewritten atomically after each call), so
a recording killed with SIGKILL loses nothing and never touches `PATH`. `finish()` validates the
cassette, scans it for every secret seen, and only then renames it into place.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from mockagent.cassette.models import Cassette
from mockagent.cassette.redact import Redactor
from mockagent.cassette.store import dump_cassette, parse_yaml, schema_comment, write_atomic
from mockagent.errors import CassetteError
from mockagent.proxy.recorder import Recorder


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
        if mode not in ("once", "new_episodes", "all"):
            raise ValueError(f"record mode {mode!r} does not record; use once, new_episodes or all")
        self.path = Path(path)
        self.mode = mode
        self.redactor = redactor or Redactor()
        existing = read_existing(self.path) if mode == "new_episodes" else None
        self.recorder = Recorder(self.path.stem, self.redactor, existing)
        self.lock = threading.RLock()

    def _text(self, data: dict[str, Any]) -> str:
        return schema_comment(self.path) + dump_cassette(data)

    def save_partial(self) -> None:
        """Keep what was recorded so far in PATH.partial, secrets scrubbed."""
        with self.lock:
            if self.recorder.recorded:
                text = self.redactor.scrub(self._text(self.recorder.cassette()))
                write_atomic(partial_path(self.path), text)

    def finish(self) -> Path | None:
        """Write the cassette (None when nothing was recorded); LeakError or CassetteError if it
        cannot be kept, in which case PATH.partial holds the recording, secrets scrubbed."""
        with self.lock:
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
            return self.path
