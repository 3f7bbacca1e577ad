"""Reading and writing cassettes: safe YAML only, validated by the models, errors located by file
and line; the YAML a recording writes, its schema line, and atomic writes."""

from __future__ import annotations

import errno
import gc
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mockagent.cassette.files import read_cassette_text
from mockagent.cassette.models import Cassette
from mockagent.cassette.names import control_character, written_problems
from mockagent.cassette.problems import every_problem
from mockagent.cassette.schema import json_schema
from mockagent.cassette.yaml_keys import duplicate_keys
from mockagent.cassette.yaml_reader import (
    MAX_NODES,
    Loc,
    deepest_line,
    parse_checked,
    parse_yaml,
)
from mockagent.errors import CassetteError, Problem

# Loc, MAX_NODES and parse_yaml moved to yaml_reader and stay importable from here, where callers
# found them. MAX_NODES here is a copy: to change the cap, set yaml_reader.MAX_NODES.
__all__ = [
    "MAX_NODES",
    "LoadedCassette",
    "Loc",
    "describe",
    "dump_cassette",
    "json_schema",
    "load_cassette",
    "load_folder",
    "parse_yaml",
    "write_atomic",
]


@dataclass(frozen=True)
class LoadedCassette:
    """A validated cassette with where it came from, so later errors can point into the file."""

    cassette: Cassette
    path: str
    source: str = field(default="", repr=False)  # the YAML text, where `lines` are found
    missing: bool = False  # no file at `path` yet (a test's own cassette, before recording)

    @property
    def name(self) -> str:
        return Path(self.path).stem

    @cached_property
    def lines(self) -> dict[Loc, int]:
        """Location → line (1-based) of every node written in the file.

        Worked out when first asked for (an error, a near-miss report): a big cassette would
        otherwise pay for it on every load, and keep a large map it may never read.
        """
        if not self.source:
            return {}
        with collector_paused():
            return parse_yaml(self.source, self.path)[1]

    def line_of(self, loc: Loc) -> int | None:
        """The line of the deepest node on `loc` that the file has (1-based)."""
        return deepest_line(self.lines, loc)

    def locate(self, loc: Loc, message: str) -> CassetteError:
        """A CassetteError for `loc`, naming the interaction and the field."""
        names = [i.name for i in self.cassette.interactions]
        return CassetteError(describe(names, loc, message), path=self.path, line=self.line_of(loc))


def describe(names: list[Any], loc: Loc, message: str) -> str:
    """`interaction 'run' (#2): reply.task.steps[0].state: message` for a location."""
    prefix = ""
    rest = list(loc)
    if len(rest) >= 2 and rest[0] == "interactions" and isinstance(rest[1], int):
        index = rest[1]
        name = names[index] if index < len(names) and isinstance(names[index], str) else None
        prefix = f"interaction {name!r} (#{index + 1}): " if name else f"interaction #{index + 1}: "
        rest = rest[2:]
    path = ""
    for part in rest:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return f"{prefix}{path}: {message}" if path else f"{prefix}{message}"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a cassette is built.

    Nodes, data and models of a big cassette are hundreds of thousands of new objects, none of
    them cyclic garbage, and the collector's passes over them cost several times the parse
    itself (the load-time row of bench/README.md measures it). The switch
    is process-wide: another thread's load may resume it early, which costs only time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _names(data: Any) -> list[Any]:
    items = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    return [item.get("name") if isinstance(item, dict) else None for item in items]


def load_cassette(path: str | Path, max_size: int | None = None) -> LoadedCassette:
    """Read and validate one cassette file; raise CassetteError naming file, line and field.

    Only a regular file is read, of at most `max_size` bytes (default: the cap in force, see
    `mockagent.cassette.files`)."""
    path = str(path)
    text = read_cassette_text(path, max_size)
    with collector_paused():  # the nodes and the plain data are freed before it resumes
        cassette = _validated(text, path)
    return LoadedCassette(cassette=cassette, path=path, source=text)


