"""The agent card: built from the cassette, interfaces pointing back at this server, cacheable."""

from __future__ import annotations

CARD = "/.well-known/agent-card.json"


def test_card_of_a_single_cassette(small):
    response = small.get(CARD)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    card = response.get_json()
    assert card["name"] == "small"
    assert card["supportedInterfaces"] == [
        {
            "url": "http://localhost",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
            "tenant": "projects/p/locations/l/apps/a",
        },
        {
            "url": "http://localhost",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
            "tenant": "projects/p/locations/l/apps/a",
        },
    ]
    assert card["capabilities"] == {
        "streaming": False,
        "pushNotifications": False,
        "extendedAgentCard": True,
    }
    assert card["defaultInputModes"] == ["text/plain"] and card["skills"][0]["id"] == "echo"
    assert "extendedCard" not in card and "bindings" not in card and "tenant" not in card


def test_card_in_a_folder_points_at_its_mount(kit):
    card = kit.get("/test-runner" + CARD, base_url="http://127.0.0.1:9999").get_json()
    assert {i["url"] for i in card["supportedInterfaces"]} == {"http://127.0.0.1:9999/test-runner"}
    assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == ["JSONRPC", "HTTP+JSON"]


def test_card_caching_headers_and_etag(small):
    first = small.get(CARD)
    assert first.headers["Cache-Control"].startswith("public, max-age=")
    etag = first.headers["ETag"]
    assert etag.startswith('"') and small.get(CARD).headers["ETag"] == etag
    again = small.get(CARD, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
