"""Fake secrets in the shapes real ones have, for the leak-scan tests.

None is a real secret: each is a known prefix and random characters from a seeded generator,
put together at run time, so that no secret scanner finds one in this repository.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path
from typing import Any

import yaml

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"


def _pem(kind: str, pick: random.Random) -> str:
    body = "\n".join("".join(pick.choice(ALNUM + "+/") for _ in range(64)) for _ in range(4))
    begin, end = "-----BEGIN " + kind, "-----END " + kind
    return f"{begin}PRIVATE KEY-----\n{body}\n{end}PRIVATE KEY-----"


def _jwt(pick: random.Random) -> str:
    def part(doc: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")

    signature = "".join(pick.choice(URLSAFE) for _ in range(43))
    return (
        part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": "u-1", "n": 7}) + "." + signature
    )


def corpus(seed: int = 25) -> dict[str, str]:
    """Kind → a fake secret of that shape (the same ones for the same seed)."""
    rng = random.Random(seed)

    def pick(n: int, chars: str = ALNUM) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    return {
        "github-pat": "gh" + "p_" + pick(36),
        "github-oauth": "gh" + "o_" + pick(36),
        "github-app": "gh" + "s_" + pick(36),
        "slack-bot": "xo"
        + "xb-"
        + pick(11, string.digits)
        + "-"
        + pick(13, string.digits)
        + "-"
        + pick(24, string.ascii_lowercase + string.digits),
        "slack-user": "xo"
        + "xp-"
        + pick(10, string.digits)
        + "-"
        + pick(12, string.digits)
        + "-"
        + pick(32, HEX),
        "aws-access-key": "AK" + "IA" + pick(16, UPPER),
        "aws-session-key": "AS" + "IA" + pick(16, UPPER),
        "jwt": _jwt(rng),
        "pem-rsa": _pem("RSA ", rng),
        "pem-ec": _pem("EC ", rng),
        "pem-openssh": _pem("OPENSSH ", rng),
        "pem-pkcs8": _pem("", rng),
        "openai-legacy": "sk" + "-" + pick(20) + "T3Blbk" + "FJ" + pick(20),
        "openai-project": "sk" + "-proj-" + pick(48, URLSAFE),
        "anthropic": "sk" + "-ant-api03-" + pick(80, URLSAFE),
        "stripe-live": "sk" + "_live_" + pick(24),
        "stripe-restricted": "rk" + "_live_" + pick(24),
        "gitlab-pat": "gl" + "pat-" + pick(20, URLSAFE),
        "sendgrid": "SG" + "." + pick(22, URLSAFE) + "." + pick(43, URLSAFE),
        "pypi": "pypi-" + "AgEIcHlwaS5vcmc" + pick(70, URLSAFE),
        "twilio-key": "S" + "K" + pick(32, HEX),
        "twilio-account": "A" + "C" + pick(32, HEX),
        "mailchimp": pick(32, HEX) + "-us" + "12",
        "telegram": pick(9, string.digits) + ":" + pick(35, URLSAFE),
        "discord": "M" + pick(23) + "." + pick(6) + "." + pick(27),
        "square": "sq0" + "csp-" + pick(43, URLSAFE),
        "azure-storage": "Account" + "Key=" + pick(86, ALNUM + "+/") + "==",
        "artifactory": "AKC" + pick(60),
        "google-api": "AI" + "za" + pick(35, URLSAFE),
        "huggingface": "hf" + "_" + pick(34),
        "npm": "npm" + "_" + pick(36),
        "random-base64": pick(44, ALNUM + "+/"),
        **_prefixed(pick),
    }


def _prefixed(pick: Any) -> dict[str, str]:
    """Tokens of services detect-secrets has no detector for (`cassette.secrets.prefixes`)."""
    return {
        "digitalocean": "do" + "p_v1_" + pick(64, HEX),
        "shopify": "shp" + "at_" + pick(32, HEX),
        "databricks": "dap" + "i" + pick(32, HEX),
        "mailgun": "ke" + "y-" + pick(32, HEX),
        "postman": "PM" + "AK-" + pick(24, HEX) + "-" + pick(34, HEX),
        "slack-app": "xa"
        + "pp-1-A"
        + pick(10, UPPER)
        + "-"
        + pick(13, string.digits)
        + "-"
        + pick(64, HEX),
        "vault": "hv" + "s." + "CAES" + pick(20, string.digits) + pick(4),
        "stripe-test": "sk" + "_test_" + pick(4, string.digits) + pick(20),
        "stripe-restricted-test": "rk" + "_test_" + pick(4, string.digits) + pick(20),
        "openai-bare": "sk" + "-" + pick(4, string.digits) + pick(44),
        "huggingface-2": "hf" + "_" + pick(4, string.digits) + pick(30),
        # as Hugging Face mints them: 34 letters, no digit (entropy alone missed every one)
        "huggingface-letters": "hf" + "_" + pick(1, UPPER) + pick(33, string.ascii_letters),
    }


def extra_shapes(seed: int = 26) -> dict[str, str]:
    """More tokens without a detect-secrets detector, from another seed."""
    rng = random.Random(seed)
    return _prefixed(lambda n, chars=ALNUM: "".join(rng.choice(chars) for _ in range(n)))


def pieces(secret: str) -> list[str]:
    """What must not be found in a cassette for `secret` to count as kept out: the secret and,
    for a PEM block, each line of its body."""
    lines = [line for line in secret.splitlines() if not line.startswith("-----")]
    return [secret, *lines]


def plain_upstream(
    tmp_path: Path, parts: list[dict[str, Any]], card: dict[str, Any] | None = None
) -> Path:
    """An upstream cassette that answers every SendMessage with a task saying `parts`."""
    path = tmp_path / "plain.yaml"
    agent = {
        "name": "plain",
        "description": "Says what it says.",
        "skills": [{"id": "s", "name": "S", "description": "Says."}],
        **(card or {}),
    }
    reply = {"task": {"steps": [{"state": "TASK_STATE_COMPLETED", "message": {"parts": parts}}]}}
    interactions = [{"name": "any", "match": {"operation": "SendMessage"}, "reply": reply}]
    cassette = {"version": 1, "agent": agent, "ids": {"seed": "p"}, "interactions": interactions}
    path.write_text(yaml.safe_dump(cassette, sort_keys=False))
    return path
