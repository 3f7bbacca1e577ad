"""The shape of mockagent's module import graph, measured from the source with `ast` alone.

Run `python -m tests.helpers.import_graph` for the figures issue 27 tracks: the modules at the
top of mockagent/, the import depth (levels of the graph once circles are collapsed) and the
import circles (strongly connected components), with and without imports only made for type
checking. tests/test_architecture.py fails on any circle.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "mockagent"

Graph = dict[str, set[str]]


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, not `__init__`)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def is_type_checking(test: ast.expr) -> bool:
    """Whether an `if` guards type checking only (`if TYPE_CHECKING:` or `typing.TYPE_CHECKING`)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(tree: ast.AST, typing_too: bool) -> Iterable[tuple[str, ...]]:
    """What a module imports, each import as the dotted names it may be, first choice first; with
    `typing_too` False, skip `if TYPE_CHECKING:` ones."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and is_type_checking(node.test) and not typing_too:
            yield from (name for child in node.orelse for name in imported_names(child, False))
            continue
        if isinstance(node, ast.Import):
            yield from ((alias.name,) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # `from mockagent.engine import store` imports the submodule store (the package
            # runs as its parent, as for any submodule); `from mockagent.engine import Engine`
            # takes a name the package itself binds
            yield from ((f"{node.module}.{alias.name}", node.module) for alias in node.names)
        yield from imported_names(node, typing_too)


def graph(root: Path = ROOT, typing_too: bool = True) -> Graph:
    """Module -> the package's modules it names in an import (`a.b.c` is an edge to it alone)."""
    found = modules(root)
    edges: Graph = {name: set() for name in found}
    for name, path in found.items():
        for choices in imported_names(ast.parse(path.read_text(encoding="utf-8")), typing_too):
            # the parent packages an import also runs are left out: every submodule would
            # otherwise make a circle with a package __init__ that re-exports it
            imported = next((choice for choice in choices if choice in found), None)
            if imported is not None and imported != name:
                edges[name].add(imported)
    return edges


def circles(edges: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm, iterative: a deep graph must not hit the recursion limit
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def longest_chain(edges: Graph) -> list[str]:
    """The longest import chain, importer first, each circle counted as one (named by its first
    member): the modules to look at to make the graph shallower."""
    component = {node: node for node in edges}
    for members in circles(edges):
        for member in members:
            component[member] = members[0]
    collapsed: Graph = {node: set() for node in set(component.values())}
    for node, targets in edges.items():
        collapsed[component[node]].update(
            component[t] for t in targets if component[t] != component[node]
        )
    chains: dict[str, list[str]] = {}

    def chain(node: str) -> list[str]:
        if node not in chains:
            below = max((chain(t) for t in sorted(collapsed[node])), key=len, default=[])
            chains[node] = [node, *below]
        return chains[node]

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(collapsed)))
    return max((chain(node) for node in sorted(collapsed)), key=len, default=[])


def depth(edges: Graph) -> int:
    """Levels of the graph: modules on its longest import chain, each circle counted as one."""
    return len(longest_chain(edges))


def top_modules(root: Path = ROOT) -> list[str]:
    """The .py files directly in mockagent/."""
    return sorted(path.name for path in (root / PACKAGE).glob("*.py"))


def report(root: Path = ROOT) -> str:
    """The figures, as the commit messages of issue 27 quote them."""
    full, runtime = graph(root), graph(root, typing_too=False)
    lines = [
        f"modules: {len(full)}; at the top of mockagent/: {len(top_modules(root))} "
        f"({', '.join(top_modules(root))})",
        f"import depth: {depth(full)} levels ({depth(runtime)} without TYPE_CHECKING imports)",
        f"  longest chain: {' > '.join(longest_chain(full))}",
    ]
    for label, edges in (("", full), (" without TYPE_CHECKING imports", runtime)):
        found = circles(edges)
        lines.append(f"circles{label}: {len(found)}")
        lines += [f"  {len(members)}: {' '.join(members)}" for members in found]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
