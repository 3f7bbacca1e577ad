"""Signed cards in process: the signature verifies against the JWKS served beside the card, the
same bytes on every load, a key per id seed, never a recorded signature, and a cassette that
cannot be signed refused where it is written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.utils.signing import create_signature_verifier
from jwt import PyJWKSet

from mockagent.errors import CassetteError
from mockagent.server.app import create_app
from tests.helpers.cassette_text import line_of
from tests.helpers.dialects import SMALL, rpc
from tests.helpers.signing import JWKS_PATH, protected_header

CARD = "/.well-known/agent-card.json"
SIGNED = SMALL.replace("  tenant:", "  signed: true\n  tenant:")
STALE = {"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c3RhbGU"}


def client_of(tmp_path: Path, text: str, name: str = "agent.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return create_app(path).test_client()


def served(client) -> tuple[bytes, bytes, dict]:
    """The public card's bytes, the JWKS's bytes and the extended card."""
    extended = rpc(client, "GetExtendedAgentCard", {})["result"]
    return client.get(CARD).data, client.get(JWKS_PATH).data, extended


def verify(client, card: dict) -> None:
    """The a2a-sdk's verifier, its key from the JWKS the signature names (fetched in process)."""

    def key(kid: str | None, jku: str | None):
        assert jku == "http://localhost" + JWKS_PATH
        return PyJWKSet.from_dict(client.get(JWKS_PATH).get_json())[str(kid)]

    create_signature_verifier(key, ["EdDSA"])(parse_agent_card(dict(card)))


def test_both_cards_verify_against_the_served_jwks(tmp_path):
    client = client_of(tmp_path, SIGNED)
    _, _, extended = served(client)

    verify(client, client.get(CARD).get_json())
    verify(client, extended)
    assert extended["skills"][0]["id"] == "admin"  # the extended card, not the public one
    assert client.get(JWKS_PATH).headers["Cache-Control"].startswith("public")


def test_every_load_serves_the_same_bytes(tmp_path):
    first = served(client_of(tmp_path, SIGNED, "one.yaml"))
    again = served(client_of(tmp_path, SIGNED, "two.yaml"))

    assert first == again


def test_the_key_follows_the_id_seed(tmp_path):
    _, jwks, _ = served(client_of(tmp_path, SIGNED, "one.yaml"))
    other = SIGNED.replace("clock:", "ids: {seed: another}\nclock:")
    _, other_jwks, _ = served(client_of(tmp_path, other, "two.yaml"))

    assert jwks != other_jwks


def test_an_unsigned_agent_has_no_signature_and_no_jwks(small):
    assert "signatures" not in small.get(CARD).get_json()
    assert small.get(JWKS_PATH).status_code == 404


def test_a_recorded_extended_card_signature_is_signed_anew(tmp_path):
    # A recording made before `signed` existed kept the extended card's (stale) signatures.
    text = SMALL.replace(
        "    skills: [{id: admin", f"    signatures: [{STALE}]\n    skills: [{{id: admin"
    )
    client = client_of(tmp_path, text)
    card, _, extended = served(client)

    assert extended["signatures"] != [STALE]
    verify(client, extended)
    verify(client, client.get(CARD).get_json())


def test_missing_signing_libraries_name_the_extra_at_the_line(tmp_path, monkeypatch):
    for module in ("jwt", "jwt.algorithms"):
        monkeypatch.setitem(sys.modules, module, None)  # as if PyJWT were not installed

    with pytest.raises(CassetteError) as caught:
        client_of(tmp_path, SIGNED)

    assert "mockagent-server[signing]" in str(caught.value)
    assert f"agent.yaml:{line_of(SIGNED, 'signed: true')}:" in str(caught.value)


def test_a_card_the_sdk_cannot_read_cannot_be_signed(tmp_path):
    text = SIGNED.replace("  signed: true", "  signed: true\n  securitySchemes: {bearer: nope}")

    with pytest.raises(CassetteError, match="a2a-sdk cannot read the card"):
        client_of(tmp_path, text)


def test_the_header_names_the_key_and_the_jwks_of_a_folders_agent(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "signer.yaml").write_text(SIGNED)
    client = create_app(tmp_path / "folder").test_client()

    card = client.get("/signer" + CARD).get_json()
    header = protected_header(card["signatures"][0])
    jwks = client.get("/signer" + JWKS_PATH).get_json()

    assert header["jku"] == "http://localhost/signer" + JWKS_PATH
    assert [key["kid"] for key in jwks["keys"]] == [header["kid"]]
    assert (header["alg"], header["typ"]) == ("EdDSA", "JOSE")


# An extended card's skill without `tags`: a2a-sdk 1.x reads it, a 0.3 client's model does not.
NO_TAGS = SIGNED.replace(", tags: []}]", "}]")


def test_a_v03_card_a_v03_client_cannot_read_is_refused_at_v03card(tmp_path):
    text = NO_TAGS.replace("  signed: true", "  signed: true\n  v03Card: true")

    with pytest.raises(CassetteError) as caught:
        client_of(tmp_path, text)

    assert "an a2a-sdk 0.3 client cannot read the card" in str(caught.value)
    assert "skills.0.tags" in str(caught.value)
    assert f"agent.yaml:{line_of(text, 'v03Card: true')}:" in str(caught.value)


def test_a_v03_call_for_an_extended_card_it_cannot_read_says_why(tmp_path):
    client = client_of(tmp_path, NO_TAGS)  # no v03Card: only a v0.3 call needs the v0.3 form

    v03 = {"A2A-Version": "0.3"}
    reply = rpc(client, "agent/getAuthenticatedExtendedCard", path="/", headers=v03)

    assert reply["error"]["code"] == -32603
    assert "an a2a-sdk 0.3 client cannot read the card" in reply["error"]["message"]
    verify(client, rpc(client, "GetExtendedAgentCard", {})["result"])  # 1.x callers still can
