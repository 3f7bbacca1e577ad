"""The pytest plugin's redaction settings (`redact_names`, `redact_patterns`, `allow_values`,
in `mockagent_config` or the marker), checked where they are given."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mockagent.cassette.secrets.redact import Redactor, stderr

SETTINGS = ("redact_names", "redact_patterns", "allow_values")  # the pytest plugin's keys


def redactor_from_settings(
    settings: dict[str, Any], notify: Callable[[str], None] = stderr
) -> Redactor:
    """A Redactor from the pytest plugin's settings (each a list of strings, or one string),
    telling from the main thread; ValueError naming the key for anything else."""
    lists: dict[str, tuple[str, ...]] = {}
    for key in SETTINGS:
        value = settings.get(key) or ()
        value = (value,) if isinstance(value, str) else value
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{key} takes a list of strings, got {value!r}")
        lists[key] = tuple(value)
    for pattern in lists["redact_patterns"]:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(
                f"redact_patterns: {pattern!r} is not a regular expression ({exc})"
            ) from None
    names, patterns, allow = (lists[key] for key in SETTINGS)
    return Redactor(names, patterns, allow, notify, notify_in_main_thread=True)
