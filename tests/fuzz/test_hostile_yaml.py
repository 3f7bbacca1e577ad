"""Hostile cassette YAML: tags that construct Python objects are refused, nothing runs, and any
text at all is either a cassette or a CassetteError (never another exception)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from mockagent.cassette.loader import load_cassette
from mockagent.errors import CassetteError
from tests.helpers.yaml_fuzz import YAML_TEXT

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


def _write(tmp_path: Path, text: str, name: str = "hostile.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "payload",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/apply:subprocess.check_output [['touch', '{marker}']]",
        "!!python/object/new:os.system ['touch {marker}']",
        "!!python/name:os.system",
        "!!python/module:os",
        "!!python/object:pathlib.Path {{}}",
        "!<tag:yaml.org,2002:python/object/apply:os.system> ['touch {marker}']",
        "!!binary aGVsbG8=",  # safe, but not a string: the schema refuses it
        "!custom {{a: 1}}",
    ],
)
@pytest.mark.parametrize("where", ["top", "agent", "reply"])
def test_object_constructing_tags_are_refused(tmp_path, payload, where):
    marker = tmp_path / "executed"
    value = payload.format(marker=marker)
    text = {
        "top": f"{value}\n",
        "agent": f"version: 1\nagent:\n  name: {value}\ninteractions: []\n",
        "reply": (
            "version: 1\nagent: {name: a, description: d, skills: []}\ninteractions:\n"
            f"  - name: x\n    reply: {{message: {value}}}\n"
        ),
    }[where]
    with pytest.raises(CassetteError):
        load_cassette(_write(tmp_path, text))
    assert not marker.exists()


def test_billion_laughs_is_refused(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    with pytest.raises(CassetteError):
        load_cassette(_write(tmp_path, "\n".join(lines) + "\n"))


def test_deep_nesting_is_refused(tmp_path):
    with pytest.raises(CassetteError):
        load_cassette(_write(tmp_path, "[" * 20_000 + "]" * 20_000 + "\n"))


def test_bad_utf8_is_refused(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"version: 1\nagent: {name: \xff\xfe}\n")
    with pytest.raises(CassetteError):
        load_cassette(path)


@pytest.mark.parametrize(
    "text",
    [
        "!!timestamp x\n",
        "version: !!int abc\n",
        "a: !!float x\n",
        "!!bool x\n",
        "{!!timestamp x: 1}\n",
        "!!int\n",
    ],
)
def test_bad_explicit_scalar_tags_are_a_cassette_error(tmp_path, text):
    with pytest.raises(CassetteError):
        load_cassette(_write(tmp_path, text))


@pytest.mark.parametrize("text", ["\x1f", "version: 1\x00\n", "agent: {name: \x07}\n"])
def test_unprintable_characters_are_a_cassette_error(tmp_path, text):
    with pytest.raises(CassetteError):
        load_cassette(_write(tmp_path, text))


@FUZZ
@given(text=YAML_TEXT)
def test_any_text_loads_or_is_a_cassette_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("y") / "fuzz.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_cassette(path)
    except CassetteError:
        pass
