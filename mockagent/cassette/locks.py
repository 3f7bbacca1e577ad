"""File locks on cassettes (filelock's), shared by one user's processes that record one.

A lock file lives in a private folder of the user's own in the temporary folder
(`mockagent-locks-<uid>`, mode 700), named by a hash of the locked file's absolute path, not
beside the cassette: the cassette's folder stays as clean as it is committed, and a cassette in
a folder mockagent cannot write to can still be locked (and its recording kept elsewhere). Two
users recording one cassette at once are therefore not serialized: each has its own locks. The
operating system lets go of a lock when its process dies, even by SIGKILL.

Beside the lock, a log of the writes (`.writes`) says which interactions each writer put in the
cassette: a recording in mode all replaces what the cassette held when it began, never what
another writer recorded since, even when that equals an old interaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

__all__ = [
    "FileLock",
    "Timeout",
    "file_lock",
    "lock_file",
    "mark_run",
    "marked_run",
    "note_written",
    "writes_so_far",
    "written_since",
]

KEPT_WRITES = 200  # the writes the log remembers: a recording that saw more begin keeps all
WAIT_S = 60.0
"""How long a writer waits for another to finish its read-merge-write (milliseconds, usually)."""


def lock_file(path: str | Path) -> Path:
    """Where the lock of `path` is: one file per user and locked path, in the temporary folder."""
    owner = os.getuid() if hasattr(os, "getuid") else "user"
    folder = Path(tempfile.gettempdir()) / f"mockagent-locks-{owner}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if hasattr(os, "getuid") and folder.stat().st_uid != os.getuid():  # made by another user
        raise PermissionError(f"{folder} belongs to another user: remove it")
    digest = hashlib.sha256(str(Path(path).resolve()).encode("utf-8")).hexdigest()[:32]
    return folder / f"{digest}.lock"


def file_lock(path: str | Path) -> FileLock:
    """The lock of `path` (not taken yet): held by one holder at a time across threads and
    processes; `with file_lock(p).acquire(timeout=…)`, or `.acquire(blocking=False)` to try."""
    return FileLock(lock_file(path), thread_local=False)


def marked_run(path: str | Path) -> str | None:
    """The test run that last replaced the cassette at `path` (record mode all), if any: read
    under its lock. Kept beside the lock, so the cassette's own text never changes for it."""
    try:
        return lock_file(path).with_suffix(".run").read_text(encoding="utf-8") or None
    except FileNotFoundError:
        return None


def mark_run(path: str | Path, run: str) -> None:
    """Note that test run `run` has replaced the cassette at `path`: its later recordings add."""
    lock_file(path).with_suffix(".run").write_text(run, encoding="utf-8")


def _writes(path: str | Path) -> tuple[int, list[list[Any]]]:
    """The log of writes of the cassette at `path`: how many there were, and the last ones as
    [number, [names]]. Read under its lock; an unreadable log counts as none."""
    try:
        data = json.loads(lock_file(path).with_suffix(".writes").read_text(encoding="utf-8"))
        return int(data["count"]), list(data["last"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0, []


def writes_so_far(path: str | Path) -> int:
    """How many recordings have written the cassette at `path` (under its lock): a recording
    notes it when it begins, to ask `written_since` when it ends."""
    return _writes(path)[0]


def written_since(path: str | Path, seen: int) -> set[str] | None:
    """The names of the interactions that recordings which wrote the cassette at `path` after
    write number `seen` put there; None when the log no longer goes back that far."""
    count, last = _writes(path)
    if count > seen and (not last or last[0][0] > seen + 1):
        return None
    return {str(name) for number, names in last if number > seen for name in names}


def note_written(path: str | Path, names: list[str]) -> None:
    """Log that a recording wrote the interactions `names` into the cassette at `path`."""
    count, last = _writes(path)
    last = [*last, [count + 1, names]][-KEPT_WRITES:]
    text = json.dumps({"count": count + 1, "last": last})
    lock_file(path).with_suffix(".writes").write_text(text, encoding="utf-8")
