"""The agent card: built from the cassette, interfaces pointing back at this server, cacheable."""

from __future__ import annotations

import pytest
from freezegun import freeze_time

from mockagent.server.app import create_app
from tests.helpers.dialects import SMALL

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


def test_card_last_modified_is_the_cassette_clock_start_on_every_load(tmp_path):
    """Not the file's mtime nor the time of serving: two loads (two checkouts) answer alike."""
    cards = []
    for name in ("one", "two"):
        path = tmp_path / name / "small.yaml"
        path.parent.mkdir()
        path.write_text(SMALL)
        cards.append(create_app(path).test_client().get(CARD))
    assert cards[0].headers["Last-Modified"] == "Tue, 06 Oct 2026 09:00:00 GMT"
    assert cards[1].headers == cards[0].headers and cards[1].data == cards[0].data


LATER, EARLIER = "Wed, 07 Oct 2026 00:00:00 GMT", "Mon, 05 Oct 2026 00:00:00 GMT"


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"If-Modified-Since": "Tue, 06 Oct 2026 09:00:00 GMT"}, 304),  # the date it gave
        ({"If-Modified-Since": LATER}, 304),
        ({"If-Modified-Since": "Tue, 06 Oct 2026 08:59:59 GMT"}, 200),  # changed since
        ({"If-Modified-Since": "Tuesday, 06-Oct-26 09:00:00 GMT"}, 304),  # RFC 850 form
        ({"If-Modified-Since": "yesterday"}, 200),  # not a date: ignored
        # RFC 9110 §13.2.2: with If-None-Match, If-Modified-Since is not evaluated.
        ({"If-None-Match": '"other"', "If-Modified-Since": LATER}, 200),
        ({"If-None-Match": "*", "If-Modified-Since": EARLIER}, 304),
    ],
)
def test_card_if_modified_since(small, headers, status):
    response = small.get(CARD, headers=headers)
    assert response.status_code == status
    assert response.headers["Last-Modified"] == "Tue, 06 Oct 2026 09:00:00 GMT"
    assert response.headers["ETag"] == small.get(CARD).headers["ETag"]
    assert (response.data == b"") == (status == 304)


def test_card_last_modified_without_a_clock_start_is_when_the_clock_started(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL.replace("clock: {start: 2026-10-06T09:00:00Z}\n", ""))
    with freeze_time("2031-02-03T04:05:06.789Z"):
        client = create_app(path).test_client()
    response = client.get(CARD)
    assert response.headers["Last-Modified"] == "Mon, 03 Feb 2031 04:05:06 GMT"
    assert (
        client.get(CARD, headers={"If-Modified-Since": "Mon, 03 Feb 2031 04:05:06 GMT"}).status_code
        == 304
    )
