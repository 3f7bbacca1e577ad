"""Fixtures for the docs tests.

`kit` runs the command line (`mockagent serve cassettes/kit --port 0`) in a subprocess from the
repository root, as `scripts/serve` does: the URLs, the near-miss report's cassette path and the
report logged to stderr are then exactly what a user sees.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.docs import Served, start


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`mockagent serve cassettes/kit` on a free port, from the repository root."""
    served = start(
        ["serve", "cassettes/kit", "--port", "0"], tmp_path_factory.mktemp("kit") / "stderr.log"
    )
    try:
        yield served
    finally:
        served.stop()
