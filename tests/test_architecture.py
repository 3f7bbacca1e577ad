"""The layering the project's design asks for: imports flow cassette ← engine ← dialects ←
server ← proxy, and the jobs beside them (cli, verify, lint, testing): no layer imports a job
that calls it."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from tests.helpers.import_graph import circles, graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mockagent"

# The jobs beside the layers (the CLI, verify, the pytest side) use the layers, never the other way
# round: a server that imported verify or the CLI would drag them into every replay.
JOBS = ("mockagent.verify", "mockagent.cli", "mockagent.testing")
FORBIDDEN = {
    "cassette": (
        "flask",
        "werkzeug",
        "mockagent.engine",
        "mockagent.dialects",
        "mockagent.server",
        "mockagent.proxy",
        *JOBS,
    ),
    "engine": (
        "flask",
        "werkzeug",
        "mockagent.dialects",
        "mockagent.server",
        "mockagent.proxy",
        *JOBS,
    ),
    "dialects": ("flask", "werkzeug", "mockagent.server", "mockagent.proxy", *JOBS),
    "server": ("mockagent.proxy", *JOBS),
    "proxy": JOBS,
    # the jobs stay apart: the CLI calls verify and lint; verify and the pytest side call neither
    "verify": ("mockagent.cli", "mockagent.testing"),
    "testing": ("mockagent.cli", "mockagent.verify"),
}
# the engine lints a cassette as it loads it: lint reads cassettes and nothing above them
FORBIDDEN["lint"] = FORBIDDEN["cassette"]

# What `ls mockagent/` shows beside the folders: the public API and the leaves every layer uses.
TOP_LEVEL_MODULES = {"__init__.py", "errors.py", "vocabulary.py"}


def imports_of(path: Path) -> set[str]:
    """Every dotted name a module imports, `from a import b` as both `a` and `a.b` (b may be a
    submodule: `from mockagent import testing` imports mockagent.testing)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_flow_one_way(layer):
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for name in imports_of(path)
        if name.startswith(FORBIDDEN[layer])
    ]
    assert offenders == []


# verify's comparison judges two answers; it records nothing, so the recording proxy is no part of
# it (verify/update.py and rewrite.py, which record with --update, may use the proxy). What both
# share, the shape of a minted id, lives in the engine (MINTED in mockagent/engine/ids.py).
COMPARISON = PACKAGE / "verify" / "compare.py"


def test_the_comparison_imports_no_proxy_module():
    assert sorted(n for n in imports_of(COMPARISON) if n.startswith("mockagent.proxy")) == []


def test_top_level_is_exactly_the_agreed_layout():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    top = {line.split("/")[0] for line in tracked.stdout.splitlines()}
    if not top:
        pytest.skip("not a git checkout")
    allowed = {
        "pyproject.toml",
        "mockagent",
        "cassettes",
        "tests",
        "scripts",
        "README.md",
        "LICENSE",
        ".ci",
        ".gitignore",
        "bench",
        "docs",
        "mkdocs.yml",  # the MkDocs site (issue 27)
    }
    assert top <= allowed, sorted(top - allowed)


# Who may import the pytest side: itself (pytest's entry point is mockagent.testing.plugin) and
# the public API's lazy `MockAgent`; a new importer fails here.
TESTING_IMPORTERS = {"mockagent/__init__.py"}


def test_nothing_imports_the_pytest_side_but_the_plugin():
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.parent != PACKAGE / "testing"
        and str(path.relative_to(ROOT)) not in TESTING_IMPORTERS
        for name in imports_of(path)
        if name.startswith("mockagent.testing")
    ]
    assert offenders == []
    # ... and the public API names `MockAgent` for type checkers only, loading it on first use:
    # `import mockagent` (every pytest session) must not load the fixture
    eager = graph(typing_too=False)["mockagent"]
    assert [name for name in eager if name.startswith("mockagent.testing")] == []


def test_the_top_of_the_package_holds_only_the_agreed_modules():
    top = {path.name for path in PACKAGE.glob("*.py")}
    assert top == TOP_LEVEL_MODULES, (
        f"give a new module its folder: {sorted(top ^ TOP_LEVEL_MODULES)}"
    )


def test_committed_json_schema_is_the_generated_one():
    from mockagent.cassette import json_schema

    committed = (ROOT / "cassettes" / "schema.json").read_text()
    assert committed == json_schema(), "regenerate: mockagent schema > cassettes/schema.json"


def test_the_protocol_vocabulary_is_written_once():
    # mockagent/vocabulary.py is its one home: a second copy of the card's path or of the record
    # modes drifts from it unseen. Naming one mode (`mode == "all"`) is a use, not a copy, and
    # `("any", "all", "none")` are the list predicates.
    from mockagent.vocabulary import CARD_PATH, RECORD_MODES

    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "vocabulary.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if CARD_PATH in node.value:
                    offenders.append(f"{where} writes the card path")
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if len(words & set(RECORD_MODES)) > 1 and words & {"once", "new_episodes"}:
                    offenders.append(f"{where} lists record modes")
    assert offenders == [], "use mockagent.vocabulary:\n" + "\n".join(offenders)


def test_no_module_calls_a_private_function_of_another():
    # What another module (a test included) calls is part of a module's interface: it is public,
    # so a reader of the module sees that it is used elsewhere. Within its own file a `_name` is
    # free; `self._name()` and `cls._name()` are the class's own.
    private: dict[str, set[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_private(node.name):
                private.setdefault(node.name, set()).add(path)
    offenders = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        others = {"self", "cls"} | other_modules(tree)  # `os._exit` is not ours
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if not (isinstance(owner, ast.Name) and owner.id in others):
                    names.append(node.func.attr)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mockagent"):
                names += [alias.name for alias in node.names]
            for name in names:
                if name in private and path not in private[name]:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {name}")
    assert offenders == [], "\n".join(offenders)


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def other_modules(tree: ast.Module) -> set[str]:
    """The names a module binds to modules that are not mockagent's (`import os`)."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if not alias.name.startswith("mockagent")
    }


def test_a_submodule_imported_from_its_package_is_an_edge_to_it_alone(tmp_path):
    # `from mockagent import errors` imports the module errors; the package runs as its parent,
    # as it does for any submodule. Counted as an edge to the package, every module that names
    # errors so made one circle with mockagent/__init__'s type-only imports (51 modules).
    package = tmp_path / "mockagent"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mockagent.a import A\n"
    )
    (package / "a.py").write_text("from mockagent import b\nclass A: ...\n")
    (package / "b.py").write_text("X = 1\n")
    (package / "c.py").write_text("from mockagent import A, b\n")
    edges = graph(tmp_path)
    assert edges["mockagent.a"] == {"mockagent.b"}
    assert edges["mockagent.c"] == {"mockagent", "mockagent.b"}  # A is the package's own name
    assert circles(edges) == []


def test_no_import_circle():
    # Type-only imports included (tests/helpers/import_graph.py): a module that needs a name of
    # another that needs it back moves the shared part down a layer.
    found = [sorted(name.removeprefix("mockagent.") for name in c) for c in circles(graph())]
    assert found == [], f"an import circle; break it: {found}"
