"""docs/reference/python-api.md documents `mockagent.__all__`, no more and no less, each with its
signature as the code has it (names, kinds, defaults and annotations), and its example runs."""

from __future__ import annotations

import ast
import dataclasses
import importlib.metadata
import inspect
import re
import subprocess
import sys
from typing import Any

import mockagent
from tests.helpers.docs import ROOT, Block, block, every_block, page

PAGE = "docs/reference/python-api.md"
SECTION = re.compile(r"^## `([^`]+)`$", re.M)


def sections() -> dict[str, Block]:
    """Each `## `NAME`` heading's name → the one python block under it (its signature)."""
    text = page(PAGE).text
    starts = [(text[: m.start()].count("\n") + 1, m.group(1)) for m in SECTION.finditer(text)]
    found: dict[str, Block] = {}
    for shown in every_block("docs/reference/python-api.md", "python"):
        above = [name for line, name in starts if line < shown.line]
        if above:
            assert above[-1] not in found, f"{shown.where}: a second block under {above[-1]}"
            found[above[-1]] = shown
    return found


def test_the_page_names_every_exported_name_and_nothing_else() -> None:
    headings = SECTION.findall(page(PAGE).text)
    assert sorted(headings) == sorted(set(headings)), "a name with two sections"
    assert set(headings) == set(mockagent.__all__)
    assert set(sections()) == set(headings), "a section without its signature block"


def same_annotation(written: ast.expr | None, real: Any) -> bool:
    """An annotation as the page writes it against the code's (a string under
    `from __future__ import annotations`)."""
    if written is None or real is inspect.Parameter.empty:
        return written is None and real is inspect.Parameter.empty
    if not isinstance(real, str):  # a dataclass's own __init__: `-> None` is None itself
        real = getattr(real, "__name__", repr(real))
    return ast.unparse(written) == ast.unparse(ast.parse(real, mode="eval").body)


def same_default(written: ast.expr | None, real: Any) -> bool:
    """A default as the page writes it (a literal, or a class by name) against the code's."""
    if written is None or real is inspect.Parameter.empty:
        return written is None and real is inspect.Parameter.empty
    if isinstance(written, ast.Name):
        return written.id == getattr(real, "__name__", None)
    return bool(ast.literal_eval(written) == real)


def documented(node: ast.FunctionDef) -> list[tuple[str, Any, ast.expr | None, ast.expr | None]]:
    """(name, kind, annotation, default) of each parameter the page writes."""
    kind = inspect.Parameter
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [
        (a.arg, kind.POSITIONAL_OR_KEYWORD, a.annotation, d)
        for a, d in zip(positional, defaults, strict=True)
    ]
    if args.vararg:
        out.append((args.vararg.arg, kind.VAR_POSITIONAL, args.vararg.annotation, None))
    out += [
        (a.arg, kind.KEYWORD_ONLY, a.annotation, d)
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        out.append((args.kwarg.arg, kind.VAR_KEYWORD, args.kwarg.annotation, None))
    return out


def check_signature(node: ast.FunctionDef, function: Any, owner: type | None, where: str) -> None:
    real = inspect.signature(function)
    written = documented(node)
    assert [(n, k) for n, k, _, _ in written] == [
        (p.name, p.kind) for p in real.parameters.values()
    ], f"{where}: {node.name}'s parameters"
    fields = (
        {f.name: f for f in dataclasses.fields(owner)} if dataclasses.is_dataclass(owner) else {}
    )
    for (name, _, annotation, default), parameter in zip(
        written, real.parameters.values(), strict=True
    ):
        if name == "self":
            continue
        assert same_annotation(annotation, parameter.annotation), f"{where}: {name}'s annotation"
        value = parameter.default
        if value is not inspect.Parameter.empty and repr(value) == "<factory>":
            value = fields[name].default_factory()  # type: ignore[misc]
        assert same_default(default, value), f"{where}: {name}'s default"
    assert same_annotation(node.returns, real.return_annotation), f"{where}: {node.name} returns"


def check_member(node: ast.stmt, owner: type, where: str) -> None:
    if isinstance(node, ast.FunctionDef):
        check_signature(node, getattr(owner, node.name), owner, f"{where} {owner.__name__}")
        return
    assert isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name), where
    name = node.target.id
    fields = (
        {f.name: f.type for f in dataclasses.fields(owner)}
        if dataclasses.is_dataclass(owner)
        else {}
    )
    attribute = inspect.getattr_static(owner, name, None)
    if isinstance(attribute, property):
        real = inspect.signature(attribute.fget).return_annotation  # type: ignore[arg-type]
    else:
        assert name in fields, f"{where}: {owner.__name__} has no {name}"
        real = fields[name]
    assert same_annotation(node.annotation, real), f"{where}: {owner.__name__}.{name}"


def test_each_signature_is_the_codes() -> None:
    for name, shown in sections().items():
        (node,) = ast.parse(shown.text).body
        value = getattr(mockagent, name)
        if isinstance(node, ast.FunctionDef):
            assert node.name == name, shown.where
            check_signature(node, value, None, shown.where)
        elif isinstance(node, ast.ClassDef):
            assert node.name == name and inspect.isclass(value), shown.where
            ancestors = {c.__name__ for c in value.__mro__[1:]}  # a written base is one of them
            assert {ast.unparse(b) for b in node.bases} <= ancestors, shown.where
            for member in node.body:
                if not (isinstance(member, ast.Expr) and isinstance(member.value, ast.Constant)):
                    check_member(member, value, shown.where)
        else:
            assert isinstance(node, ast.AnnAssign) and name == "__version__", shown.where
            assert mockagent.__version__ == importlib.metadata.version("mockagent-server")


def test_the_example_prints_what_it_says() -> None:
    source = block(
        "docs/reference/python-api.md", "python", "from mockagent import Call, Engine"
    ).text
    done = subprocess.run(
        [sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    said = re.findall(r"# prints: (.+)", source)
    assert len(said) == 2 and done.stdout.splitlines() == said


def test_the_pytest_page_calls_the_fixtures_own_methods() -> None:
    """`mockagent.NAME(` in the pytest pages is a MockAgent method (not `mockagent.server.…`)."""
    for where in ("docs/pytest.md", "docs/migrating/pytest-httpserver.md", PAGE):
        for call in re.findall(r"`mockagent\.([\w.]+)\(", page(where).text):
            assert callable(getattr(mockagent.MockAgent, call, None)), f"{where}: mockagent.{call}("
