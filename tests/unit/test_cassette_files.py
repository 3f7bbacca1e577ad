"""Reading cassette files: regular files only (a FIFO, a device or a pipe is refused before any
read, without blocking), and a size cap (default 20 MB, `--max-cassette-size`, the environment)
that is never read past."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mockagent.cassette import load_cassette, load_folder
from mockagent.cassette.files import DEFAULT_MAX_SIZE, ENV, parse_size, show_size
from mockagent.cli.main import main
from mockagent.errors import CassetteError
from mockagent.lint.run import lint
from mockagent.server.app import create_app
from tests.helpers.cassette_text import cassette

BOUND_S = 20.0  # a refusal takes milliseconds; a read that blocks never ends

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


@pytest.fixture(autouse=True)
def no_cap_set(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The CLI option exports the cap to the environment (for serve's workers): undo that after
    # each test. monkeypatch alone does not: a delenv of an unset variable records nothing, so a
    # `--max-cassette-size 1k` leaked into later tests of the process (test_schema failed so).
    monkeypatch.delenv(ENV, raising=False)
    yield
    os.environ.pop(ENV, None)


def refusal(load: Callable[[], Any]) -> str:
    """The CassetteError message `load()` raises, within BOUND_S (a thread: a FIFO's open
    would block the test itself)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["loaded"] = load()
        except CassetteError as exc:
            out["error"] = str(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(BOUND_S)
    assert not worker.is_alive(), "the load blocked"
    assert "error" in out, f"loaded: {out.get('loaded')!r}"
    return str(out["error"])


@pytest.fixture
def fifo(tmp_path: Path) -> Any:
    path = tmp_path / "piped.yaml"
    os.mkfifo(path)
    yield path
    try:  # a reader still blocked in open() gets its end of file
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # nobody reads it: all is well


def test_a_fifo_is_refused_without_blocking(fifo: Path) -> None:
    message = refusal(lambda: load_cassette(fifo))
    assert message.startswith(f"{fifo}: cannot read cassette: not a regular file but a pipe")


def test_a_fifo_in_a_served_folder_is_refused_without_blocking(fifo: Path) -> None:
    (fifo.parent / "fine.yaml").write_text(cassette(), encoding="utf-8")
    message = refusal(lambda: load_folder(fifo.parent))
    assert f"{fifo}: cannot read cassette: not a regular file" in message


def test_a_process_substitution_is_refused() -> None:
    read, write = os.pipe()  # what `<(…)` hands a command: /dev/fd/N, a pipe
    try:
        os.write(write, cassette().encode())
        message = refusal(lambda: load_cassette(f"/dev/fd/{read}"))
    finally:
        os.close(read)
        os.close(write)
    assert "not a regular file but a pipe" in message


def test_a_symlink_to_dev_zero_is_refused_before_any_read(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")  # read whole, it grew to 13 GB
    message = refusal(lambda: load_cassette(link))
    assert message == f"{link}: cannot read cassette: not a regular file but a character device"


def test_lint_reports_a_fifo_in_a_folder_instead_of_skipping_it(fifo: Path) -> None:
    findings = lint(fifo.parent)
    assert [(f.path, f.code) for f in findings] == [(str(fifo), "load-error")]
    assert "not a regular file but a pipe" in findings[0].message


# -- the size cap ---------------------------------------------------------------------------------


def big_cassette(tmp_path: Path, size: int) -> Path:
    """A valid cassette of at least `size` bytes (a long description)."""
    text = cassette()
    padding = max(0, size - len(text))
    path = tmp_path / "big.yaml"
    path.write_text(text.replace("A test agent.", "A test agent." + "x" * padding), "utf-8")
    return path


def test_the_default_cap_is_20_mb() -> None:
    assert DEFAULT_MAX_SIZE == 20 * 1024 * 1024
    assert show_size(DEFAULT_MAX_SIZE) == "20 MB"


def test_a_cassette_over_the_cap_is_refused_naming_file_size_and_option(tmp_path: Path) -> None:
    path = big_cassette(tmp_path, 3000)
    size = path.stat().st_size
    with pytest.raises(CassetteError) as info:
        load_cassette(path, max_size=2048)
    assert str(info.value) == (
        f"{path}: the cassette is {show_size(size)} ({size} bytes), more than the 2 KB a "
        f"cassette may have: raise the cap with --max-cassette-size (or the {ENV} "
        "environment variable)"
    )
    assert load_cassette(path, max_size=size).cassette.agent.name == "tester"  # at the cap: read


def test_the_environment_sets_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = big_cassette(tmp_path, 3000)
    load_cassette(path)
    monkeypatch.setenv(ENV, "2KB")
    with pytest.raises(CassetteError, match="more than the 2 KB a cassette may have"):
        load_cassette(path)
    monkeypatch.setenv(ENV, "lots")
    with pytest.raises(CassetteError, match=f"^{ENV}: 'lots' is not a size"):
        load_cassette(path)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_the_read_stops_past_the_cap_when_the_size_stat_gives_is_wrong() -> None:
    # /proc files say they are 0 bytes long: the read itself must stop
    with pytest.raises(CassetteError, match="the cassette is over 4 bytes, more than the 4 bytes"):
        load_cassette("/proc/self/environ", max_size=4)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1048576", 1048576),
        ("20MB", 20 * 1024**2),
        ("512k", 512 * 1024),
        ("1.5G", 3 * 1024**3 // 2),
    ],
)
def test_sizes_are_bytes_or_a_number_with_a_unit(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_lint_takes_the_option_and_names_it_when_a_cassette_is_over(tmp_path: Path) -> None:
    path = big_cassette(tmp_path, 3000)
    result = CliRunner().invoke(main, ["lint", "--max-cassette-size", "2KB", str(path)])
    assert result.exit_code == 1, result.output
    assert "load-error the cassette is 2.9 KB" in result.output
    assert "raise the cap with --max-cassette-size" in result.output
    assert (
        CliRunner().invoke(main, ["lint", "--max-cassette-size", "3MB", str(path)]).exit_code == 0
    )


def test_serve_refuses_a_cassette_over_the_cap_before_it_listens(tmp_path: Path) -> None:
    path = big_cassette(tmp_path, 3000)
    result = CliRunner().invoke(
        main, ["serve", "--port", "0", "--max-cassette-size", "1k", str(path)]
    )
    assert result.exit_code == 2
    assert f"mockagent: {path}: the cassette is 2.9 KB" in result.output


def test_a_bad_size_option_is_a_usage_error(tmp_path: Path) -> None:
    path = big_cassette(tmp_path, 10)
    result = CliRunner().invoke(main, ["lint", "--max-cassette-size", "huge", str(path)])
    assert result.exit_code == 2
    assert "'huge' is not a size" in result.output


def test_the_admin_api_loads_under_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "small.yaml").write_text(cassette(), encoding="utf-8")
    big_cassette(tmp_path, 3000)
    client = create_app(tmp_path / "small.yaml").test_client()
    monkeypatch.setenv(ENV, "2KB")
    response = client.post("/_mockagent/cassettes/load", json={"path": "big.yaml"})
    assert response.status_code == 400
    assert "more than the 2 KB a cassette may have" in response.get_json()["error"]["message"]
