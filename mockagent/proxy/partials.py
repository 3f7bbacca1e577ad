"""Each recording's own `.partial` file, and the ones recordings that did not finish left behind.

A recording keeps what it has recorded so far in a partial file of its own, under a file lock it
holds for as long as it runs: the first recording of PATH in `PATH.partial`, one that runs beside
it in `PATH.2.partial`, and so on. A partial file whose lock nobody holds was left by a recording
that died (SIGKILL, a power cut): the next recording of PATH takes its interactions in instead
of overwriting it. Claims are made under the cassette's own lock, one recording at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mockagent.cassette.loader import parse_yaml
from mockagent.cassette.locks import FileLock, Timeout, file_lock
from mockagent.errors import CassetteError

MAX_SLOTS = 1000  # recordings of one cassette running at once: far more than any machine runs


@dataclass
class Leftover:
    """The partial file of a recording that did not finish, its lock held until it is taken in."""

    path: Path
    data: dict[str, Any]
    text: str
    lock: FileLock


def partial_path(path: str | Path, slot: int = 1) -> Path:
    """Where a recording of `path` keeps its calls so far: `PATH.partial`, or `PATH.N.partial`
    for the N-th recording of it running at once."""
    return Path(f"{path}.partial") if slot == 1 else Path(f"{path}.{slot}.partial")


def partial_files(path: str | Path) -> list[Path]:
    """The partial files of `path` there are now, by slot."""
    target = Path(path)
    pattern = re.compile(re.escape(target.name) + r"(?:\.([1-9][0-9]*))?\.partial")
    found: list[tuple[int, Path]] = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:  # no folder yet: no partial either
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1) or 1), entry))
    return [file for _, file in sorted(found)]


def taken(lock: FileLock) -> bool:
    """Take `lock` if nobody holds it; False if somebody does."""
    try:
        lock.acquire(blocking=False)
    except Timeout:
        return False
    return True


def read_partial(file: Path) -> tuple[dict[str, Any], str]:
    """A partial file as plain data and text; CassetteError or OSError if it cannot be read."""
    text = file.read_text(encoding="utf-8")
    data, _ = parse_yaml(text, str(file))
    if not isinstance(data, dict) or not isinstance(data.get("interactions", []), list):
        raise CassetteError("not a cassette", path=str(file))
    items = data.get("interactions") or []
    data["interactions"] = [i for i in items if isinstance(i, dict) and "name" in i]
    return data, text


def leftovers(path: str | Path, report: Callable[[str], None]) -> tuple[list[Leftover], list[Path]]:
    """The partial files of `path` no running recording holds, read (their locks taken), and
    those of them that cannot be read: each is left as it is, and `report` says so."""
    found, unreadable = [], []
    for file in partial_files(path):
        lock = file_lock(file)
        if not taken(lock):  # a recording that runs now
            continue
        try:
            data, text = read_partial(file)
        except (CassetteError, OSError, UnicodeDecodeError) as exc:
            lock.release()
            report(
                f"mockagent: {file} was left by a recording that did not finish and cannot be "
                f"read ({exc}); it is kept as it is"
            )
            unreadable.append(file)
            continue
        found.append(Leftover(file, data, text, lock))
    return found, unreadable


def left_behind(path: str | Path, what: str, known: list[Path] | None = None) -> list[str]:
    """A line for each partial file of the cassette `path` (or of those in the folder `path`)
    that a recording which did not finish left and no running recording holds: how many
    interactions it holds (`what` of them: "this replay does not answer them"), and how to
    take them in; none for the files in `known` (said already)."""
    target = Path(path)
    cassettes = sorted(target.glob("*.y*ml")) if target.is_dir() else [target]
    files = [(cassette, file) for cassette in cassettes for file in partial_files(cassette)]
    return [
        line
        for cassette, file in files
        if file not in (known or [])
        for line in _left(cassette, file, what)
    ]


def _left(cassette: Path, file: Path, what: str) -> list[str]:
    """The line for the partial file `file`, if no running recording holds it."""
    lock = file_lock(file)
    if not taken(lock):  # a recording that runs now
        return []
    try:
        count = len(read_partial(file)[0]["interactions"])
    except (CassetteError, OSError, UnicodeDecodeError) as exc:
        held = f"cannot be read ({exc}); it is kept as it is"
    else:
        held = (
            f"holds {count} interaction(s): {what}; a recording in mode new_episodes takes "
            "them in (`mockagent record --mode new_episodes`, or "
            "--mockagent-record-mode=new_episodes)"
        )
    finally:
        lock.release()
    return [f"mockagent: {file}, left by a recording of {cassette} that did not finish, {held}"]


def claim(path: str | Path, left: list[Leftover]) -> tuple[Path, FileLock]:
    """This recording's partial file and its lock, taken: the first slot that no running
    recording holds and that holds nothing, or holds a leftover this recording takes in (and
    rewrites with it)."""
    for slot in range(1, MAX_SLOTS + 1):
        candidate = partial_path(path, slot)
        own = next((leftover for leftover in left if leftover.path == candidate), None)
        if own is not None:
            return candidate, own.lock
        if candidate.exists():  # a running recording's, or one that cannot be read
            continue
        lock = file_lock(candidate)
        if taken(lock):
            return candidate, lock
    raise CassetteError(f"{MAX_SLOTS} recordings of this cassette are running", path=str(path))
