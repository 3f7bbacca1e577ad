"""File locks on cassettes (filelock's), shared by every process on this machine that records one.

A lock file lives in the temporary folder, named by a hash of the locked file's absolute path,
not beside the cassette: the cassette's folder stays as clean as it is committed, and a
cassette in a folder mockagent cannot write to can still be locked (and its recording kept
elsewhere). The operating system lets go of a lock when its process dies, even by SIGKILL.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["FileLock", "Timeout", "file_lock", "lock_file", "mark_run", "marked_run"]

WAIT_S = 60.0
"""How long a writer waits for another to finish its read-merge-write (milliseconds, usually)."""


def lock_file(path: str | Path) -> Path:
    """Where the lock of `path` is: one file per user and locked path, in the temporary folder."""
    owner = os.getuid() if hasattr(os, "getuid") else "user"
    folder = Path(tempfile.gettempdir()) / f"mockagent-locks-{owner}"
    folder.mkdir(mode=0o700, exist_ok=True)
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
