"""Loading big cassettes: the fast construction builds what PyYAML builds, lines are found when
asked for, only aliases count against the node cap, and the garbage collector is left as found."""

from __future__ import annotations

import gc
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockagent.cassette import yaml_reader
from mockagent.cassette.loader import load_cassette, parse_yaml
from mockagent.errors import CassetteError
from tests.helpers.cassette_text import HEADER, cassette
from tests.helpers.yaml_fuzz import YAML_TEXT

LOADERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if yaml.__with_libyaml__ else [])

PIECES = st.sampled_from(
    [
        "a: 1\n",
        "<<: {x: 1}\n",
        "b: &x {c: !!int 1}\n",
        "d: *x\n",
        "e: !!set {a, b}\n",
        "f: !!omap [a: 1]\n",
        "g: [1, 2.5, true, null, 2026-01-01]\n",
        "h: !!bad x\n",
        "i: !!int z\n",
        "=: v\n",
        "j: {<<: [*x], k: 2}\n",
        "? [a]\n: 1\n",
        "l: !!str\n",
        "m: !!binary aGk=\n",
        "n: &r [*r]\n",
        "o: !!float q\n",
        "p: !!map [a]\n",
        "q: !!seq {a: 1}\n",
        "r: !!str {a: 1}\n",
        "s: !!timestamp bad\n",
        "t: [{u: [v, {w: x}]}, y]\n",
    ]
)


def outcome(text: str, loader: Any, fast: bool) -> tuple[Any, ...]:
    try:
        parser = loader(text)
        node = parser.get_single_node()
        if node is None:
            return ("empty",)
        return (
            "data",
            yaml_reader.construct_document(parser, node)
            if fast
            else parser.construct_document(node),
        )
    except (
        yaml.YAMLError,
        ValueError,
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
        RecursionError,
    ) as exc:
        return ("error", type(exc).__name__, str(exc))


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types, keys in the same order; NaN equals NaN; recursion by shape."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(a[k] is a or same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(x is a or same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.lists(PIECES, max_size=10).map("".join) | YAML_TEXT)
def test_fast_construction_builds_what_pyyaml_builds(text: str) -> None:
    for loader in LOADERS:
        fast, slow = outcome(text, loader, True), outcome(text, loader, False)
        assert fast[0] == slow[0] and (
            same(fast[1], slow[1]) if fast[0] == "data" else fast == slow
        )


def test_the_kit_cassettes_construct_alike() -> None:
    for path in sorted((Path(__file__).resolve().parents[2] / "cassettes").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        for loader in LOADERS:
            assert outcome(text, loader, True) == outcome(text, loader, False), path


def test_lines_are_found_when_asked_for_and_match_the_parse(write_cassette) -> None:
    text = cassette("""
        - name: first
          match: {text: hello}
          reply: {message: hi}
    """)
    loaded = load_cassette(write_cassette(text))
    assert "lines" not in vars(loaded)  # not worked out on load
    assert (
        loaded.line_of(("interactions", 0, "match", "text"))
        == text.splitlines().index("    match: {text: hello}") + 1
    )
    assert loaded.lines == parse_yaml(text, "x")[1]


def test_a_big_cassette_without_aliases_is_not_an_alias_bomb(tmp_path: Path) -> None:
    items = ", ".join(
        ["1"] * (yaml_reader.MAX_NODES + 10)
    )  # more nodes than the cap, each written out
    path = tmp_path / "big.yaml"
    path.write_text(
        cassette(f"""
        - name: big
          reply:
            task:
              steps: [{{state: TASK_STATE_COMPLETED}}]
              metadata: {{many: [{items}]}}
    """)
        + "# R&D: an ampersand, so the alias check runs\n",
        encoding="utf-8",
    )
    loaded = load_cassette(path)
    assert loaded.cassette.interactions[0].reply.task.metadata["many"][-1] == 1  # type: ignore[union-attr]


def test_aliases_may_add_only_so_many_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_reader, "MAX_NODES", 50)
    path = tmp_path / "aliases.yaml"
    ten = "[x, x, x, x, x, x, x, x, x, x]"
    path.write_text(
        HEADER.replace(
            "  name: tester", f"  provider: {{a: &a {ten}, b: [*a, *a, *a, *a]}}\n  name: tester"
        )
        + "interactions: []\n",
        encoding="utf-8",
    )
    load_cassette(path)  # 4 aliases add 44 nodes
    path.write_text(
        path.read_text().replace("[*a, *a, *a, *a]", "[*a, *a, *a, *a, *a]"), encoding="utf-8"
    )
    with pytest.raises(CassetteError, match="expand the YAML by more than 50 nodes"):
        load_cassette(path)  # 5 add 55


def test_deep_nesting_is_said_so(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(CassetteError, match="nested too deeply"):
        load_cassette(path)


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize(
    "text", [cassette(), "version: 1\nagent: {name: !!python/name:os.system}\n", "[1, 2]\n"]
)
def test_the_garbage_collector_is_left_as_found(tmp_path: Path, enabled: bool, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        try:
            load_cassette(path)
        except CassetteError:
            pass
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
