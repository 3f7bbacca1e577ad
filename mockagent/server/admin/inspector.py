"""The inspector page at `/_mockagent/`: one server-rendered HTML page (no script, no build step)
showing what the admin API's JSON shows, for a person with a browser.

Built from the same framework-free views as the JSON endpoints
(`mockagent.server.admin.control`), so the page and the API never disagree, and rendered by
Flask's Jinja2 from
`templates/inspector.html`, which autoescapes: every value, from a cassette or a call, is text.
Sections, with stable ids for tests and links:

    #agents        each agent: name, protocol, cassette, URL; the card (A2A) or the agents (Agentex)
    #interactions  each interaction: agent, name, cassette line ("added" for one added at
                   runtime), uses / times (used or unused)
    #tasks         each live task: id, state, what it waits for, why it can never finish
                   (if so), and the timeline of its events
    #journal       every call in arrival order: seq, agent, operation, binding, and the
                   interaction it matched or the near-miss report (with the differing paths);
                   a badge per part of the interaction's fault, fired or not (and why not)

The page stays small however long the server runs: it shows the last SHOWN_CALLS calls (each
near-miss report cut to SHOWN_TEXT characters) and the last SHOWN_TASKS tasks, each with a note
saying how many more the JSON endpoints list, and how many older calls the journal itself dropped
(`--journal-size`, and its byte budget).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from flask import render_template

from mockagent.dialects.a2a.card import build_card
from mockagent.server.admin import control

if TYPE_CHECKING:
    from mockagent.server.mounts import Mounts

TEMPLATE = "inspector.html"
SHOWN_CALLS = 500
SHOWN_TASKS = 200
SHOWN_TEXT = 4096
"""How much of one call's near-miss report a row shows, so that the page stays a few MB."""


def elapsed(at_ms: float) -> str:
    """When a task event happened, in the timeline's one form: whole milliseconds since the
    agent's clock started (or was reset), e.g. `+3914 ms`."""
    return f"+{round(at_ms)} ms"


def _text(value: Any) -> Any:
    return "" if value is None else value


def _agents(mounts: Mounts, base_url: str) -> list[dict[str, Any]]:
    engines = dict(control.engines(mounts))
    out = []
    for view in control.agents_view(mounts):
        engine = engines.get(view["name"])
        card = agentex = None
        if engine is not None and engine.cassette.protocol == "agentex":
            agentex = [
                {
                    "id": a.id,
                    "name": a.name,
                    "acp_type": a.acp_type,
                    "status": _text(a.status),
                    "description": _text(a.description),
                }
                for a in engine.cassette.agents
            ]
        elif engine is not None and engine.cassette.agent is not None:
            url = base_url.rstrip("/") + (f"/{view['name']}" if view["name"] else "")
            built = build_card(engine.cassette.agent, url)
            card = json.dumps(built, indent=2, ensure_ascii=False, default=str)
        out.append({**view, "card": card, "agentex": agentex})
    return out


def _interactions(mounts: Mounts) -> list[dict[str, Any]]:
    return [
        {
            **view,
            "line": "added" if view["added"] else _text(view["line"]),  # at runtime: no line
            "css": "used" if view["used"] else "unused",
            "times": "∞" if view["times"] is None else view["times"],
        }
        for view in control.interactions_view(mounts)
    ]


def _event(event: dict[str, Any]) -> dict[str, Any]:
    kind, what = "event", None
    if "state" in event:
        kind, what = "state", event["state"]
    elif "said" in event:
        kind, what = "said", json.dumps(event["said"], ensure_ascii=False, default=str)
    elif "artifactId" in event:
        kind, what = "artifact", _text(event["artifactId"])
    return {
        "seq": event["seq"],
        "elapsed": elapsed(event["atMs"]),
        "stamp": event.get("timestamp"),
        "kind": kind,
        "what": what,
        "append": bool(event.get("append")),
    }


