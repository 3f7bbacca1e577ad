"""`--max-cassette-size`, the option of every command that reads cassettes (serve, record,
verify, lint).

The loader reads the cap from the environment (mockagent.cassette.files.ENV), so the option
sets that: serve's worker processes, a cassette the admin API loads and a recording's replay
then read the same cap without each being handed it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from mockagent.cassette.files import DEFAULT_MAX_SIZE, ENV, parse_size, show_size

Decorated = TypeVar("Decorated", bound=Callable[..., Any] | click.Command)


class _Size(click.ParamType):
    """Bytes, or a size such as 50MB (K, M, G are powers of 1024)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            return value if isinstance(value, int) else parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _export(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
    if value is not None:
        os.environ[ENV] = str(value)


def cassette_size(command: Decorated) -> Decorated:
    """Add --max-cassette-size to a command (its function, or a click.Command already made)."""
    option = click.option(
        "--max-cassette-size",
        type=_Size(),
        envvar=ENV,
        expose_value=False,
        callback=_export,
        metavar="SIZE",
        help=f"Largest cassette file read (default {show_size(DEFAULT_MAX_SIZE)}): bytes, or a "
        f"size such as 50MB. Also ${ENV}.",
    )
    return option(command)
