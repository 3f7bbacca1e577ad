"""What a user installs: every `pip install` and every extra the repository spells names the
distribution pyproject.toml declares (`mockagent` on the package index is another project), the
version is read under that name, and the Apache-2.0 LICENSE ships in its metadata."""

from __future__ import annotations

import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DISTRIBUTION = PROJECT["name"]

TAKEN = {"mockagent"}
"""Names another project owns on the package index: `pip install` of one fetches its code."""

THIRD_PARTY = {
    # installed beside mockagent by a command in the repository (the README's, with pytest)
    "pytest",
    "a2a-sdk",  # the official A2A client of the README's first recipe
}
"""Packages of other projects that a `pip install` in the repository may name."""

INSTALL = re.compile(r"pip[ ]install\b([^`\"#;|&)\n]*)")  # [ ]: this line is no install
"""A `pip install` and its arguments, up to what ends a command in prose, shell or a string."""

EXTRA = re.compile(
    r"\b(mockagent[A-Za-z0-9._-]*)[\[?]("
    + "|".join(map(re.escape, PROJECT["optional-dependencies"]))
    + r")[\]?]"
)
"""This project's NAME[extra] for an extra pyproject declares (`?` for the brackets of an
fnmatch pattern)."""


def normalized(name: str) -> str:
    """A distribution name as the package index compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def tracked_texts() -> Iterator[tuple[str, str]]:
    """(path, text) of every tracked file that is text."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False
    ).stdout.decode()
    paths = [path for path in listed.split("\0") if path]
    if not paths:
        pytest.skip("not a git checkout")
    for path in paths:
        try:
            yield path, (ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # an image, or a file deleted in the work tree


def installed_names(arguments: str) -> list[str]:
    """The distributions an install with ARGUMENTS names: not its options, local paths (`.`,
    `$root…`) or placeholders filled in elsewhere (`{EXTRA}`, checked as an extra)."""
    names = []
    for token in arguments.split():
        token = token.strip("'")
        if not token or token.startswith(("-", ".", "/", "$", "{")) or "{" in token:
            continue
        names.append(re.split(r"[\[<>=!~;@? ]", token, maxsplit=1)[0])
    return names


def test_the_distribution_is_a_name_nobody_else_owns():
    assert normalized(DISTRIBUTION) not in TAKEN


def test_every_pip_install_names_the_declared_distribution():
    wrong = [
        f"{path}:{text.count(chr(10), 0, found.start()) + 1}: pip install {name}"
        for path, text in tracked_texts()
        for found in INSTALL.finditer(text)
        for name in installed_names(found.group(1))
        if normalized(name) not in {normalized(DISTRIBUTION), *THIRD_PARTY}
    ]
    assert wrong == [], (
        f"install {DISTRIBUTION} (or add the package to THIRD_PARTY):\n" + "\n".join(wrong)
    )


def test_every_extra_is_spelled_with_the_declared_distribution():
    wrong = [
        f"{path}:{text.count(chr(10), 0, found.start()) + 1}: {found.group(0)}"
        for path, text in tracked_texts()
        for found in EXTRA.finditer(text)
        if normalized(found.group(1)) != normalized(DISTRIBUTION)
    ]
    assert wrong == [], f"spell the extras {DISTRIBUTION}[…]:\n" + "\n".join(wrong)


def test_the_version_is_read_under_the_declared_distribution():
    named = [
        f"{path.relative_to(ROOT)}: {found.group(0)}"
        for path in sorted((ROOT / "mockagent").rglob("*.py"))
        for found in re.finditer(
            r"(?:package_name=|version\(|distribution\()\s*[\"']([^\"']+)[\"']", path.read_text()
        )
        if found.group(1) != DISTRIBUTION
    ]
    assert named == []


def test_the_apache_license_is_at_the_root_and_in_the_metadata():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text  # the whole text, not a pointer to it
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]  # sdist and wheel carry it (PEP 639)
