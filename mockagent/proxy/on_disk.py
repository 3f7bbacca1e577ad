"""A cassette on disk that other recordings write too: its lock, what is there now, merging a
recording onto it, and where a recording goes when its own folder cannot be written."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mockagent.cassette.loader import parse_yaml
from mockagent.cassette.locks import WAIT_S, file_lock
from mockagent.cassette.merge import merge_interactions, with_origins
from mockagent.errors import CassetteError
from mockagent.proxy.notes import notes_of


def why(exc: BaseException) -> str:
    """An OSError's reason in words (`No space left on device`), else its text."""
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the file lock of the cassette at `path` (filelock's): Timeout after WAIT_S."""
    lock = file_lock(path)
    lock.acquire(timeout=WAIT_S)
    try:
        yield
    finally:
        lock.release()


def text_of(path: Path) -> str | None:
    """The text of the file at `path`, None when there is none."""
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # nothing there (a folder that is a file)
        return None


def items_of(text: str | None, path: Path) -> list[dict[str, Any]]:
    """The interactions of a cassette's text (none for no text); CassetteError if it is no
    cassette."""
    if text is None:
        return []
    data, _ = parse_yaml(text, str(path))
    items = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise CassetteError("not a cassette (no `interactions:` list)", path=str(path))
    return [i for i in items if isinstance(i, dict)]


def merged_onto(
    path: Path,
    now: str | None,
    keep: set[str] | None,
    mine: dict[str, Any],
    new: list[dict[str, Any]],
    notes: dict[str, str],
    fresh: Collection[int] = (),
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The cassette to write over `now` (the text of `path`, None for no file), its notes, and
    the names `new`'s interactions have in it: what the file holds (only the interactions named
    in `keep`, with their origins, when a recording in mode all replaces the rest; None: all of
    it), then the interactions `new` of the cassette `mine` (whose `notes` these are); those
    whose ids are in `fresh` are calls this recording made (see `merge_interactions`)."""
    try:
        base = items_of(now, path)
    except CassetteError:
        if keep is None:
            raise
        base = []  # no cassette: mode all replaces it
    if keep is not None:
        base = with_origins(base, keep)
    merged, renames = merge_interactions(base, new, fresh)
    kept = {i.get("name") for i in base}
    out_notes = {k: v for k, v in notes_of(now or "").items() if k in kept}
    ours = {i.get("name") for i in new}
    out_notes.update({renames.get(k, k): v for k, v in notes.items() if k in ours})
    data = {k: v for k, v in mine.items() if k != "interactions"}
    if "agent" not in data and "agents" not in data and now is not None:
        on_disk, _ = parse_yaml(now, str(path))  # a cassette: items_of read it
        for key in ("protocol", "agent", "agents"):
            if isinstance(on_disk, dict) and key in on_disk:
                data[key] = on_disk[key]
    data["interactions"] = merged
    return data, out_notes, [renames.get(str(k), str(k)) for k in ours]


def aside(path: Path) -> Path:
    """Where a recording of `path` goes when neither `path` nor its partial can be written: a
    file in a new folder of the user's own (mode 700) in the temporary folder, which nobody
    else can have made or filled; OSError if none can be made."""
    folder = tempfile.mkdtemp(prefix="mockagent-recovered-")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    return Path(folder, f"{path.stem}-{stamp}-{os.getpid()}.yaml")
