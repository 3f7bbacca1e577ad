"""Reading cassettes: safe YAML only, validated by the models, errors located by file and line."""

from __future__ import annotations

import gc
import json
import os
import tempfile
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
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
    source: str = field(default="", repr=False)  # the YAML text, where `lines` are found

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
        with _collector_paused():
            return parse_yaml(self.source, self.path)[1]

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


MAX_NODES = 100_000  # nodes that aliases add on expanding: an alias bomb stops here, not in validation


def _check_aliases(root: yaml.Node, path: str) -> None:
    """Refuse a YAML alias that contains itself, or aliases that add more than MAX_NODES nodes
    on expanding: the data is as big as its expansion once validation walks it. A node without
    aliases below it expands to no more than the nodes written, however many there are.

    Depth first with a stack of its own, not recursion: libyaml parses 1,000 levels deep.
    """
    sizes: dict[int, int] = {}  # expanded size of every node done
    open_nodes: set[int] = set()  # the nodes on the path to the current one
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            open_nodes.discard(key)
            if total > MAX_NODES + len(sizes) + 1:  # `sizes` has every node sized so far, those below among them
                raise CassetteError(f"aliases expand the YAML by more than {MAX_NODES} nodes",
                                    path=path, line=node.start_mark.line + 1)
            sizes[key] = total
        elif key in open_nodes:
            raise CassetteError("a YAML alias refers to a node that contains it", path=path,
                                line=node.start_mark.line + 1)
        elif key not in sizes:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))  # first child on top


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


_LOADER: Any = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
"""libyaml's parser when PyYAML has it (several times faster); the constructor and resolver are
the safe ones either way, so the same tags are refused."""
_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_PLAIN = {_STR: yaml.SafeLoader.construct_yaml_str, _MAP: yaml.SafeLoader.construct_yaml_map,
          _SEQ: yaml.SafeLoader.construct_yaml_seq}


def _construct(loader: Any, root: yaml.Node) -> Any:
    """What `loader.construct_document(root)` returns, built faster.

    Strings, mappings with string keys and sequences (nearly every node of a cassette) are built
    here; any other node goes to the loader's own (safe) constructor, which so refuses the same
    tags. Containers are filled breadth first, as PyYAML fills them, so a document with several
    bad values reports the same one first; aliases share one object, as there.
    """
    if any(loader.yaml_constructors.get(tag) is not fn for tag, fn in _PLAIN.items()):
        return loader.construct_document(root)  # someone registered their own: let them have it
    built: dict[yaml.Node, Any] = loader.constructed_objects  # shared, so aliases stay shared
    pending: deque[Any] = deque()  # containers to fill, and the loader's unfinished ones

    def make(node: yaml.Node) -> Any:
        if node in built:
            return built[node]
        kind = type(node)
        if kind is yaml.ScalarNode and node.tag == _STR:
            value: Any = node.value
        elif kind is yaml.MappingNode and node.tag == _MAP and all(
                type(key) is yaml.ScalarNode and key.tag == _STR for key, _ in node.value):
            value = {}  # no merge (`<<`) or value (`=`) keys, no keys that need constructing
            pending.append((node, value))
        elif kind is yaml.SequenceNode and node.tag == _SEQ:
            value = []
            pending.append((node, value))
        else:
            value = loader.construct_object(node)
            pending.extend(loader.state_generators)  # in the order PyYAML would run them
            loader.state_generators = []
            return value
        built[node] = value
        return value

    data = make(root)
    while pending:
        item = pending.popleft()
        if isinstance(item, tuple):
            node, value = item
            if isinstance(value, dict):
                for key, child in node.value:
                    value[key.value] = make(child)
            else:
                value.extend([make(child) for child in node.value])
        else:  # a generator of the loader's: it fills what the loader began
            for _ in item:
                pass
            pending.extend(loader.state_generators)
            loader.state_generators = []
    return data


def _parse(text: str, path: str) -> tuple[Any, yaml.Node | None]:
    """Parse with the safe loader only; return the data and the root node."""
    try:
        loader = _LOADER(text)  # the pure-Python reader refuses control characters here already
    except yaml.YAMLError as exc:
        raise CassetteError(f"not valid YAML: {exc}", path=path) from None
    try:
        node = loader.get_single_node()
        if node is not None and "&" in text:  # no anchor, no alias: nothing to expand
            _check_aliases(node, path)
        data = _construct(loader, node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        if problem == "exceeded maximum nesting depth":  # libyaml's limit; PyYAML's is recursion's
            raise CassetteError("the YAML is nested too deeply", path=path, line=line) from None
        raise CassetteError(f"not valid YAML: {problem}", path=path, line=line) from None
    except RecursionError:
        raise CassetteError("the YAML is nested too deeply", path=path) from None
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # PyYAML's own constructors fail this way on explicit tags with bad values (`!!int abc`).
        raise CassetteError(f"not valid YAML: {type(exc).__name__}: {exc}", path=path) from None
    finally:
        loader.dispose()
    return data, node


def parse_yaml(text: str, path: str) -> tuple[Any, dict[Loc, int]]:
    """Parse with the safe loader only; return the data and a map of location → line."""
    data, node = _parse(text, path)
    return data, _line_map(node) if node is not None else {}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a cassette is built.

    Nodes, data and models of a big cassette are hundreds of thousands of new objects, none of
    them cyclic garbage, and the collector's passes over them cost several times the parse
    itself (10,000 interactions, measured: 1.3 s to compose with it, 0.25 s without). The switch
    is process-wide: another thread's load may resume it early, which costs only time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
    with _collector_paused():  # the nodes and the plain data are freed before it resumes
        cassette = _validated(text, path)
    return LoadedCassette(cassette=cassette, path=path, source=text)


def _validated(text: str, path: str) -> Cassette:
    data, node = _parse(text, path)
    if not isinstance(data, dict):
        raise CassetteError("a cassette is a mapping with `version: 1`, `agent:` and `interactions:`",
                            path=path, line=1)
    try:
        return Cassette.model_validate(data)
    except ValidationError as exc:
        problems = exc.errors()
        loc = _in_data(data, problems[0]["loc"], problems[0]["type"])
        message = problems[0]["msg"].removeprefix("Value error, ")
        more = len({_in_data(data, p["loc"], p["type"]) for p in problems}) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        lines = _line_map(node) if node is not None else {}
        raise CassetteError(describe(_names(data), loc, message), path=path,
                            line=_deepest_line(lines, loc)) from None


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
