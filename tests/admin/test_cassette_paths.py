"""Cassette paths the filesystem refuses (too long, a symlink loop) get a 400 from the admin API
that says why, never a 500. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import shutil

import httpx
import pytest

from mockagent.server.thread import serve_in_thread
from tests.helpers.paths import KIT


@pytest.fixture
def folder(tmp_path):
    shutil.copy(KIT / "deployer.yaml", tmp_path / "deployer.yaml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "loop.yaml").symlink_to("loop.yaml")  # points at itself
    with serve_in_thread(tmp_path) as server:
        yield server


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("a" * 5000 + ".yaml", "File name too long"),
        ("x/" * 3000 + "a.yaml", "File name too long"),
        ("sub/loop.yaml", "a symlink loop"),
    ],
    ids=["long-name", "long-path", "symlink-loop"],
)
def test_a_path_the_filesystem_refuses_is_a_400_saying_why(folder, path, why):
    load = folder.url + "/_mockagent/cassettes/load"
    response = httpx.post(load, json={"path": path, "agent": "other"})
    message = response.json()["error"]["message"]
    assert response.status_code == 400, response.text
    assert f"the filesystem cannot look it up ({why})" in message
    assert len(message) < 200  # the path is cut short, not echoed whole
    again = httpx.post(load, json={"path": "deployer.yaml", "agent": "other"})
    assert again.status_code == 200, again.text
