"""What the docs tests share: the code blocks of README.md and docs/**/*.md, and `mockagent` run
as a user runs it.

The tests read the pages themselves, so they break when a page drifts from the code. A block is
found by its page, its fence's language tag and a line only it has, never by its position, so
adding a block or reordering sections does not move a test onto the wrong one. Every lookup is
`block("PAGE", "LANG", "LINE")` with literal strings: tests/examples/test_docs_pages.py reads them
out of the test sources to check that every block of every page is claimed by some test.
"""

from __future__ import annotations

import functools
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_URL = "http://127.0.0.1:8000"  # where the examples expect `scripts/serve`
START_TIMEOUT_S = 30.0  # a cold start imports Flask and pydantic; generous for a loaded machine
READY = re.compile(r"mockagent ready on (http://\S+)")
FENCE = re.compile(r"^( *)```(\S*)\s*$")  # indented: a block inside a list item


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str  # the page's path from the repository root: README.md, docs/pytest.md
    lang: str  # the fence's language tag; "" for a bare fence
    text: str  # the lines between the fences, each ending in a newline, the fence's indent removed
    line: int  # line of the opening fence, for messages

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


class Markdown:
    """A Markdown page's fenced code blocks."""

    def __init__(self, page: str, markdown: str) -> None:
        self.page = page
        self.text = markdown
        self.blocks: list[Block] = []
        opened: tuple[str, str, int, list[str]] | None = None  # indent, lang, line, lines
        for number, line in enumerate(markdown.splitlines(keepends=True), start=1):
            fence = FENCE.match(line)
            if opened is None and fence:
                opened = (fence.group(1), fence.group(2), number, [])
            elif opened is not None and line.rstrip() == opened[0] + "```":
                self.blocks.append(Block(page, opened[1], "".join(opened[3]), opened[2]))
                opened = None
            elif opened is not None:
                opened[3].append(line.removeprefix(opened[0]))
        assert opened is None, f"{page}: the code block opened on line {opened[2]} never closes"

    def block(self, lang: str, containing: str) -> Block:
        """The one block tagged `lang` that has `containing` in it."""
        found = [b for b in self.blocks if b.lang == lang and containing in b.text]
        assert len(found) == 1, (
            f"{self.page} should have exactly one ```{lang} block containing {containing!r}; "
            f"found {len(found)} (lines {[b.line for b in found]})"
        )
        return found[0]


@functools.cache
def page(path: str) -> Markdown:
    """The page at `path` (from the repository root), read once."""
    return Markdown(path, (ROOT / path).read_text(encoding="utf-8"))


def block(path: str, lang: str, containing: str) -> Block:
    """The one block of page `path` tagged `lang` that has `containing` in it. Pass literals: the
    claim check reads these calls out of the test sources."""
    return page(path).block(lang, containing)


def every_block(path: str, lang: str) -> list[Block]:
    """Every block of page `path` tagged `lang`: a test that checks each of them claims them all."""
    return [b for b in page(path).blocks if b.lang == lang]


def pages() -> list[str]:
    """README.md and every page under docs/, as paths from the repository root."""
    docs = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))
    return ["README.md", *docs]


def blocks(lang: str | None = None) -> list[Block]:
    """Every block of every page (tagged `lang`, when given)."""
    return [b for p in pages() for b in page(p).blocks if lang is None or b.lang == lang]


def mockagent_command() -> str:
    """The `mockagent` console script of the environment running the tests."""
    beside = Path(sys.executable).parent / "mockagent"
    found = str(beside) if beside.exists() else shutil.which("mockagent")
    assert found, f"no `mockagent` command next to {sys.executable} or on PATH"
    return found


def local_env() -> dict[str, str]:
    """The environment for a subprocess that calls 127.0.0.1: no proxy from the environment."""
    return {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


@dataclass
class Served:
    """A `mockagent serve` or `mockagent record` subprocess that printed its ready line."""

    process: subprocess.Popen[bytes]
    url: str  # the server root, from the ready line
    stdout: str  # what it printed up to and including the ready line
    stderr: Path

    def stop(self) -> str:
        """SIGTERM, as a supervisor would; what it printed on stdout from the ready line on."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            rest, _ = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            rest, _ = self.process.communicate()
        return self.stdout + rest.decode()


def start(args: list[str], stderr: Path, cwd: Path = ROOT) -> Served:
    """Run `mockagent ARGS` and wait, polling its stdout, for the ready line."""
    with stderr.open("wb") as err:
        process = subprocess.Popen(
            [mockagent_command(), *args],
            cwd=cwd,
            env=local_env(),
            stdout=subprocess.PIPE,
            stderr=err,
            bufsize=0,
        )
    assert process.stdout is not None
    # Raw reads, not readline: a buffered reader may hold the ready line while select() waits.
    printed = b""
    deadline = time.monotonic() + START_TIMEOUT_S
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:  # it exited before it was ready
                process.wait()
                pytest.fail(
                    f"mockagent {' '.join(args)} exited with {process.returncode}:\n"
                    f"{printed.decode()}{stderr.read_text()}"
                )
            printed += chunk
            ready = READY.search(printed.decode(errors="replace"))
            if ready and printed.endswith(b"\n"):
                return Served(process, ready.group(1), printed.decode(), stderr)
    process.kill()
    process.wait()
    pytest.fail(
        f"mockagent {' '.join(args)} printed no ready line in {START_TIMEOUT_S} s:\n"
        f"{printed.decode()}{stderr.read_text()}"
    )
