"""Reading cassettes: safe YAML only, validated by the models, errors located by file and line."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mockagent.cassette.models import Cassette
from mockagent.errors import CassetteError

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class LoadedCassette:
    """A validated cassette with where it came from, so later errors can point into the file."""

    cassette: Cassette
    path: str
    lines: dict[Loc, int] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return Path(self.path).stem

    def line_of(self, loc: Loc) -> int | None:
        """The line of the deepest node on `loc` that the file has (1-based)."""
        return _deepest_line(self.lines, loc)

    def locate(self, loc: Loc, message: str) -> CassetteError:
        """A CassetteError for `loc`, naming the interaction and the field."""
        names = [i.name for i in self.cassette.interactions]
        return CassetteError(describe(names, loc, message), path=self.path, line=self.line_of(loc))


def _deepest_line(lines: dict[Loc, int], loc: Loc) -> int | None:
    for end in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:end]))
        if line is not None:
            return line
    return None


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


def _line_map(node: yaml.Node, loc: Loc, out: dict[Loc, int]) -> None:
    out[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                out[loc + (key.value,)] = key.start_mark.line + 1
                _line_map(value, loc + (key.value,), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_map(item, loc + (i,), out)


def parse_yaml(text: str, path: str) -> tuple[Any, dict[Loc, int]]:
    """Parse with the safe loader only; return the data and a map of location → line."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise CassetteError(f"not valid YAML: {problem}", path=path, line=line) from None
    finally:
        loader.dispose()
    lines: dict[Loc, int] = {}
    if node is not None:
        _line_map(node, (), lines)
    return data, lines


def _names(data: Any) -> list[Any]:
    items = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    return [item.get("name") if isinstance(item, dict) else None for item in items]


def load_cassette(path: str | Path) -> LoadedCassette:
    """Read and validate one cassette file; raise CassetteError naming file, line and field."""
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cannot read cassette: {exc}", path=path) from None
    data, lines = parse_yaml(text, path)
    if not isinstance(data, dict):
        raise CassetteError("a cassette is a mapping with `version: 1`, `agent:` and `interactions:`",
                            path=path, line=1)
    try:
        cassette = Cassette.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        message = first["msg"].removeprefix("Value error, ")
        more = len(exc.errors()) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise CassetteError(describe(_names(data), loc, message), path=path,
                            line=_deepest_line(lines, loc)) from None
    return LoadedCassette(cassette=cassette, path=path, lines=lines)


def load_folder(path: str | Path) -> dict[str, LoadedCassette]:
    """Every `NAME.yaml` (and `.yml`) in a folder, by NAME, sorted."""
    folder = Path(path)
    files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    if not files:
        raise CassetteError("no cassettes (*.yaml) in this folder", path=str(folder))
    return {f.stem: load_cassette(f) for f in files}


def json_schema() -> str:
    """The cassette JSON Schema, pretty-printed, as `mockagent schema` prints it."""
    schema = Cassette.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "mockagent cassette, version 1"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
