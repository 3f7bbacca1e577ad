"""`verify --update` of an interaction whose lines hold a YAML anchor (tck.yaml's
`&hello-from-tck`, aliased by `default`) refuses, naming the anchor: rewriting it would leave the
alias without its anchor. The cassette is left as it was, and verify exits 1. A drift beside an
anchor is changed in place, as in any cassette."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import serve_in_thread

TCK = Path(__file__).parents[2] / "cassettes" / "conformance" / "tck.yaml"


def test_a_drift_inside_a_yaml_anchor_is_refused_naming_the_anchor(tmp_path: Path) -> None:
    written = TCK.read_text()
    edited = written.replace("message: Hello from TCK", "message: Hello from the TCK")
    assert edited != written
    path = tmp_path / "tck.yaml"
    path.write_text(edited)
    with serve_in_thread(TCK, pace="instant") as agent:
        result = CliRunner().invoke(
            main, ["verify", str(path), "--upstream", agent.url, "--update"]
        )
    # before: "not valid YAML: found undefined alias", blaming the cassette the user wrote
    line = written.splitlines().index("        steps: &hello-from-tck") + 1
    assert (
        f"{path}:{line}: interaction complete-task drifted, but its YAML anchor " in result.output
    )
    assert "`&hello-from-tck`" in result.output and "undefined alias" not in result.output
    assert "cannot be updated in place" in result.output
    assert path.read_text() == edited
    assert result.exit_code == 1


def test_a_drift_beside_an_anchor_is_changed_in_place_steps_and_style_kept(
    tmp_path: Path,
) -> None:
    written = TCK.read_text()
    old = "parts: [{text: Generated text content}]"
    path = tmp_path / "tck.yaml"
    path.write_text(written.replace(old, "parts: [{text: Generated text}]"))
    with serve_in_thread(TCK, pace="instant") as agent:
        result = CliRunner().invoke(
            main, ["verify", str(path), "--upstream", agent.url, "--update"]
        )
    # before: with an anchor anywhere in the file, artifact-text was written anew (flow style
    # and the `startswith` flow mapping gone, every line of it rewritten).
    # The live agent served without delays makes the two streamed `ms` gates 0: that is drift
    assert path.read_text() == (
        written.replace("{ms: 4000}", "{ms: 0}").replace("{ms: 2000}", "{ms: 0}")
    ), result.output
    assert result.exit_code == 0, result.output
