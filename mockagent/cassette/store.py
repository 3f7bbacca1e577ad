"""Reading cassettes: safe YAML only, validated by the models, errors located by file and line."""

from __future__ import annotations

import json
import os
import tempfile
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


MAX_NODES = 100_000  # after expanding aliases: an alias bomb stops here, not in validation


def _check_aliases(root: yaml.Node, path: str) -> None:
    """Refuse a YAML alias that contains itself, or aliases that expand past MAX_NODES."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise CassetteError("a YAML alias refers to a node that contains it", path=path,
                                line=node.start_mark.line + 1)
        open_nodes.add(key)
        children = _children(node)
        total = 1 + sum(size(child) for child in children)
        open_nodes.discard(key)
        if total > MAX_NODES:
            raise CassetteError(f"the YAML expands to more than {MAX_NODES} nodes (aliases?)",
                                path=path, line=node.start_mark.line + 1)
        sizes[key] = total
        return total

    size(root)


def _children(node: yaml.Node) -> list[yaml.Node]:
    """Every node directly inside `node`, mapping keys included."""
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _line_map(root: yaml.Node) -> dict[Loc, int]:
    """Location → line of every node, walking each aliased node once (its first location)."""
    out: dict[Loc, int] = {}
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, Loc]] = [(root, ())]
    while stack:
        node, loc = stack.pop()
        out.setdefault(loc, node.start_mark.line + 1)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):  # a field's line is its key's line
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    out.setdefault(loc + (key.value,), key.start_mark.line + 1)
                    stack.append((value, loc + (key.value,)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, loc + (i,)) for i, item in enumerate(node.value))
    return out


def parse_yaml(text: str, path: str) -> tuple[Any, dict[Loc, int]]:
    """Parse with the safe loader only; return the data and a map of location → line."""
    try:
        loader = yaml.SafeLoader(text)  # refuses control characters here already
    except yaml.YAMLError as exc:
        raise CassetteError(f"not valid YAML: {exc}", path=path) from None
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_aliases(node, path)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise CassetteError(f"not valid YAML: {problem}", path=path, line=line) from None
    except RecursionError:
        raise CassetteError("the YAML is nested too deeply", path=path) from None
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # PyYAML's own constructors fail this way on explicit tags with bad values (`!!int abc`).
        raise CassetteError(f"not valid YAML: {type(exc).__name__}: {exc}", path=path) from None
    finally:
        loader.dispose()
    return data, _line_map(node) if node is not None else {}


def _in_data(data: Any, loc: Loc, error_type: str) -> Loc:
    """The part of a pydantic error location that names fields as written.

    pydantic adds union-member tags (`str`, `list[str]`) and validator names to locations; they
    are cut where the path leaves the data. A missing field keeps its own name.
    """
    kept: list[str | int] = []
    for part in loc:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            if error_type == "missing":
                kept.append(part)
            break
        kept.append(part)
    return tuple(kept)


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
        problems = exc.errors()
        loc = _in_data(data, problems[0]["loc"], problems[0]["type"])
        message = problems[0]["msg"].removeprefix("Value error, ")
        more = len({_in_data(data, p["loc"], p["type"]) for p in problems}) - 1
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


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings as literal blocks, so a recorded cassette reads like a written one."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_cassette(data: dict[str, Any]) -> str:
    """YAML text of a cassette (a plain dict in the cassette format), keys in the order given."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)


def write_atomic(path: str | Path, text: str) -> None:
    """Write via a temporary file in the same folder and a rename: readers never see half a file,
    and a process killed mid-write leaves the previous file as it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