def _validated(text: str, path: str) -> Cassette:
    data, node, duplicates = parse_checked(text, path)
    if not isinstance(data, dict):
        raise CassetteError(
            "a cassette is a mapping with `version: 1`, `agent:` and `interactions:`",
            path=path,
            line=1,
        )
    names = _names(data)
    twice = [  # a key written twice is a mistake wherever it is: the data kept only the last
        Problem(describe(names, loc, message), path, line)
        for loc, line, message in sorted(
            duplicate_keys(node, duplicates) if node and duplicates else [], key=lambda d: d[1]
        )
    ]
    # The nodes take several times the memory of the data (a 20 MB cassette: about 600 MB):
    # let them go before the models are built, and parse again for the lines of an error.
    del node
    try:
        cassette = Cassette.model_validate(data)
    except ValidationError as exc:
        lines = parse_yaml(text, path)[1]
        found = every_problem(Cassette, data, exc.errors())
        # The name rules run on the model only when all else is valid: here, on what is written.
        found += [problem for problem in written_problems(data) if problem not in found]
        problems = [
            Problem(describe(names, loc, message), path, deepest_line(lines, loc))
            for loc, message in found
        ]
        raise CassetteError.of(twice + problems) from None
    if twice:
        raise CassetteError.of(twice)
    return cassette


def load_folder(path: str | Path, max_size: int | None = None) -> dict[str, LoadedCassette]:
    """Every `NAME.yaml` (and `.yml`) in a folder, by NAME, sorted; each read as
    `load_cassette` reads it (a FIFO or a device among them is an error, not a hang)."""
    folder = Path(path)
    files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    if not files:
        raise CassetteError("no cassettes (*.yaml) in this folder", path=str(folder))
    for f in files:  # a stem is an agent's mount name: in URLs, logs and the journal
        if (why := control_character(f.stem)) is not None:
            raise CassetteError(f"this file's name cannot name an agent: {why}", path=str(f))
    return {f.stem: load_cassette(f, max_size) for f in files}


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings as literal blocks, so a recorded cassette reads like a
    written one."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_cassette(data: dict[str, Any]) -> str:
    """YAML text of a cassette (a plain dict in the cassette format), keys in the order given."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )


SCHEMA_FILE = Path(__file__).with_name("schema.json")
"""The cassette JSON Schema installed with mockagent (`mockagent schema` prints the same)."""

SCHEMA_LINE = "# yaml-language-server: $schema="
PROJECT_MARKERS = (".git", "pyproject.toml")
"""A folder holding one of these is a project's root: the search for a `schema.json` stops there."""


def schema_comment(cassette: str | Path) -> str:
    """The first line of a cassette mockagent writes: it points YAML editors at the `schema.json`
    beside the cassette or in a folder above it, up to the project's root, by a relative path
    (`mockagent schema > cassettes/schema.json` puts one there). "" when there is none: a path
    into this machine's installed package would break for a teammate and change with every venv.
    A cassette that exists and opens with such a line keeps it.
    """
    kept = _schema_line_of(Path(cassette))
    if kept:  # the user's own (a URL, say): rewriting the cassette keeps it
        return kept
    folder = Path(cassette).resolve().parent
    schema = _shared_schema(folder)
    if schema is None:
        return ""
    return f"{SCHEMA_LINE}{Path(os.path.relpath(schema, folder)).as_posix()}\n"


def _shared_schema(folder: Path) -> Path | None:
    """The nearest `schema.json` from `folder` up to its project's root; beside it only when no
    folder above is a project's root (a file in /tmp or a home folder may be anyone's)."""
    above = (folder, *folder.parents)
    root = next((i for i, f in enumerate(above) if _is_project_root(f)), 0)
    found = [f / "schema.json" for f in above[: root + 1] if (f / "schema.json").is_file()]
    return found[0] if found else None


def _schema_line_of(cassette: Path) -> str:
    """The `# yaml-language-server: $schema=…` line the regular file `cassette` opens with, if it
    does and the line is not one that pointed into the installed package (written before)."""
    try:
        if not cassette.is_file():  # a FIFO would block the read
            return ""
        with cassette.open("rb") as file:
            first = file.readline(4096).decode("utf-8", "replace")
    except OSError:
        return ""
    if not first.startswith(SCHEMA_LINE) or not first.endswith("\n"):
        return ""
    target = first[len(SCHEMA_LINE) :].strip()
    installed = (
        target == SCHEMA_FILE.as_uri()
        or "://" not in target
        and ((cassette.resolve().parent / target).resolve() == SCHEMA_FILE.resolve())
    )
    return "" if installed else first


def _is_project_root(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in PROJECT_MARKERS)


def write_atomic(path: str | Path, text: str) -> None:
    """Write via a temporary file in the same folder and a rename: readers never see half a file,
    and a process killed mid-write leaves the previous file as it was. A new file gets the mode
    any new file gets (0666 less the umask), a rewritten one keeps its own."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where the folder should be: say that, not "File exists"
        raise NotADirectoryError(
            errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(target.parent)
        ) from None
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    # os.open applies the umask itself; mkstemp would make the file 0600, readable by us only.
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        if target.exists():  # by path: changing the mode of an open descriptor is POSIX-only
            os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
