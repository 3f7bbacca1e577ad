"""Names with a control character (a newline, an escape) are refused by the admin API with a 400
that names the field, as the loader refuses them in a cassette. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import shutil

import httpx
import pytest

from mockagent.server.admin.control import ControlError, advance_clock
from mockagent.server.thread import serve_in_thread
from tests.helpers.paths import KIT

NAMES = ["deploy\nnow", "deploy\r\n[INFO] forged", "red\x1b[31m", "nul\x00", "c1\x85"]


@pytest.fixture
def folder(tmp_path):
    shutil.copy(KIT / "deployer.yaml", tmp_path / "deployer.yaml")
    with serve_in_thread(tmp_path) as server:
        yield server, tmp_path


@pytest.mark.parametrize("name", NAMES)
def test_an_added_interaction_named_with_a_control_character_is_a_400(folder, name):
    server, _ = folder
    added = httpx.post(
        server.url + "/_mockagent/interactions?agent=deployer",
        json={"name": name, "reply": {"message": "hi"}},
    )
    assert added.status_code == 400, added.text
    assert "name: a name holds no control characters" in added.json()["error"]["message"]
    listed = httpx.get(server.url + "/_mockagent/interactions").json()
    assert name not in str(listed)


@pytest.mark.parametrize("name", NAMES)
def test_a_loaded_cassette_whose_agent_name_has_one_is_a_400(folder, name):
    server, path = folder
    text = (KIT / "deployer.yaml").read_text(encoding="utf-8")
    escaped = name.encode("unicode_escape").decode("ascii").replace('"', '\\"')
    (path / "sub").mkdir(exist_ok=True)
    (path / "sub" / "bad.yaml").write_text(
        text.replace("  name: deployer\n", f'  name: "{escaped}"\n', 1), encoding="utf-8"
    )
    loaded = httpx.post(
        server.url + "/_mockagent/cassettes/load", json={"path": "sub/bad.yaml", "agent": "bad"}
    )
    assert loaded.status_code == 400, loaded.text
    assert "agent.name: a name holds no control characters" in loaded.json()["error"]["message"]


@pytest.mark.parametrize("agent", ["deployer2\n", "deployer2\r\n", "\ndeployer2"])
def test_a_mount_name_with_a_newline_is_a_400(folder, agent):
    # `^…$` with .match passed "deployer2\n": `$` matches before a trailing newline
    server, path = folder
    (path / "sub").mkdir(exist_ok=True)
    shutil.copy(KIT / "deployer.yaml", path / "sub" / "two.yaml")
    loaded = httpx.post(
        server.url + "/_mockagent/cassettes/load", json={"path": "sub/two.yaml", "agent": agent}
    )
    assert loaded.status_code == 400, loaded.text
    assert "a mount name is one path segment" in loaded.json()["error"]["message"]
    agents = httpx.get(server.url + "/_mockagent/agents").json()
    assert [a["name"] for a in agents["agents"]] == ["deployer"]


@pytest.mark.parametrize(
    ("value", "said"),
    [(True, "got true"), (None, "got null"), (10**400, "…")],
    ids=["true", "null", "huge-int"],
)
def test_a_wrong_number_is_quoted_as_json_not_python(value: object, said: str) -> None:
    """Before: 'got True', 'got None' (Python's spellings), and a 500 for an int past a double."""
    with pytest.raises(ControlError) as refused:
        advance_clock(None, value)  # type: ignore[arg-type]  # refused before the mounts are read
    assert refused.value.code == 400 and said in str(refused.value)
    assert "True" not in str(refused.value) and "None" not in str(refused.value)
