"""Cassettes mockagent writes: whole or not at all, with the file mode a user expects."""

from __future__ import annotations

import os
from pathlib import Path

from mockagent.cassette.loader import SCHEMA_FILE, schema_comment, write_atomic
from tests.helpers.paths import ROOT


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


def test_the_schema_comment_points_at_the_nearest_schema_up_to_the_project_root(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "schema.json").write_text("{}")
    deep = tmp_path / "cassettes" / "kit" / "more"
    assert schema_comment(deep / "c.yaml") == "# yaml-language-server: $schema=../../schema.json\n"
    assert schema_comment(tmp_path / "cassettes" / "c.yaml") == (
        "# yaml-language-server: $schema=schema.json\n"
    )
    (deep / "schema.json").parent.mkdir(parents=True)
    (deep / "schema.json").write_text("{}")  # the nearest wins
    assert schema_comment(deep / "c.yaml") == "# yaml-language-server: $schema=schema.json\n"


def test_no_schema_line_without_a_schema_in_the_project_nor_one_above_its_root(
    tmp_path: Path,
) -> None:
    """Never the installed package's schema.json: a path into a venv breaks for a teammate."""
    (tmp_path / "schema.json").write_text("{}")  # above the project: someone else's
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)  # a worktree's .git is a file: both count
    assert schema_comment(project / "cassettes" / "c.yaml") == ""
    assert schema_comment(tmp_path / "loose" / "c.yaml") == ""  # no root: beside it only


def test_the_bundled_cassettes_keep_their_schema_line() -> None:
    for cassette in sorted((ROOT / "cassettes").glob("*/*.yaml")):
        first = cassette.read_text(encoding="utf-8").splitlines(keepends=True)[0]
        assert first == "# yaml-language-server: $schema=../schema.json\n"
        assert schema_comment(cassette) == first


def test_a_cassette_rewritten_keeps_its_own_schema_line_but_not_one_into_the_package(
    tmp_path: Path,
) -> None:
    """`verify --update` or a new recording over a cassette keeps the line its user wrote (a URL,
    say); a line an older mockagent wrote into the installed package is written anew."""
    cassette = tmp_path / "c.yaml"
    own = "# yaml-language-server: $schema=https://example.com/mockagent.schema.json\n"
    cassette.write_text(own + "interactions: []\n")
    assert schema_comment(cassette) == own
    into_package = os.path.relpath(SCHEMA_FILE, tmp_path)
    cassette.write_text(f"# yaml-language-server: $schema={into_package}\ninteractions: []\n")
    assert schema_comment(cassette) == ""
    cassette.write_text(f"# yaml-language-server: $schema={SCHEMA_FILE.as_uri()}\n")
    assert schema_comment(cassette) == ""


def test_a_fifo_where_the_cassette_goes_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "c.yaml"
    os.mkfifo(fifo)
    assert schema_comment(fifo) == ""  # returns: opening a FIFO to read would wait for a writer
