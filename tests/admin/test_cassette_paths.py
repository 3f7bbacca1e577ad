"""Cassette paths the filesystem refuses (too long, a symlink loop) or that name no regular file
(a FIFO, a device, a folder) get a 400 from the admin API that says why, never a 500, a 404 or a
hang. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import os
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
    os.mkfifo(tmp_path / "sub" / "pipe.yaml")
    (tmp_path / "sub" / "folder.yaml").mkdir()
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


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("sub/pipe.yaml", "a pipe (a FIFO"),
        ("sub/folder.yaml", "a folder"),
    ],
)
def test_a_path_that_is_no_regular_file_is_a_400_saying_what_it_is(folder, path, kind):
    load = folder.url + "/_mockagent/cassettes/load"
    response = httpx.post(load, json={"path": path, "agent": "other"}, timeout=10)
    assert response.status_code == 400, response.text
    assert f"path {path!r} is not a regular file but {kind}" in response.json()["error"]["message"]
