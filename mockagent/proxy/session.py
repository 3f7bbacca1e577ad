"""One recording: the recorder, where it writes, and the rules that nothing is lost or leaked.

While recording, a partial file of its own (`PATH.partial`; `PATH.2.partial` beside another
running recording of PATH) holds everything so far, rewritten atomically after each call: a
recording killed with SIGKILL loses nothing and never touches `PATH`, and the next recording of
PATH takes such a leftover in. `finish()` takes PATH's file lock, reads what is there now, merges
its own interactions in (two writers of one cassette never lose each other's calls), validates
the cassette, scans it for every secret seen, and only then renames it into place. A file that
cannot be written never fails a call the proxy answers: the failure is reported once, the
recording stays in memory, and `finish()` keeps it where it still can and says where.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mockagent.cassette.locks import WAIT_S, Timeout, file_lock, lock_file
from mockagent.cassette.merge import kept_since, merge_interactions
from mockagent.cassette.models import Cassette
from mockagent.cassette.redact import Redactor
from mockagent.cassette.store import dump_cassette, parse_yaml, schema_comment, write_atomic
from mockagent.errors import CassetteError
from mockagent.proxy.notes import ITEM, notes_of, with_notes
from mockagent.proxy.partials import Leftover, claim, leftovers, partial_path
from mockagent.proxy.recorder import Recorder
from mockagent.vocabulary import RECORDING_MODES

__all__ = [
    "ITEM",
    "LeakError",
    "Session",
    "notes_of",
    "partial_path",
    "read_existing",
    "with_notes",
]


class LeakError(CassetteError):
    """The written cassette would hold a secret seen during the recording."""


def read_existing(path: Path) -> dict[str, Any] | None:
    """The cassette already at `path` as plain data (for new_episodes), or None."""
    if not path.exists():
        return None
    data, _ = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    return data if isinstance(data, dict) else None


def to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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


class Session:
    """A recording into `path`; thread-safe (calls are recorded from the server's threads).
    `report` prints what the user must know at once (default: a line on stderr)."""

    def __init__(
        self,
        path: str | Path,
        mode: str,
        redactor: Redactor | None = None,
        report: Callable[[str], None] = to_stderr,
    ) -> None:
        if mode not in RECORDING_MODES:
            raise ValueError(
                f"record mode {mode!r} does not record; use one of {', '.join(RECORDING_MODES)}"
            )
        self.path = Path(path)
        self.mode = mode
        self.redactor = redactor or Redactor()
        self.report = report
        self.lock = threading.RLock()
        # Streams whose answer is still being recorded, and how to cut each off when the
        # recording stops; why an interaction got a fault, written above it as a comment.
        self.open_streams: dict[int, Callable[[], None]] = {}
        self.finished = False  # a stream that ends later must not write the partial again
        self.unwritten = False  # a write failed (reported once); the recording is in memory
        try:
            with locked(self.path):
                self.before = text_of(self.path)  # PATH as it was: mode all replaces only this
                left = leftovers(self.path, report)
                self.partial, self.slot = claim(self.path, left)
        except (OSError, Timeout) as exc:
            raise CassetteError(
                f"cannot start recording: {why(exc)}", path=str(self.path)
            ) from None
        existing = read_existing(self.path) if mode == "new_episodes" else None
        self.recorder = Recorder(self.path.stem, self.redactor, existing)
        self.existing = {id(i) for i in self.recorder.interactions}
        self.notes = notes_of(self.before or "") if existing else {}
        if self.partial != partial_path(self.path):
            report(
                f"mockagent: this recording keeps its calls in {self.partial} until it ends "
                f"({partial_path(self.path)} is another recording's); each is merged into "
                f"{self.path} when it ends"
            )
        self._adopt(left)

    def _adopt(self, left: list[Leftover]) -> None:
        """Take in the partial files recordings that did not finish left: their interactions
        are written with this recording's, and the files go once this one's partial has them."""
        try:
            names: list[str] = []
            for leftover in left:
                added, renames = self.recorder.adopt(leftover.data)
                names += [str(i.get("name")) for i in added]
                for name, note in notes_of(leftover.text).items():
                    self.notes.setdefault(renames.get(name, name), note)
            if names:
                files = ", ".join(str(leftover.path) for leftover in left)
                self.report(
                    f"mockagent: {files} held {len(names)} interaction(s) of a recording of "
                    f"{self.path} that did not finish ({', '.join(names)}); this recording "
                    f"keeps them (in {self.partial}) and writes them with its own"
                )
            if self.save_partial():
                for leftover in left:
                    if leftover.path != self.partial:
                        leftover.path.unlink(missing_ok=True)
        finally:
            for leftover in left:
                if leftover.path != self.partial:
                    leftover.lock.release()

    def _text(self, data: dict[str, Any], notes: dict[str, str] | None = None) -> str:
        notes = self.notes if notes is None else notes
        return schema_comment(self.path) + with_notes(dump_cassette(data), notes)

    def _write(self, file: Path, text: str) -> bool:
        """Write `file` atomically; False if it cannot be, reported the first time only."""
        try:
            write_atomic(file, text)
        except OSError as exc:
            if not self.unwritten:
                self.report(
                    f"mockagent: cannot write {file}: {why(exc)}; calls are still answered, and "
                    "the recording is kept in memory until it stops"
                )
            self.unwritten = True
            return False
        return True

    def save_partial(self) -> bool:
        """Keep what was recorded so far in this recording's partial file, secrets scrubbed;
        False if it could not be written (the calls go on: see `_write`)."""
        with self.lock:
            if not self.recorder.recorded or self.finished:
                return True
            return self._write(
                self.partial, self.redactor.scrub(self._text(self.recorder.cassette()))
            )

    def finish(self) -> Path | None:
        """Write the cassette (None when nothing was recorded); LeakError or CassetteError if it
        cannot be kept, the message naming where the recording is kept instead."""
        with self.lock:
            for stop in list(self.open_streams.values()):  # cut off where the client was cut off
                stop()
            try:
                if not self.recorder.recorded:
                    self.partial.unlink(missing_ok=True)  # a leftover with nothing new in it
                    return None
                return self._write_cassette()
            finally:
                self.slot.release()

    def _write_cassette(self) -> Path:
        try:
            with locked(self.path):  # read, merge and write as one: no other writer between
                data, notes = self._merged(text_of(self.path))
                text = self._text(data, notes)
                self._scan(text)
                try:
                    Cassette.model_validate(data)
                except ValueError as exc:
                    self.save_partial()
                    raise CassetteError(
                        f"the recorded cassette does not validate ({exc}); {self.partial} keeps it",
                        path=str(self.path),
                    ) from None
                write_atomic(self.path, text)
        except OSError as exc:
            raise CassetteError(
                f"cannot write the cassette: {why(exc)}; {self._keep()}", path=str(self.path)
            ) from None
        except Timeout:
            raise CassetteError(
                f"another recording held the lock of this cassette ({lock_file(self.path)}) "
                f"for {WAIT_S:.0f} s; {self._keep()}",
                path=str(self.path),
            ) from None
        try:
            self.partial.unlink(missing_ok=True)
        except OSError:
            pass  # the cassette is written: a stale partial only repeats what it holds
        self.finished = True
        return self.path

    def _scan(self, text: str) -> None:
        """The leak scan of the cassette about to be written: its one call site."""
        leaks = self.redactor.leaks(text)
        if leaks:
            self.save_partial()
            raise LeakError(
                f"the recording holds {len(leaks)} secret value(s) seen in headers or configs "
                f"({', '.join(leaks)}); the cassette was not written, "
                f"and {self.partial} "
                "keeps the recording with them scrubbed: add the field to the redaction list",
                path=str(self.path),
            )

    def _merged(self, now: str | None) -> tuple[dict[str, Any], dict[str, str]]:
        """The cassette to write over `now` (PATH's text, or None), and its notes: what other
        writers put there since this recording began, then this recording's interactions.
        Mode all replaces what PATH held when it began; new_episodes adds to all of it."""
        mine = self.recorder.cassette()
        new = [i for i in mine["interactions"] if id(i) not in self.existing]
        if self.mode != "all":
            base = items_of(now, self.path)
        elif now == self.before:
            base = []
        else:
            try:
                base = kept_since(items_of(now, self.path), items_of(self.before, self.path))
            except CassetteError:  # PATH no cassette (then or now): mode all replaces it
                base = []
        merged, renames = merge_interactions(base, new)
        kept = {i.get("name") for i in base}
        notes = {k: v for k, v in notes_of(now or "").items() if k in kept}
        ours = {i.get("name") for i in new}
        notes.update({renames.get(k, k): v for k, v in self.notes.items() if k in ours})
        data = {k: v for k, v in mine.items() if k != "interactions"}
        if "agent" not in data and "agents" not in data and now is not None:
            on_disk, _ = parse_yaml(now, str(self.path))  # a cassette: items_of read it
            for key in ("protocol", "agent", "agents"):
                if isinstance(on_disk, dict) and key in on_disk:
                    data[key] = on_disk[key]
        data["interactions"] = merged
        return data, notes

    def _keep(self) -> str:
        """Keep the recording where it can still be written, now that PATH cannot be; where."""
        text = self.redactor.scrub(self._text(self.recorder.cassette()))
        aside = Path(tempfile.gettempdir()) / "mockagent-recovered"
        stamp = time.strftime("%Y%m%dT%H%M%S")
        reason = ""
        for file in (self.partial, aside / f"{self.path.stem}-{stamp}-{os.getpid()}.yaml"):
            try:
                write_atomic(file, text)
            except OSError as exc:
                reason = why(exc)
                continue
            return f"the recording is kept in {file}"
        count = len(self.recorder.interactions)
        return f"the recording ({count} interactions) could not be written anywhere: {reason}"
