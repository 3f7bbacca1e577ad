"""The inspector page at `/_mockagent/`: one server-rendered HTML page (no script, no build step)
showing what the admin API's JSON shows, for a person with a browser.

Built from the same framework-free views as the JSON endpoints (`mockagent.server.control`), so
the page and the API never disagree. Sections, with stable ids for tests and links:

    #agents        each agent: name, protocol, cassette, URL; the card (A2A) or the agents (Agentex)
    #interactions  each interaction: agent, name, cassette line, uses / times (used or unused)
    #tasks         each live task: id, state, and the timeline of its events
    #journal       each call: seq, agent, operation, binding, and the interaction it matched or
                   the near-miss report (with the differing paths)

Every value is escaped with `html.escape`.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

from mockagent.dialects.a2a.card import build_card
from mockagent.server import control

if TYPE_CHECKING:
    from mockagent.server.app import Mounts

STYLE = """
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; --ok: #15803d; --bad: #b91c1c; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 1rem 2rem;
       max-width: 80rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.15rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; margin-top: 2rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
nav a { margin-right: 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
pre { background: rgba(127, 127, 127, .1); padding: .5rem .75rem; overflow-x: auto; margin: .25rem 0; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.muted, .empty { color: var(--muted); }
.used .uses { color: var(--ok); }
.unused .uses { color: var(--bad); font-weight: 600; }
.matched { color: var(--ok); }
.unmatched { color: var(--bad); font-weight: 600; }
pre.near-miss { border-left: 3px solid var(--bad); }
.state { font-weight: 600; }
ol.timeline { margin: .25rem 0 .75rem; padding-left: 1.5rem; }
ol.timeline li { margin: .1rem 0; }
article { margin-bottom: 1rem; }
summary { cursor: pointer; font-weight: 600; margin: .25rem 0; }
dl { display: grid; grid-template-columns: max-content auto; gap: .1rem 1rem; margin: .25rem 0; }
dt { color: var(--muted); }
dd { margin: 0; }
"""


def _e(value: Any) -> str:
    """Escaped text of a value ("" for None)."""
    return escape("" if value is None else str(value), quote=True)


def _json(value: Any) -> str:
    return _e(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _empty(text: str) -> str:
    return f'<p class="empty">{_e(text)}</p>'


def _agent_base(base_url: str, name: str) -> str:
    return base_url.rstrip("/") + (f"/{name}" if name else "")


def _agents(mounts: Mounts, base_url: str) -> str:
    views = control.agents_view(mounts)
    engines = dict(control.engines(mounts))
    parts = []
    for view in views:
        name = view["name"]
        engine = engines.get(name)
        facts = (f"<dl><dt>protocol</dt><dd>{_e(view['protocol'])}</dd>"
                 f"<dt>cassette</dt><dd><code>{_e(view['cassette'])}</code></dd>"
                 f"<dt>url</dt><dd><code>{_e(view['url'])}</code></dd>"
                 f"<dt>interactions</dt><dd>{_e(view['interactions'])}</dd></dl>")
        detail = ""
        if engine is not None and engine.cassette.protocol == "a2a" and engine.cassette.agent is not None:
            card = build_card(engine.cassette.agent, _agent_base(base_url, name))
            detail = f'<details><summary>Agent card</summary><pre class="card">{_json(card)}</pre></details>'
        elif engine is not None:
            rows = "".join(
                f"<tr><td><code>{_e(a.id)}</code></td><td>{_e(a.name)}</td><td>{_e(a.acp_type)}</td>"
                f"<td>{_e(a.status)}</td><td>{_e(a.description)}</td></tr>"
                for a in engine.cassette.agents)
            detail = ('<h4>Agentex agents</h4><table class="agentex-agents"><thead><tr><th>id</th><th>name</th>'
                      f"<th>acp_type</th><th>status</th><th>description</th></tr></thead><tbody>{rows}</tbody>"
                      "</table>")
        title = _e(name) if name else '<span class="muted">(single cassette at /)</span>'
        parts.append(f'<article class="agent" data-agent="{_e(name)}"><h3>{title}</h3>{facts}{detail}</article>')
    return "".join(parts) or _empty("No agents.")


def _interactions(mounts: Mounts) -> str:
    views = control.interactions_view(mounts)
    if not views:
        return _empty("No interactions.")
    rows = []
    for v in views:
        times = "∞" if v["times"] is None else v["times"]
        css = "used" if v["used"] else "unused"
        rows.append(f'<tr class="interaction {css}"><td>{_e(v["agent"])}</td><td>{_e(v["name"])}</td>'
                    f'<td>{_e(v["line"])}</td><td class="uses">{_e(v["uses"])} / {_e(times)}</td></tr>')
    return ("<table><thead><tr><th>agent</th><th>interaction</th><th>line</th><th>uses / times</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def _event(event: dict[str, Any]) -> str:
    when = _e(event.get("timestamp") or f"+{event.get('atMs')} ms")
    if "state" in event:
        what = f'state <span class="state">{_e(event["state"])}</span>'
    elif "said" in event:
        what = f"said <code>{_e(json.dumps(event['said'], ensure_ascii=False, default=str))}</code>"
    elif "artifactId" in event:
        what = f"artifact <code>{_e(event['artifactId'])}</code>" + (" (append)" if event.get("append") else "")
    else:
        what = "event"
    return f'<li data-seq="{_e(event.get("seq"))}"><time>{when}</time> — {what}</li>'


def _tasks(mounts: Mounts) -> str:
    views = control.tasks_view(mounts)
    parts = []
    for t in views:
        events = "".join(_event(e) for e in t["events"]) or '<li class="empty">no events yet</li>'
        parts.append(
            f'<article class="task" id="task-{_e(t["id"])}"><h3><code>{_e(t["id"])}</code> '
            f'<span class="state">{_e(t["state"])}</span></h3>'
            f"<dl><dt>agent</dt><dd>{_e(t['agent'])}</dd><dt>context</dt><dd><code>{_e(t['contextId'])}</code></dd>"
            f"<dt>interaction</dt><dd>{_e(t['origin'])}</dd><dt>polls</dt><dd>{_e(t['polls'])}</dd>"
            f"<dt>steps left</dt><dd>{_e(t['remainingSteps'])}</dd></dl>"
            f'<ol class="timeline">{events}</ol></article>')
    return "".join(parts) or _empty("No live tasks.")


def _differences(report: dict[str, Any]) -> str:
    rows = [f"<li>{_e(c.get('interaction'))}: <code>{_e(m.get('path'))}</code></li>"
            for c in report.get("closest", []) for m in c.get("mismatches", [])]
    return f'<ul class="paths">{"".join(rows)}</ul>' if rows else ""


def _journal(mounts: Mounts) -> str:
    calls = control.calls_view(mounts)
    reports = {(m["agent"], m["seq"]): m["report"] for m in control.near_misses_view(mounts)}
    if not calls:
        return _empty("No calls yet.")
    rows = []
    for c in calls:
        if c["matched"]:
            outcome = f'<span class="matched">matched</span> <strong>{_e(c["interaction"])}</strong>'
            css = "call matched"
        else:
            report = reports.get((c["agent"], c["seq"]))
            outcome = f'<span class="unmatched">{_e(c["error"] or "unmatched")}</span>'
            if c["interaction"]:
                outcome += f" <strong>{_e(c['interaction'])}</strong>"
            if report:
                outcome += f'<pre class="near-miss">{_e(report.get("report"))}</pre>{_differences(report)}'
            css = "call unmatched"
        rows.append(f'<tr class="{css}"><td>{_e(c["seq"])}</td><td>{_e(c["agent"])}</td>'
                    f'<td>{_e(c["operation"])}</td><td>{_e(c["binding"])}</td><td>{outcome}</td></tr>')
    return ("<table><thead><tr><th>seq</th><th>agent</th><th>operation</th><th>binding</th><th>outcome</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def render(mounts: Mounts, base_url: str) -> str:
    """The whole inspector page; `base_url` is the server's URL (no trailing slash needed)."""
    sections = [("agents", "Agents", _agents(mounts, base_url)),
                ("interactions", "Interactions", _interactions(mounts)),
                ("tasks", "Tasks", _tasks(mounts)),
                ("journal", "Journal", _journal(mounts))]
    nav = "".join(f'<a href="#{key}">{title}</a>' for key, title, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{title}</h2>{content}</section>' for key, title, content in sections)
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>mockagent inspector</title><style>{STYLE}</style></head>"
            f"<body><header><h1>mockagent inspector</h1><nav>{nav}</nav>"
            f'<p class="muted">Served from <code>{_e(base_url)}</code>; reload to refresh. '
            "The same data as JSON: <code>/_mockagent/agents</code>, <code>calls</code>, "
            "<code>near-misses</code>, <code>tasks</code>, <code>interactions</code>.</p></header>"
            f"<main>{body}</main></body></html>\n")
