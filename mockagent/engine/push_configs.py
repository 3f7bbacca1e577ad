"""A task's push-notification config as the task keeps it: checked when it is created.

As a2a-sdk servers do (they parse the config into their model), fields that A2A does not define
are dropped, not stored and echoed back; the webhook URL must be an absolute http(s) URL, so a
config that could never be delivered is refused when it is created, not at its first event; and a
task keeps at most MAX_PER_TASK configs, so one task cannot grow without bound.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mockagent import errors

MAX_PER_TASK = 100
"""How many push-notification configs one task keeps."""
FIELDS = ("id", "taskId", "url", "token", "authentication", "tenant")
"""The fields of a v1.0 TaskPushNotificationConfig (v0.3 configs are translated to it first)."""
AUTH_FIELDS = ("scheme", "credentials")


def checked(config: dict[str, Any], where: str = "") -> dict[str, Any]:
    """The A2A fields of `config` (a copy), or InvalidParams naming the field that is wrong;
    `where` prefixes the field names in messages (`configuration.taskPushNotificationConfig.`)."""
    url = config.get("url")
    if not isinstance(url, str) or not url:
        raise errors.InvalidParams(f"{where}url: a push notification config needs the webhook URL")
    if not _http_url(url):
        shown = url if len(url) <= 200 else url[:200] + "…"
        raise errors.InvalidParams(
            f"{where}url: the webhook must be an absolute http or https URL, got {shown!r}"
        )
    out = {key: config[key] for key in FIELDS if key in config}
    for key in ("id", "token", "tenant"):
        if out.get(key) is not None and not isinstance(out[key], str):
            raise errors.InvalidParams(f"{where}{key}: must be a string")
    auth = out.get("authentication")
    if auth is not None:
        if not isinstance(auth, dict):
            raise errors.InvalidParams(f"{where}authentication: must be an object")
        for key in AUTH_FIELDS:
            if auth.get(key) is not None and not isinstance(auth[key], str):
                raise errors.InvalidParams(f"{where}authentication.{key}: must be a string")
        out["authentication"] = {key: auth[key] for key in AUTH_FIELDS if key in auth}
    return out


def room_for(configs: dict[str, Any], config_id: Any) -> None:
    """InvalidParams when a task with `configs` has no room for a new config `config_id` (one
    that replaces a config of the same id always has)."""
    if len(configs) >= MAX_PER_TASK and config_id not in configs:
        raise errors.InvalidParams(
            f"a task keeps at most {MAX_PER_TASK} push notification configs, and this one has "
            f"{len(configs)}: delete one first"
        )


def _http_url(url: str) -> bool:
    if any(c.isspace() or ord(c) < 32 for c in url):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range or not a number
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
