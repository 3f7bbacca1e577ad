"""docs/reference: the command line page shows each command's `--help` as the installed command
prints it, and the errors page's table is the server's own error table."""

from __future__ import annotations

import re

from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.dialects.a2a.error_table import TABLES
from mockagent.testing.options import CHECKS, FLAGS
from tests.helpers.docs import every_block, page


def help_text(*args: str) -> str:
    """What `mockagent ARGS --help` prints, at the width the page shows (80 columns)."""
    result = CliRunner().invoke(main, [*args, "--help"], prog_name="mockagent", terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_cli_page_shows_every_commands_help_as_it_is() -> None:
    shown = {b.text.splitlines()[0]: b.text for b in every_block("docs/reference/cli.md", "text")}
    expected = [help_text()] + [help_text(name) for name in sorted(main.commands)]
    assert sorted(shown.values()) == sorted(expected), (
        "regenerate the help blocks of docs/reference/cli.md: a `--help` changed"
    )
    assert len(shown) == len(main.commands) + 1


def test_the_errors_page_table_is_the_servers() -> None:
    rows = re.findall(
        r"^\| `(\w+)` \| (-\d+) \| `?([A-Z_]+|\(none\))`? \| (\d+) \| `(\w+)` \| (.+) \|$",
        page("docs/reference/errors.md").text,
        re.M,
    )
    new, old = TABLES["1.0.1"], TABLES["1.0.0"]
    assert [row[0] for row in rows] == list(new)
    for kind, code, reason, http, status, before in rows:
        row = new[kind]
        assert (int(code), reason, int(http), status) == (
            row.code,
            row.reason or "(none)",
            row.http,
            row.status,
        ), kind
        changed = [f"HTTP {old[kind].http}"] if old[kind].http != row.http else []
        changed += [f"`{old[kind].status}`"] if old[kind].status != row.status else []
        assert before == (", ".join(changed) or "the same"), kind


def test_the_pytest_page_lists_every_option() -> None:
    rows = re.findall(
        r"^\| (`.+?) \| (`--mockagent-[\w-]+`)? ?\| .+ \|$", page("docs/pytest.md").text, re.M
    )
    named = [
        name for keywords, _ in rows for name in re.findall(r"`(\w+)`", keywords.split("(")[0])
    ]
    assert sorted(named) == sorted(CHECKS), "docs/pytest.md's option table and the plugin's differ"
    assert sorted(flag.strip("`") for _, flag in rows if flag) == sorted(FLAGS)
