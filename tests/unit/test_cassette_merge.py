"""Merging two recordings' interactions: the same interaction once, a name clash renamed with its
follow-ups following it, and what another writer added kept with the origins it follows."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mockagent.cassette.locks import (
    KEPT_WRITES,
    lock_file,
    note_written,
    writes_so_far,
    written_since,
)
from mockagent.cassette.merge import merge_interactions, with_origins


def item(name: str, text: str, origin: str | None = None) -> dict[str, Any]:
    match: dict[str, Any] = {"text": text}
    if origin:
        match["task"] = {"state": "TASK_STATE_INPUT_REQUIRED", "from": origin}
    return {"name": name, "match": match, "reply": {"message": text.upper()}, "times": 1}


def test_the_same_interaction_is_kept_once_and_new_ones_follow() -> None:
    base = [item("a", "a"), item("b", "b")]
    merged, renames = merge_interactions(base, [item("b", "b"), item("c", "c")])
    assert merged == [item("a", "a"), item("b", "b"), item("c", "c")]
    assert renames == {}


def test_a_name_clash_renames_the_newcomer_and_its_follow_ups() -> None:
    base = [item("review", "one"), item("answer", "yes", origin="review")]
    new = [
        item("review", "two"),  # another call under the same name
        item("answer", "yes", origin="review"),  # follows *its* review, not base's
        item("review-2", "three"),  # the name a rename would take is in use already
    ]
    merged, renames = merge_interactions(base, new)
    assert [i["name"] for i in merged] == ["review", "answer", "review-3", "answer-2", "review-2"]
    assert merged[3]["match"]["task"]["from"] == "review-3"
    assert renames == {"review": "review-3", "answer": "answer-2"}
    assert new[1]["match"]["task"]["from"] == "review"  # the input is left as it was


def test_what_another_writer_added_is_kept_with_its_origin() -> None:
    now = [item("old", "old"), item("origin", "go"), item("theirs", "new")]
    now.append(item("follow", "on", origin="origin"))
    assert with_origins(now, {"theirs", "follow"}) == now[1:]
    assert with_origins(now, set()) == []


def test_the_log_of_writes_names_what_each_writer_put_in(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    seen = writes_so_far(path)
    note_written(path, ["a"])
    note_written(path, ["b", "c"])
    assert written_since(path, seen) == {"a", "b", "c"}
    assert written_since(path, seen + 1) == {"b", "c"}
    assert written_since(path, seen + 2) == set()
    for n in range(KEPT_WRITES):
        note_written(path, [f"n{n}"])
    assert written_since(path, seen) is None  # forgotten: the caller keeps everything


def test_a_lock_folder_another_user_made_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = tmp_path / f"mockagent-locks-{os.getuid()}"
    folder.mkdir(mode=0o777)
    os.chown(folder, os.getuid() + 1, -1)  # as another user would have made it
    # Before: taken as ours, so that user could hold every lock of our recordings.
    with pytest.raises(PermissionError, match="belongs to another user"):
        lock_file(tmp_path / "c.yaml")
