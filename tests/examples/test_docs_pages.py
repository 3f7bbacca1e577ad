"""The pages as a whole: every code block of README.md and docs/**/*.md is claimed by a test, every
relative link resolves to a file (and a heading, for an anchor), and every YAML block loads as
(part of) a cassette. `scripts/docs` (mkdocs build --strict, in CI) checks the rest of the site."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.cassette import json_schema, load_cassette
from mockagent.cassette.loader import schema_comment
from tests.helpers.cassette_text import HEADER
from tests.helpers.docs import FENCE, ROOT, Block, block, blocks, mockagent_command, page, pages

OUTPUT_ONLY = {
    ("docs/recording.md", "text", "ok what-time-is-it"): (
        "the shape of verify's report, from several cassettes at once; each line is checked by "
        "tests/recording's verify tests"
    ),
}
"""Blocks no test runs, each with the reason: pure output listings that no single run prints."""

NOT_CASSETTES = {
    ("docs/serving.md", "healthcheck:"): "a docker-compose file: test_docs_probes.py checks it",
    ("docs/serving.md", "readinessProbe:"): "a Kubernetes Deployment: test_docs_probes.py too",
}
"""YAML blocks that are no part of a cassette, each with the test that checks it instead."""


def claims() -> Iterator[tuple[str, str | None, str, str | None]]:
    """(test file, page or None for every page, lang, line or None for every block) of each
    `block("PAGE", "LANG", "LINE")`, `every_block("PAGE", "LANG")` and `blocks("LANG")` call in
    the tests, read from their sources."""
    for path in sorted((ROOT / "tests").rglob("*.py")):
        source = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if len(args) != len(node.args) or not all(isinstance(a, str) for a in args):
                continue
            if name == "block" and len(args) == 3 and args[0].endswith(".md"):
                yield source, args[0], args[1], args[2]
            elif name == "every_block" and len(args) == 2:
                yield source, args[0], args[1], None
            elif name == "blocks" and len(args) == 1:
                yield source, None, args[0], None


def claimed_by(shown: Block, found: list[tuple[str, str | None, str, str | None]]) -> list[str]:
    return [
        test
        for test, where, lang, line in found
        if where in (None, shown.page)
        and lang == shown.lang
        and (line is None or line in shown.text)
    ]


def test_every_code_block_is_claimed_by_a_test() -> None:
    found = list(claims())
    assert found, "no claims found: has the lookup been renamed?"
    allowed = {(p, lang, line) for p, lang, line in OUTPUT_ONLY}
    unclaimed = [
        f"{shown.where}: ```{shown.lang} {shown.text.splitlines()[0][:60]!r}"
        for shown in blocks()
        if not claimed_by(shown, found)
        and not any(
            (p, lang) == (shown.page, shown.lang) and line in shown.text
            for p, lang, line in allowed
        )
    ]
    assert unclaimed == [], (
        "give each block a test that runs it (block(PAGE, LANG, LINE) in tests/), or, for a pure "
        "output listing, an OUTPUT_ONLY entry with the reason:\n" + "\n".join(unclaimed)
    )


ANY_FENCE = re.compile(r"^ *(```|~~~)")


def test_every_fence_is_one_the_block_reader_sees() -> None:
    """A `~~~` fence or a fence with attributes (`title=`) would hide its block from the claim
    check above: the pages use plain backtick fences with a language tag only."""
    hidden = [
        f"{where}:{number}: {line.strip()}"
        for where in pages()
        for number, line in enumerate((ROOT / where).read_text().splitlines(), start=1)
        if ANY_FENCE.match(line) and not FENCE.match(line)
    ]
    assert hidden == []


def test_every_output_only_block_exists() -> None:
    for (where, lang, line), reason in OUTPUT_ONLY.items():
        assert page(where).block(lang, line) and reason
    for (where, line), reason in NOT_CASSETTES.items():
        assert page(where).block("yaml", line) and reason


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|href=\"([^\"]+)\"")
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def without_blocks(text: str) -> str:
    """The page without its fenced blocks (a `# comment` in one is no heading)."""
    return re.sub(r"^( *)```.*?^\1```$", "", text, flags=re.S | re.M)


def prose(text: str) -> str:
    """The page without its code: fenced blocks and inline code spans cannot hold links."""
    return re.sub(r"`[^`\n]*`", "", without_blocks(text))


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs (Python-Markdown's toc) and GitHub make it."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in HEADING.findall(without_blocks(path.read_text(encoding="utf-8")))}


def broken_links() -> list[tuple[str, str, str]]:
    """(page, link, target from the root) of each relative link that does not resolve."""
    broken = []
    for where in pages():
        for match in LINK.finditer(prose(page(where).text)):
            link = match.group(1) or match.group(2)
            if re.match(r"[a-z]+:", link):
                continue  # https:, mailto:: not this repository's
            target, _, anchor = link.partition("#")
            path = (ROOT / where).parent / target if target else ROOT / where
            shown = path.resolve().relative_to(ROOT).as_posix()
            if not path.exists():
                broken.append((where, link, shown))
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append((where, link, f"{shown}#{anchor}"))
    return broken


def test_every_relative_link_resolves() -> None:
    broken = broken_links()
    assert broken == [], "\n".join(
        f"{where}: ({link}) → {target}" for where, link, target in broken
    )


def test_the_link_check_finds_a_broken_link_and_anchor() -> None:
    # the check itself: a page with a missing file and a missing heading
    text = "[a](missing.md) [b](cassettes.md#no-such-heading) [c](cassettes.md#faults) `[d](x.md)`"
    page.cache_clear()
    try:
        page("docs/cassettes.md")  # read the real one first, then swap the text
        page("docs/cassettes.md").text = text
        found = [
            (link, target) for where, link, target in broken_links() if where == "docs/cassettes.md"
        ]
    finally:
        page.cache_clear()
    assert found == [
        ("missing.md", "docs/missing.md"),
        ("cassettes.md#no-such-heading", "docs/cassettes.md#no-such-heading"),
    ]


def fragment_cassette(shown: Block, data: Any) -> str:
    """A whole cassette around a YAML block: the block itself, or HEADER with the interactions,
    `agent:` facts or other sections it shows. The pages' placeholders (`[…]` for a script left
    out, an empty `reply:` standing for the recorded one) become one COMPLETED step."""
    done = {"task": {"steps": [{"state": "TASK_STATE_COMPLETED"}]}}
    if isinstance(data, dict) and "version" in data:
        return shown.text
    cassette = yaml.safe_load(HEADER)
    if shown.page == "docs/agentex.md":  # Agentex's interactions name the agent `worker`
        cassette = {"version": 1, "protocol": "agentex", "agents": [{"id": "w", "name": "worker"}]}
    if isinstance(data, list):
        data = {"interactions": data}
    for key, value in data.items():
        if key == "agent":
            cassette["agent"].update(value)
        else:
            cassette[key] = value
    interactions = cassette.setdefault("interactions", [])
    named = {i["name"] for i in interactions}
    for interaction in list(interactions):  # a follow-up's origin the block leaves out
        origin = (interaction.get("match") or {}).get("task") or {}
        if isinstance(origin, dict) and origin.get("from") not in (None, *named):
            state = origin.get("state", "TASK_STATE_INPUT_REQUIRED")
            steps = [{"state": state[0] if isinstance(state, list) else state}]
            stub = {"name": origin["from"], "match": {"text": origin["from"]}}
            interactions.insert(0, {**stub, "reply": {"task": {"steps": steps}}})
            named.add(origin["from"])
    for interaction in interactions:
        if interaction.get("reply", done) is None:
            interaction["reply"] = done
        if interaction.get("reply", {}).get("task", {}).get("steps") == ["…"]:
            interaction["reply"] = done
    return yaml.safe_dump(cassette, sort_keys=False)


def test_every_yaml_block_loads_as_part_of_a_cassette(tmp_path: Path) -> None:
    schema_line = "# yaml-language-server: $schema=../schema.json\n"
    for shown in blocks("yaml"):
        data = yaml.safe_load(shown.text)
        if any(where == shown.page and line in shown.text for where, line in NOT_CASSETTES):
            continue
        if data is None:  # only a comment: the first line of the kit's cassettes
            assert shown.text == schema_line, shown.where
            for kit in sorted((ROOT / "cassettes" / "kit").glob("*.yaml")):
                assert kit.read_text(encoding="utf-8").startswith(schema_line), kit
            continue
        path = tmp_path / f"{shown.page.replace('/', '-')}-{shown.line}.yaml"
        path.write_text(fragment_cassette(shown, data), encoding="utf-8")
        try:
            load_cassette(path)
        except Exception as error:  # noqa: BLE001 - the message names the block
            pytest.fail(f"{shown.where}: does not load: {error}")


def test_the_schema_page_includes_the_installed_schema() -> None:
    shown = block(
        "docs/reference/cassette-schema.md", "json", '--8<-- "mockagent/cassette/schema.json"'
    )
    included = ROOT / shlex.split(shown.text.removeprefix("--8<--"))[0]
    assert included.read_text(encoding="utf-8") == json_schema()


def test_the_schema_command_gives_a_project_the_line_its_recordings_get(tmp_path: Path) -> None:
    """The schema page's command, run in a project: a cassette written in a folder under it points
    at that copy by the line the page shows (not at the installed package's)."""
    shown = block(
        "docs/reference/cassette-schema.md", "sh", "mockagent schema > cassettes/schema.json"
    )
    argv = shlex.split(shown.text, comments=True)
    assert argv == ["mockagent", "schema", ">", "cassettes/schema.json"]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "cassettes").mkdir()
    printed = subprocess.run(
        [mockagent_command(), "schema"], capture_output=True, text=True, check=True
    ).stdout
    (tmp_path / argv[3]).write_text(printed, encoding="utf-8")
    assert printed == json_schema()
    line = block("docs/reference/cassette-schema.md", "yaml", "$schema=../schema.json").text
    assert schema_comment(tmp_path / "cassettes" / "kit" / "my-agent.yaml") == line


def test_the_hostile_input_commands_name_tests_that_exist() -> None:
    shown = block("docs/serving.md", "sh", "scripts/test tests/fuzz").text
    commands = [shlex.split(line, comments=True) for line in shown.splitlines()]
    assert [argv[0] for argv in commands] == ["scripts/test", "scripts/test"]
    assert all((ROOT / argv[1]).exists() for argv in commands), commands
    # the second selects the corpus against `serve`: the module's server fixture is parametrized
    # by it (collecting the module to prove it takes seconds)
    corpus = (ROOT / commands[1][1]).read_text(encoding="utf-8")
    assert commands[1][2:] == ["-k", "serve"]
    assert 'params=["serve", "fixture"]' in corpus
