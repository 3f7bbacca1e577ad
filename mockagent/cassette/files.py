"""Reading a cassette file: a regular file only, and never more than the size cap.

A cassette path may be anything a shell or a config can name: a FIFO or a process substitution
(`<(…)`, `/dev/fd/63`) blocks an open or a read forever, and a symlink to `/dev/zero` reads
without end (13 GB before the cap). So the path is stat'ed (through symlinks) before anything
opens it, opened without blocking and checked again on the open file (it may have been swapped
meanwhile), and read up to one byte past the cap.
"""

from __future__ import annotations

import os
import stat

from mockagent.errors import CassetteError

ENV = "MOCKAGENT_MAX_CASSETTE_SIZE"
"""The environment variable that sets the cap where no option does (the pytest plugin, the
workers of `serve`): bytes, or a size such as 50MB."""
DEFAULT_MAX_SIZE = 20 * 1024 * 1024
"""The largest cassette read, in bytes, unless `--max-cassette-size` or ENV says otherwise."""

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_KINDS = [
    (stat.S_ISFIFO, "a pipe (a FIFO, or a process substitution such as <(…)): save it to a file"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
]
"""What a cassette path may name but a regular file, as messages say it."""


def parse_size(text: str) -> int:
    """`20MB`, `512k`, `1G`, `1048576` → bytes (K, M, G are powers of 1024); ValueError else."""
    word = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (word[:-1], word[-1]) if word[-1:] in _UNITS else (word, "")
    try:
        size = int(float(number) * _UNITS[unit])
    except ValueError:
        raise ValueError(f"{text!r} is not a size: give bytes or a size such as 20MB") from None
    if size < 1:
        raise ValueError(f"{text!r}: a cassette size cap is at least one byte")
    return size


def show_size(size: int) -> str:
    """A size for messages: `20 MB`, `1.5 MB`, `512 KB`, `80 bytes` (powers of 1024)."""
    for unit, factor in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= factor:
            return f"{size / factor:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def max_size() -> int:
    """The cap in force: ENV when it is set, else DEFAULT_MAX_SIZE. CassetteError for an ENV
    that is not a size."""
    value = os.environ.get(ENV)
    if not value:
        return DEFAULT_MAX_SIZE
    try:
        return parse_size(value)
    except ValueError as exc:
        raise CassetteError(f"{ENV}: {exc}") from None


def read_cassette_text(path: str, cap: int | None = None) -> str:
    """The text of the cassette file at `path`, read with at most `cap` bytes (default:
    `max_size()`); CassetteError naming the file for anything but a regular UTF-8 file within
    the cap. Line ends are read as Python's text mode reads them."""
    cap = max_size() if cap is None else cap
    try:
        _check(path, os.stat(path), cap)  # before any open: opening a FIFO or a device may block
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            _check(path, os.fstat(file.fileno()), cap)  # the file opened is the one checked
            data = file.read(cap + 1)  # the size stat'ed may be wrong (/proc) or grow meanwhile
    except OSError as exc:
        raise CassetteError(f"cannot read cassette: {exc.strerror or exc}", path=path) from None
    if len(data) > cap:
        _too_big(path, f"is over {show_size(cap)}", cap)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteError(f"cannot read cassette: not UTF-8 text ({exc})", path=path) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def irregular(mode: int) -> str | None:
    """What a file of stat mode `mode` is, in words, when it is no regular file (`"a character
    device"`); None for a regular file."""
    return next((kind for test, kind in _KINDS if test(mode)), None)


def _check(path: str, found: os.stat_result, cap: int) -> None:
    if (kind := irregular(found.st_mode)) is not None:
        raise CassetteError(f"cannot read cassette: not a regular file but {kind}", path=path)
    if found.st_size > cap:
        _too_big(path, f"is {show_size(found.st_size)} ({found.st_size} bytes)", cap)


def _too_big(path: str, how_big: str, cap: int) -> None:
    raise CassetteError(
        f"the cassette {how_big}, more than the {show_size(cap)} a cassette may have: raise the "
        f"cap with --max-cassette-size (or the {ENV} environment variable)",
        path=path,
    )