def _tasks(mounts: Mounts) -> tuple[list[dict[str, Any]], int]:
    """The last SHOWN_TASKS tasks, and how many there are."""
    views, more = control.tasks_listing(mounts, limit=SHOWN_TASKS)  # not every task's view
    total = len(views) + more
    views = views[-SHOWN_TASKS:]
    return [
        {
            "id": t["id"],
            "state": t["state"],
            "agent": t["agent"],
            "context": t["contextId"],
            "origin": _text(t["origin"]),
            "polls": t["polls"],
            "steps_left": t["remainingSteps"],
            "waiting_for": t["waitingFor"],
            "stuck": t["stuck"],
            "events": [_event(e) for e in t["events"]],
        }
        for t in views
    ], total


def _calls(mounts: Mounts) -> tuple[list[dict[str, Any]], int]:
    """The last SHOWN_CALLS calls the journals keep, in arrival order (the agents of a folder
    share one numbering), and how many they keep."""
    reports = {(m["agent"], m["seq"]): m["report"] for m in control.near_misses_view(mounts)}
    calls = sorted(control.calls_view(mounts, params=False), key=lambda c: c["seq"])
    out = []
    for call in calls[-SHOWN_CALLS:]:
        report = reports.get((call["agent"], call["seq"])) or None
        paths = (
            []
            if report is None
            else [
                (_text(c.get("interaction")), _text(m.get("path")))
                for c in report.get("closest", [])
                for m in c.get("mismatches", [])
            ]
        )
        out.append(
            {
                **call,
                "interaction": _text(call["interaction"]),
                "error": call["error"] or "unmatched",
                "paths": paths,
                "report": None if report is None else shown(_text(report.get("report"))),
                "faults": [_fault(part) for part in call["faults"]],
            }
        )
    return out, len(calls)


def shown(text: str) -> str:
    """At most SHOWN_TEXT characters of `text`, saying how many more there are."""
    if len(text) <= SHOWN_TEXT:
        return text
    more = len(text) - SHOWN_TEXT
    return f"{text[:SHOWN_TEXT]}… ({more:,} characters more; /_mockagent/near-misses has it all)"


def _fault(part: dict[str, Any]) -> dict[str, Any]:
    """One part of a call's fault as a badge: `dropAfter 2`, fired or not (and why not)."""
    value = next(v for k, v in part.items() if k not in ("kind", "fired", "why", "error"))
    label = f"{part['kind']} {value}"
    if part.get("error"):
        label += f" ({part['error']})"
    return {"label": label, "fired": part["fired"], "why": part.get("why")}


def context(mounts: Mounts, base_url: str) -> dict[str, Any]:
    """What the template shows: plain values (text for every cell, never markup)."""
    tasks, task_count = _tasks(mounts)
    calls, kept = _calls(mounts)
    sizes = [engine.tasks.journal_size for _, engine in control.engines(mounts)]
    return {
        "base_url": base_url,
        "agents": _agents(mounts, base_url),
        "interactions": _interactions(mounts),
        "tasks": tasks,
        "tasks_hidden": task_count - len(tasks),
        "calls": calls,
        "calls_hidden": kept - len(calls),
        "dropped": control.dropped_calls(mounts),
        "journal_size": max(sizes, default=0),
    }


_STYLE = re.compile(r"<style>(.*?)</style>", re.DOTALL)


def page_headers(page: str) -> dict[str, str]:
    """The page's security headers: a Content-Security-Policy that allows its own inline style
    (by hash) and nothing else (no script, no frame, no form, no other origin's content), no
    framing by another page (clickjacking), no type sniffing and no Referer leaving it."""
    styles = (
        " ".join(
            "'sha256-" + base64.b64encode(hashlib.sha256(css.encode()).digest()).decode() + "'"
            for css in _STYLE.findall(page)
        )
        or "'none'"
    )
    policy = (
        f"default-src 'none'; style-src {styles}; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


def render(mounts: Mounts, base_url: str) -> str:
    """The whole inspector page (call it while Flask handles a request); `base_url` is the
    server's URL, with or without a trailing slash."""
    return render_template(TEMPLATE, **context(mounts, base_url))
