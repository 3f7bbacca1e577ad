"""Every problem of a cassette at once, each with file:line: the loader, `lint`, `serve` and the
admin API's cassette load report them all, so a user fixes a cassette in one round."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mockagent.cassette import load_cassette
from mockagent.cli.main import main
from mockagent.errors import CassetteError
from mockagent.lint.run import lint_file
from mockagent.server.app import create_app
from tests.helpers.cassette_text import cassette, line_of

THREE = cassette("""
    - name: first
      times: 0
      reply: {mesage: hi}
    - name: second
      reply:
        task:
          step:
            - state: TASK_STATE_WORKING
    - name: third
      reply:
        task:
          steps:
            - state: TASK_STATE_WORKNG
""")
"""Three mistakes (and a fourth: `times: 0`), one of them a typo that leaves `steps` missing."""

PROBLEMS = [
    ("mesage", "interaction 'first' (#1): reply.mesage: unknown field; did you mean 'message'?"),
    ("step:", "interaction 'second' (#2): reply.task.step: unknown field; did you mean 'steps'?"),
    ("times: 0", "interaction 'first' (#1): times: Input should be greater than or equal to 1"),
    (
        "WORKNG",
        "interaction 'third' (#3): reply.task.steps[0].state: unknown task state "
        "'TASK_STATE_WORKNG'; did you mean 'TASK_STATE_WORKING'?",
    ),
]
"""Where each problem is (a needle of its line) and what it says: unknown keys first (the field a
typo meant is not reported missing), then the others in the file's order."""


def _write(tmp_path: Path, text: str = THREE) -> Path:
    path = tmp_path / "three.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _expected(path: Path) -> list[str]:
    return [f"{path}:{line_of(THREE, needle)}: {message}" for needle, message in PROBLEMS]


def _load_error(path: Path) -> CassetteError:
    try:
        load_cassette(path)
    except CassetteError as exc:
        return exc
    raise AssertionError("the cassette loaded")


def test_the_loader_reports_every_problem_with_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path)
    error = _load_error(path)
    assert str(error).splitlines() == _expected(path)
    assert [(p.path, p.line, p.message) for p in error.problems] == [
        (str(path), line_of(THREE, needle), message) for needle, message in PROBLEMS
    ]
    # the first problem, as before: path, line and message
    assert (error.path, error.line, error.message) == (
        str(path),
        line_of(THREE, "mesage"),
        PROBLEMS[0][1],
    )
    assert "more problem" not in str(error)


def test_one_problem_reads_as_before(tmp_path: Path) -> None:
    text = cassette("""
        - name: only
          times: 0
          reply: {message: hi}
    """)
    error = _load_error(_write(tmp_path, text))
    assert str(error) == (
        f"{error.path}:{line_of(text, 'times')}: interaction 'only' (#1): times: "
        "Input should be greater than or equal to 1"
    )
    assert len(error.problems) == 1


def test_lint_gives_a_load_error_finding_per_problem(tmp_path: Path) -> None:
    path = _write(tmp_path)
    findings = lint_file(path)
    assert [(f.line, f.code, f.message) for f in findings] == [
        (line_of(THREE, needle), "load-error", message) for needle, message in PROBLEMS
    ]
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert result.exit_code == 1
    assert "4 findings in 1 cassette" in result.output
    for needle, message in PROBLEMS:
        assert f"{path}:{line_of(THREE, needle)}: load-error {message}" in result.output


def test_serve_prints_every_problem(tmp_path: Path) -> None:
    path = _write(tmp_path)
    result = CliRunner().invoke(main, ["serve", str(path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    for line in _expected(path):
        assert f"mockagent: {line}\n" in result.output


def test_the_admin_api_load_reports_every_problem(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "good.yaml").write_text(cassette(), encoding="utf-8")
    client = create_app(folder).test_client()
    path = _write(folder)  # after the start, which would refuse it
    answer = client.post("/_mockagent/cassettes/load", json={"path": "three.yaml"})
    assert answer.status_code == 400
    message = answer.get_json()["error"]["message"]
    for line in _expected(path):
        assert line in message


def test_the_name_rules_are_checked_beside_other_problems(tmp_path: Path) -> None:
    # the models check names only where all else is valid: a typo must not hide them
    text = cassette("""
        - name: twin
          reply: {mesage: hi}
        - name: twin
          reply: {message: hi}
        - name: follow
          match: {task: {from: nobody}}
          reply: {message: ok}
    """)
    error = _load_error(_write(tmp_path, text))
    assert [(p.line, p.message) for p in error.problems] == [
        (
            line_of(text, "mesage"),
            "interaction 'twin' (#1): reply.mesage: unknown field; did you mean 'message'?",
        ),
        (
            line_of(text, "message: hi}") - 1,  # its `- name: twin`
            "interaction 'twin' (#2): name: two interactions are named 'twin'",
        ),
        (
            line_of(text, "nobody"),
            "interaction 'follow' (#3): match.task.from: names 'nobody', which is no interaction "
            "of this cassette; use one of follow, twin",
        ),
    ]


def test_the_name_rules_alone_are_reported_once(tmp_path: Path) -> None:
    text = cassette("""
        - name: twin
          reply: {message: a}
        - name: twin
          reply: {message: b}
    """)
    error = _load_error(_write(tmp_path, text))
    assert [p.message for p in error.problems] == [
        "interaction 'twin' (#2): name: two interactions are named 'twin'"
    ]


def test_posted_interactions_report_every_problem(tmp_path: Path) -> None:
    """`POST /_mockagent/interactions` validates as the loader does: both mistakes, not the first
    with "(and 1 more problem)"."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "good.yaml").write_text(cassette(), encoding="utf-8")
    client = create_app(folder).test_client()
    body = "- name: one\n  reply: {mesage: hi}\n- name: two\n  times: 0\n  reply: {message: hi}\n"
    answer = client.post(
        "/_mockagent/interactions?agent=good", data=body, content_type="application/yaml"
    )
    assert answer.status_code == 400, answer.get_json()
    message = answer.get_json()["error"]["message"]
    assert "more problem" not in message
    assert "interaction 'one' (#1): reply.mesage: unknown field; did you mean 'message'?" in message
    assert "interaction 'two' (#2): times: Input should be greater than or equal to 1" in message
    assert "body:2:" in message and "body:4:" in message


def test_the_agent_option_reports_every_problem(tmp_path: Path) -> None:
    from mockagent.engine.no_cassette import agent_without_cassette

    try:
        agent_without_cassette(tmp_path / "x.yaml", {"nmae": "x", "capabilities": {"streeming": 1}})
    except CassetteError as exc:
        lines = str(exc).splitlines()
    else:
        raise AssertionError("agent= with two unknown fields loaded")
    assert sorted(lines) == [
        "agent= option: agent.capabilities.streeming: unknown field; did you mean 'streaming'?",
        "agent= option: agent.nmae: unknown field; did you mean 'name'?",
    ]
