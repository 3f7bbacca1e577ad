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

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mockagent.cassette.loader import dump_cassette, parse_yaml, schema_comment, write_atomic
from mockagent.cassette.locks import (
    WAIT_S,
    Timeout,
    lock_file,
    mark_run,
    marked_run,
    note_written,
    writes_so_far,
    written_since,
)
from mockagent.cassette.models import Cassette
from mockagent.cassette.secrets.redact import Redactor
from mockagent.errors import CassetteError
from mockagent.proxy.notes import ITEM, notes_of, with_notes
from mockagent.proxy.on_disk import aside, locked, merged_onto, text_of, why
from mockagent.proxy.partials import Leftover, claim, left_behind, leftovers, partial_path
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


def read_existing(text: str | None, path: Path) -> dict[str, Any] | None:
    """The cassette already at `path` (its `text`) as plain data, for new_episodes; or None."""
    if text is None:
        return None
    data, _ = parse_yaml(text, str(path))
    return data if isinstance(data, dict) else None


def to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Session:
    """A recording into `path`; thread-safe (calls are recorded from the server's threads).
    `report` prints what the user must know at once (default: a line on stderr)."""

    def __init__(
        self,
        path: str | Path,
        mode: str,
        redactor: Redactor | None = None,
        report: Callable[[str], None] = to_stderr,
        run: str | None = None,
    ) -> None:
        if mode not in RECORDING_MODES:
            raise ValueError(
                f"record mode {mode!r} does not record; use one of {', '.join(RECORDING_MODES)}"
            )
        self.path = Path(path)
        self.mode = mode
        self.run = run  # the test run (pytest's, shared by xdist workers) it belongs to, if any
        self.redactor = redactor or Redactor()
        self.report = report
        self.lock = threading.RLock()
        # Streams whose answer is still being recorded, and how to cut each off when the
        # recording stops; why an interaction got a fault, written above it as a comment.
        self.open_streams: dict[int, Callable[[], None]] = {}
        self.finished = False  # a stream that ends later must not write the partial again
        self.unwritten = False  # a write failed (reported once); the recording is in memory
        self.adopted_from = ""  # the leftover partial files this recording took in, if any
        try:
            with locked(self.path):
                self.before = text_of(self.path)
                existing = read_existing(self.before, self.path) if mode == "new_episodes" else None
                self.seen = writes_so_far(self.path)  # mode all replaces what was there by then
                left, self.unreadable = leftovers(self.path, report)
                self.partial, self.slot = claim(self.path, left)
        except (OSError, Timeout) as exc:
            raise CassetteError(
                f"cannot start recording: {why(exc)}", path=str(self.path)
            ) from None
        self.recorder = Recorder(self.path.stem, self.redactor, existing)
        self.existing = {id(i) for i in self.recorder.interactions}
        self.notes = notes_of(self.before or "") if existing else {}
        first = partial_path(self.path)
        if self.partial != first:
            why_not = (
                f"{first} cannot be read); they are merged into {self.path} when it ends"
                if first in self.unreadable
                else f"{first} is another recording's); each is merged into {self.path} when "
                "it ends"
            )
            keeps = f"mockagent: this recording keeps its calls in {self.partial} until it ends"
            report(f"{keeps} ({why_not}")
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
                self.adopted_from = files
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
        data = self.redactor.scan(data, str(self.path))  # the leak scan: secrets by name and shape
        notes = {self.redactor.safe_name(k): self.redactor.clean(v) for k, v in notes.items()}
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
                    written = None
                else:
                    written = self._write_cassette()
            finally:
                self.slot.release()
            for line in left_behind(
                self.path, "this recording did not write them", self.unreadable
            ):
                self.report(line)  # another recording of PATH at once was killed
            return written

    def _write_cassette(self) -> Path:
        try:
            with locked(self.path):  # read, merge and write as one: no other writer between
                mine = self.recorder.cassette()
                new = [i for i in mine["interactions"] if id(i) not in self.existing]
                # Mode all replaces the cassette once per test run (a later recording of the
                # run adds to it), and never what other recordings wrote since this one began.
                replaces = self.mode == "all" and (
                    self.run is None or marked_run(self.path) != self.run
                )
                keep = written_since(self.path, self.seen) if replaces else None
                adopted = {id(i) for i in self.recorder.adopted}  # a killed recording's
                made = {id(i) for i in new} - adopted
                data, notes, written = merged_onto(
                    self.path, text_of(self.path), keep, mine, new, self.notes, made
                )
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
                self._log(written, replaces)
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
        self._say_superseded()
        return self.path

    def _say_superseded(self) -> None:
        """Say which of the calls taken in from a leftover this recording made again: the
        cassette holds its new recordings of them instead."""
        gone = self.recorder.superseded
        if gone:
            self.report(
                f"mockagent: this recording made {len(gone)} call(s) of the leftover "
                f"{self.adopted_from} again ({', '.join(gone)}); {self.path} holds the new "
                "recording of them, and the leftover's other calls"
            )

    def _log(self, written: list[str], replaces: bool) -> None:
        """Log what this recording wrote, and that its test run has replaced the cassette (mode
        all): later writers keep both."""
        try:
            note_written(self.path, written)
            if replaces and self.run is not None:
                mark_run(self.path, self.run)
        except OSError as exc:  # the cassette is written; a later recording may replace it
            self.report(f"mockagent: cannot log the recording of {self.path}: {why(exc)}")

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

    def _keep(self) -> str:
        """Keep the recording where it can still be written, now that PATH cannot be; where."""
        text = self.redactor.scrub(self._text(self.recorder.cassette()))
        reason = ""
        for where in (lambda: self.partial, lambda: aside(self.path)):
            try:
                file = where()
                write_atomic(file, text)
            except OSError as exc:
                reason = why(exc)
                continue
            return f"the recording is kept in {file}"
        count = len(self.recorder.interactions)
        return f"the recording ({count} interactions) could not be written anywhere: {reason}"
