"""The settings of the pytest plugin, and their checks: the command line's `--mockagent-…` options,
the marker's keyword arguments and the keys of the `mockagent_config` fixture.

A misspelled setting is never ignored: an unknown flag stops the session, a wrong value or an
unknown marker option or config key errors the test at setup, each with "did you mean", as a
cassette's fields do. All of a test's problems are reported at once.

Imports nothing heavy at module level (the plugin imports it in every pytest session): the loader's
`suggestion` is imported when a suggestion is needed.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mockagent.vocabulary import RECORD_MODES

MARKER = "mockagent"
CONFIG = "mockagent_config"
FLAG_PREFIX = "--mockagent-"
PACE_WORDS = ("instant", "recorded", "scale=F")


def did_you_mean(value: Any, choices: Collection[str]) -> str:
    """The cassette loader's `did you mean 'x'?` (or `use one of …`) for `value`."""
    # the cassette package loads pydantic: only when a word is wrong
    from mockagent.cassette.suggestions import suggestion

    return suggestion(value, choices)


def _record_mode(value: Any) -> str:
    if value in RECORD_MODES:
        return ""
    return f"{value!r} is not a record mode; {did_you_mean(value, RECORD_MODES)}"


def _upstream(value: Any) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if value is None or (parts and parts.scheme in ("http", "https") and parts.netloc):
        return ""
    return f"{value!r} is not an http(s) URL such as http://127.0.0.1:9999"


def _pace(value: Any) -> str:
    # the fixture has imported the engine already
    from mockagent.engine.player import MAX_SCALE, Pace

    if value is None or isinstance(value, Pace):
        return ""
    if not isinstance(value, str):
        return _kind(value, "a pace: instant, recorded or scale=F")
    try:
        Pace.parse(value)
    except ValueError:
        if value.strip().lower().startswith("scale="):
            return f"{value!r} is not a pace: scale=F takes a number F from 0 to {MAX_SCALE}"
        return f"{value!r} is not a pace; {did_you_mean(value, PACE_WORDS)}"
    return ""


def _kind(value: Any, wanted: str) -> str:
    return f"takes {wanted}, got {value!r}"


def _of(types: tuple[type, ...], wanted: str) -> Callable[[Any], str]:
    """A check that takes None or a value of `types` (never a bool where a number is wanted)."""

    def check(value: Any) -> str:
        if value is None or (isinstance(value, types) and not isinstance(value, bool)):
            return ""
        return _kind(value, wanted)

    return check


def _flag(value: Any) -> str:
    return "" if value is None or isinstance(value, bool) else _kind(value, "True or False")


def _cap(value: Any) -> str:
    problem = _of((int, float), "a number of milliseconds ≥ 0")(value)
    return problem or ("" if value is None or value >= 0 else _kind(value, "a number ≥ 0"))


def _journal_size(value: Any) -> str:
    problem = _of((int,), "a number of calls ≥ 0")(value)
    return problem or ("" if value is None or value >= 0 else _kind(value, "a number ≥ 0"))


def _cassette_dir(value: Any) -> str:
    if not isinstance(value, str | Path):
        return _kind(value, "a folder")
    for placeholder in re.findall(r"\{([^{}]*)\}", str(value)):
        if placeholder != "module":  # the one placeholder (default_cassette.default_path)
            return f"{str(value)!r} has {{{placeholder}}}; {did_you_mean(placeholder, ['module'])}"
    return ""


def _strings(value: Any) -> str:
    ok = isinstance(value, str) or (
        isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
    )
    return "" if value is None or ok else _kind(value, "a list of strings")


def _webhook_allow(value: Any) -> str:
    from mockagent.cassette.webhooks import parse_rule

    wrong = _strings(value)
    if wrong or value is None:
        return wrong
    for rule in [value] if isinstance(value, str) else value:
        try:
            parse_rule(rule)
        except ValueError as exc:
            return str(exc)
    return ""


def _hook(value: Any) -> str:
    wanted = "a callable (dict -> dict or None)"
    return "" if value is None or callable(value) else _kind(value, wanted)


