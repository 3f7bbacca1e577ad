"""`serve`'s shared store options: the URL from --store, MOCKAGENT_STORE or --store-file, so that
a password need not be on the command line, where `ps` shows it to every user of the machine.
The URL reaches granian's workers inside the process (they are forked, or get their options
through a pipe), never through an argv."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from mockagent.engine.store.url import has_credentials

STORE_ENV = "MOCKAGENT_STORE"
"""The environment variable --store defaults from."""

LINE_MAX = 8192
"""Longest first line read from --store-file: a URL, not a whole file of something else."""


def store_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The --store and --store-file options (parameters `store_url` and `store_file`)."""
    command = click.option(
        "--store-file",
        type=click.Path(path_type=Path),
        metavar="PATH",
        help="Read the --store URL from the first line of PATH (a file only you can read, or a "
        "pipe: --store-file <(pass show redis-url)), so its password is not in `ps`.",
    )(command)
    return click.option(
        "--store",
        "store_url",
        metavar="URL",
        envvar=STORE_ENV,
        show_envvar=True,
        help="Where tasks, poll counts and the journal live: memory: (default) or "
        "redis://HOST:PORT/DB (or rediss://, unix://; needs mockagent-server[redis]), shared by "
        "every worker and host using it. Wiped at start. A URL with a password belongs in "
        f"{STORE_ENV} or --store-file: on the command line, `ps` shows it.",
    )(command)


def resolve_store_url(url: str | None, store_file: Path | None) -> str | None:
    """The store URL `serve` was given: --store-file's first line, else --store (or its
    environment variable). A password given on the command line is warned about on stderr."""
    from_command_line = (
        click.get_current_context().get_parameter_source("store_url") is ParameterSource.COMMANDLINE
    )
    if store_file is not None:
        if url is not None and from_command_line:
            raise click.UsageError("give --store or --store-file, not both")
        return read_store_file(store_file)
    if url is not None and from_command_line and has_credentials(url):
        click.echo(
            "mockagent: warning: the --store URL has a password, and `ps` shows it to every user "
            f"of this machine: give it in {STORE_ENV} or --store-file instead",
            err=True,
        )
    return url


def read_store_file(path: Path) -> str:
    """The first line of `path`, stripped; a usage error naming `path` (never its text) when it
    cannot be read or that line is empty."""
    try:
        with path.open(encoding="utf-8") as file:
            _warn_if_open(path, os.fstat(file.fileno()))
            line = file.readline(LINE_MAX)
    except FileNotFoundError:
        raise _bad(path, "no such file") from None
    except IsADirectoryError:
        raise _bad(path, "a folder, not a file") from None
    except UnicodeDecodeError:
        raise _bad(path, "its first line is not UTF-8 text") from None
    except OSError as exc:
        raise _bad(path, f"cannot read it: {exc.strerror or exc}") from None
    url = line.strip()
    if not url:
        raise _bad(path, "its first line is empty: put the store URL there")
    return url


def _warn_if_open(path: Path, found: os.stat_result) -> None:
    """Warn on stderr (as ssh does for a key) when the regular file `path` can be read or changed
    by its group or others: its URL's password is theirs too. A pipe has no such mode."""
    mode = stat.S_IMODE(found.st_mode)
    if stat.S_ISREG(found.st_mode) and mode & 0o077:
        click.echo(
            f"mockagent: warning: --store-file {path} has mode {mode:04o}: its group or other "
            f"users can read or change the store URL (and its password); run chmod 600 {path}",
            err=True,
        )


def _bad(path: Path, why: str) -> click.BadParameter:
    return click.BadParameter(f"{path}: {why}", param_hint="--store-file")
