"""Cassettes mockagent writes: whole or not at all, with the file mode a user expects."""

from __future__ import annotations

import os
from pathlib import Path

from mockagent.cassette.loader import SCHEMA_FILE, schema_comment, write_atomic


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def test_a_new_file_gets_the_umask_mode_and_a_rewritten_one_keeps_its_own(tmp_path: Path) -> None:
    path = tmp_path / "new.yaml"
    write_atomic(path, "version: 1\n")
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()
    path.chmod(0o640)
    write_atomic(path, "version: 1\n# again\n")
    assert path.read_text() == "version: 1\n# again\n"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["new.yaml"]  # no temporary left behind


def test_the_schema_comment_points_at_the_installed_schema_from_where_the_cassette_is(
    tmp_path: Path,
) -> None:
    for folder in (tmp_path, tmp_path / "deep" / "er"):
        line = schema_comment(folder / "c.yaml")
        assert line.startswith("# yaml-language-server: $schema=") and line.endswith("\n")
        assert (folder / line.strip().split("=", 1)[1]).resolve() == SCHEMA_FILE.resolve()