CHECKS: dict[str, Callable[[Any], str]] = {
    "path": _of((str, Path), "the path of a cassette or folder"),
    "pace": _pace,
    "pace_cap_ms": _cap,
    "record_mode": _record_mode,
    "upstream": _upstream,
    "strict": _flag,
    "cassette_dir": _cassette_dir,
    "agent": _of((dict,), "the card facts a cassette's `agent:` holds (a dict)"),
    "allow_playback_repeats": _flag,
    "before_record_request": _hook,
    "before_record_response": _hook,
    "grpc": _flag,
    "webhook_allow": _webhook_allow,
    "journal_size": _journal_size,  # the calls each agent's journal keeps (serve --journal-size)
    # the recording's redaction settings (mockagent.cassette.secrets.redact_settings.SETTINGS)
    "redact_names": _strings,
    "redact_patterns": _strings,
    "allow_values": _strings,
}
"""Every keyword the marker takes, with the check of its value; `mockagent_config` takes the same
keys but `path` (a config names no cassette)."""


def problems(where: str, what: str, given: Mapping[str, Any], known: Collection[str]) -> list[str]:
    """What is wrong in `given` (marker options or config keys), one line each, under `where`."""
    found = []
    for name, value in given.items():
        if name not in known:
            hint = did_you_mean(name, known)
            if name in CHECKS:  # `path` in the config
                hint = f"a cassette is named by the marker: @pytest.mark.{MARKER}('c.yaml')"
            found.append(f"{where}: unknown {what} {name!r}; {hint}")
        elif problem := CHECKS[name](value):
            found.append(f"{where}: {name} {problem}")
    return found


def setting_problems(markers: Sequence[pytest.Mark], config: Any) -> list[str]:
    """Every problem of a test's markers (its own, its class's, its module's: their options
    merge, the closest winning) and `mockagent_config`."""
    found = []
    for marker in markers:
        where = f"@pytest.mark.{MARKER}"
        if len(marker.args) > 1 or (marker.args and "path" in marker.kwargs):
            found.append(f"{where}: takes one cassette path, got {(*marker.args, *marker.kwargs)}")
        found += problems(where, "option", marker.kwargs, CHECKS)
    if not isinstance(config, Mapping):
        found.append(f"{CONFIG}: returns a dict of settings, got {config!r}")
    else:
        found += problems(CONFIG, "key", config, [name for name in CHECKS if name != "path"])
    return found


def _flag_value(check: Callable[[Any], str], what: str) -> Callable[[str], str]:
    """An argparse `type` that refuses a value `check` refuses, saying why."""

    def convert(value: str) -> str:
        problem = check(value)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    convert.__name__ = what  # argparse names the type in some messages
    return convert


FLAGS: dict[str, dict[str, Any]] = {
    "--mockagent-record-mode": {
        "type": _flag_value(_record_mode, "record mode"),
        "metavar": "{" + ",".join(RECORD_MODES) + "}",
        "help": "none (the default: replay only, never the network), once, new_episodes or all; "
        "wins over the marker's record_mode and the mockagent_config fixture",
    },
    "--mockagent-upstream": {
        "type": _flag_value(_upstream, "URL"),
        "metavar": "URL",
        "help": "the real agent to record from (wins over the marker and mockagent_config)",
    },
    "--mockagent-strict": {
        "action": "store_true",
        "help": "fail a passing test that left interactions of its cassette unused "
        "(as the marker's strict=True does)",
    },
    "--mockagent-allow-repeats": {
        "action": "store_true",
        "help": "let every interaction answer as often as it matches, whatever its `times` "
        "(VCR.py's allow_playback_repeats; as allow_playback_repeats=True in the marker or "
        "mockagent_config)",
    },
}
"""The command-line options: any other `--mockagent-…` is a misspelling."""


def add_options(parser: pytest.Parser) -> None:
    """The plugin's command-line options (FLAGS), in their own group."""
    group = parser.getgroup("mockagent", "mockagent: mock A2A agents served from cassettes")
    for flag, options in FLAGS.items():
        group.addoption(flag, default=None, **options)


def unknown_flags(args: list[str]) -> list[str]:
    """A line for each `--mockagent-…` argument that is none of FLAGS, with its suggestion
    (pytest alone would say only "unrecognized arguments")."""
    found = []
    for arg in args:
        name = arg.partition("=")[0]
        if name.startswith(FLAG_PREFIX) and name not in FLAGS:
            found.append(f"unknown option {name}; {did_you_mean(name, list(FLAGS))}")
    return found
