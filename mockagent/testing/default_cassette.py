"""Which cassette a test gets when its marker names none.

As pytest-recording does, a test's cassette is named after the test:
`<test file's directory>/cassettes/<module>/<test>.yaml`, where the folder (`cassettes/{module}`) is
the `cassette_dir` setting. In record mode `none` with no file there, the test meets an agent with
no interactions (`mockagent.engine.no_cassette`), built from the `agent=` setting or a default
card, for a test that adds its interactions in Python.

Imports nothing heavy at module level (the plugin imports it in every pytest session).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DEFAULT_DIR = "cassettes/{module}"
"""Where a test's own cassette goes, relative to the test file's directory."""

# Characters a file name keeps: a parametrized id such as `test_x[a/b: c]` becomes `test_x[a-b-c]`.
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\[\]=+,-]+")


def file_name(test_name: str, class_name: str | None = None) -> str:
    """A test's cassette file name: `test_x.yaml`, `TestY.test_x.yaml`, and for a parametrized test
    its id with every character a file system might refuse (`/`, `:`, spaces…) replaced by `-`."""
    name = f"{class_name}.{test_name}" if class_name else test_name
    safe = _UNSAFE.sub("-", name).strip("-.") or "test"
    return safe[:200] + ".yaml"  # file systems stop at 255 bytes


def default_path(
    test_file: Path, test_name: str, class_name: str | None = None, cassette_dir: Any = None
) -> Path:
    """`<test file's directory>/<cassette_dir>/<test>.yaml`; `{module}` in `cassette_dir` is the
    test module's name, and an absolute `cassette_dir` is used as it is."""
    folder = str(cassette_dir if cassette_dir is not None else DEFAULT_DIR)
    return (
        test_file.parent
        / folder.replace("{module}", test_file.stem)
        / file_name(test_name, class_name)
    )
