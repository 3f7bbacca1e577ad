"""`serve`'s store URL from MOCKAGENT_STORE or --store-file (a password on the command line shows
in `ps`), a warning when it is on the command line anyway, and no message that shows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.engine.store.factory import store_from_url

ROOT = Path(__file__).resolve().parents[2]
KIT = str(ROOT / "cassettes" / "kit")
DEAD = "redis://:hunter2@127.0.0.1:1/0"  # nothing listens on port 1
"""A store URL with a password whose server never answers: `serve` stops at its first use."""


def serve(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["serve", KIT, *args], env=env)
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def test_a_password_on_the_command_line_is_warned_about_and_never_shown():
    code, out, err = serve("--store", DEAD)
    assert code == 1  # the store does not answer
    assert "hunter2" not in out + err
    warning = err.splitlines()[0]
    assert "password" in warning and "MOCKAGENT_STORE" in warning and "--store-file" in warning
    assert "cannot use the store at redis://***@127.0.0.1:1/0" in err


def test_the_store_url_comes_from_the_environment_without_a_warning():
    # two workers need a shared store: the one in the environment is it (no "need a shared store")
    code, _, err = serve("--workers", "2", env={"MOCKAGENT_STORE": DEAD})
    assert code == 1 and "cannot use the store at redis://***@127.0.0.1:1/0" in err
    assert "warning" not in err and "hunter2" not in err


def test_the_store_url_comes_from_the_first_line_of_a_file(tmp_path: Path):
    store = tmp_path / "store-url"
    store.write_text(f"  {DEAD}  \nanything after the first line is not read\n")
    store.chmod(0o600)  # only its owner can read it: no warning
    code, _, err = serve("--workers", "2", "--store-file", str(store))
    assert code == 1 and "cannot use the store at redis://***@127.0.0.1:1/0" in err
    assert "warning" not in err and "hunter2" not in err


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o606])
def test_a_store_file_others_can_read_is_warned_about(tmp_path: Path, mode: int):
    store = tmp_path / "store-url"
    store.write_text(DEAD + "\n")
    store.chmod(mode)
    code, _, err = serve("--store-file", str(store))
    assert code == 1  # a warning, not an error: the store is still used (and does not answer)
    warning = err.splitlines()[0]
    assert warning == (
        f"mockagent: warning: --store-file {store} has mode {mode:04o}: its group or other users "
        f"can read or change the store URL (and its password); run chmod 600 {store}"
    )
    assert "hunter2" not in err


def test_the_store_file_wins_over_the_environment(tmp_path: Path):
    store = tmp_path / "store-url"
    store.write_text("postgres://from-the-file\n")
    code, _, err = serve("--store-file", str(store), env={"MOCKAGENT_STORE": DEAD})
    assert code == 2 and "store 'postgres://from-the-file': use memory:" in err


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "no such file"),
        ("", "its first line is empty"),
        ("\n" + DEAD, "its first line is empty"),
        (b"\xff\xfe", "its first line is not UTF-8"),
    ],
    ids=["missing", "empty", "blank first line", "binary"],
)
def test_a_store_file_that_gives_no_url_is_a_usage_error_naming_it(
    tmp_path: Path, content: str | bytes | None, why: str
):
    store = tmp_path / "store-url"
    if isinstance(content, bytes):
        store.write_bytes(content)
    elif content is not None:
        store.write_text(content)
    code, _, err = serve("--store-file", str(store))
    assert code == 2
    assert f"Invalid value for --store-file: {store}: {why}" in err
    assert "hunter2" not in err


def test_store_and_store_file_on_one_command_line_is_a_usage_error(tmp_path: Path):
    store = tmp_path / "store-url"
    store.write_text(DEAD)
    code, _, err = serve("--store", "memory:", "--store-file", str(store))
    assert code == 2 and "give --store or --store-file, not both" in err


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgres://:hunter2@db/0", "postgres://***@db/0"),
        ("postgres://user:hun@ter2@db/0", "postgres://***@db/0"),  # an unencoded @
        ("postgres://:hun/ter2@db/0", "postgres://***@db/0"),  # an unencoded /
        ("postgres://db/0?password=hunter2&db=1", "postgres://db/0?password=***&db=1"),
        ("postgres://db/0", "postgres://db/0"),
    ],
)
def test_messages_about_a_store_url_hide_its_password(url: str, shown: str):
    with pytest.raises(ValueError) as caught:
        store_from_url(url)
    assert f"store {shown!r}" in str(caught.value)
    assert "ter2" not in str(caught.value)
