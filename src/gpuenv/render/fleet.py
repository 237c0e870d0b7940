"""Rendering of the fleet report: rich tables for a terminal, and one self-contained HTML page.

The page (``fleet_html``) holds everything it shows: inline CSS, an inline SVG bar chart of the
finding codes by host count, no script, no font, image or style sheet from anywhere; every
string from a host's files is escaped, since any host could have written them. Host lists are
folded (<details>) so that a code seen on 5,000 hosts is still one row.
"""

from __future__ import annotations

import html

from gpuenv.fleet.model import FleetReport, Seen

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_COLOUR = {"error": "#c62828", "warning": "#ef8f00", "info": "#1e88e5"}
SHOWN = 8  # host names listed in a terminal cell before "… and N more"


def names(hosts: tuple[str, ...] | list[str], shown: int = SHOWN) -> str:
    """'a, b, c' or 'a, b, … and 12 more'; pure."""
    if len(hosts) <= shown:
        return ", ".join(hosts)
    return ", ".join(hosts[:shown]) + f", … and {len(hosts) - shown} more"


def headline(report: FleetReport) -> str:
    s = report.summary()
    parts = [
        f"{s['hosts']} host{'s' if s['hosts'] != 1 else ''} ({s['files']} files)",
        f"{s['hosts_with_errors']} with errors",
        f"{s['hosts_with_warnings']} with warnings only",
        f"{s['hosts_ok']} ok",
    ]
    if s["hosts_facts_only"]:
        parts.append(f"{s['hosts_facts_only']} with facts only (no doctor or verify result)")
    if s["verify_failed"]:
        parts.append(f"{s['verify_failed']} failed verify")
    parts.append(f"{s['hosts_stale']} stale (older than {report.max_age_days:g} days)")
    parts.append(f"{s['files_unreadable']} unreadable file{'s' if s['files_unreadable'] != 1 else ''}")
    return ", ".join(parts)


def _unjudged(report: FleetReport) -> list[str]:
    """The hosts known only from their facts: nothing judged them (a facts file holds no findings)."""
    return [h.name for h in report.hosts if h.kinds == ("facts",)]


def no_findings(report: FleetReport) -> str:
    """What an empty findings table means: no host has one, or some hosts were never judged."""
    unjudged = _unjudged(report)
    if not unjudged:
        return "No findings on any host."
    judged = len(report.hosts) - len(unjudged)
    return (
        (f"No findings on the {judged} judged host{'s' if judged != 1 else ''}; " if judged else "No host was judged: ")
        + f"{names(tuple(unjudged))} {'has' if len(unjudged) == 1 else 'have'} only facts, which hold no findings "
        "(gpuenv doctor --facts FILE judges them)."
    )


def render_fleet(report: FleetReport, console: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    from gpuenv.render.term import markup_safe as escape  # every cell below is a host's text

    console.print(Text(headline(report), style="bold"))
    if report.codes:
        t = Table(title="Findings by host count", title_justify="left", show_lines=False)
        for col in ("code", "severity", "hosts", "which", "title (one host's)"):
            t.add_column(col, overflow="fold")
        for c in report.codes:
            t.add_row(
                escape(c.code), Text(c.severity, style=_STYLE[c.severity]), str(len(c.hosts)), escape(names(c.hosts)),
                escape(c.title),
            )  # fmt: skip
        console.print(t)
    else:
        console.print(Text(no_findings(report), style="green" if not _unjudged(report) else "yellow"))
    if report.groups:
        t = Table(title="Machines by GPU model, driver and stack", title_justify="left")
        for col in ("GPU model", "driver", "stack", "hosts", "which"):
            t.add_column(col, overflow="fold")
        for g in report.groups:
            t.add_row(*map(escape, (g.gpu_model, g.driver, g.stack, str(len(g.hosts)), names(g.hosts))))
        console.print(t)
    if report.stale:
        t = Table(title=f"Stale hosts (data older than {report.max_age_days:g} days)", title_justify="left")
        for col in ("host", "collected", "age (days)", "files"):
            t.add_column(col, overflow="fold")
        for s in report.stale:
            t.add_row(*map(escape, (s.host, s.collected_at, f"{s.age_days:g}", ", ".join(s.files))))
        console.print(t)
    if report.unreadable:
        t = Table(title="Unreadable files (left out of the counts above)", title_justify="left")
        for col in ("host", "file", "why"):
            t.add_column(col, overflow="fold")
        for u in report.unreadable:
            t.add_row(*map(escape, (u.host, u.path, u.error)))
        console.print(t)
    console.print(
        f"[dim]generated {escape(report.generated_at)}; every host and file: --json or --html FILE[/dim]"
    )


# -- HTML ---------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.error{color:#c62828;font-weight:600}.warning{color:#b26a00}.info{color:#1565c0}
.cards{display:flex;flex-wrap:wrap;gap:.8em}.card{border:1px solid #ddd;border-radius:6px;padding:.5em 1em}
.card b{display:block;font-size:1.4em}code{font-size:.95em}summary{cursor:pointer}
svg text{font:12px system-ui,sans-serif}
ul.codes{margin:0;padding:0;list-style:none}ul.codes ul{margin:0;padding-left:1.2em;list-style:none}
li.consequence{color:#666}
"""


def _e(text: object) -> str:
    from gpuenv.render.term import inert

    return html.escape(inert("" if text is None else str(text)), quote=True)


def _hosts_cell(hosts: Sequence[str]) -> str:
    if len(hosts) <= 3:
        return _e(", ".join(hosts))
    return f"<details><summary>{_e(', '.join(hosts[:3]))}, … ({len(hosts)})</summary>{_e(', '.join(hosts))}</details>"


def chart_svg(report: FleetReport, width: int = 900) -> str:
    """A horizontal bar per finding code, as long as its share of the hosts; pure."""
    total = max(report.summary()["hosts"], 1)
    label_w, bar_w, row = 260, width - 260 - 70, 22
    height = row * len(report.codes) + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="finding codes by host count">'
    ]
    for i, c in enumerate(report.codes):
        y = 5 + i * row
        w = max(2, round(bar_w * len(c.hosts) / total))
        out.append(
            f"<g><title>{_e(c.code)}: {len(c.hosts)} of {total} hosts</title>"
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{_e(c.code)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{w}" height="{row - 6}" fill="{_COLOUR[c.severity]}"/>'
            f'<text x="{label_w + w + 6}" y="{y + 15}">{len(c.hosts)}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


def _codes_html(findings: tuple[Seen, ...]) -> str:
    """A host's codes, each finding that follows from another indented under its cause."""
    roots = [f.code for f in findings if not f.cause or all(g.code != f.cause for g in findings)]
    under: dict[str, list[str]] = {}
    for f in findings:
        if f.code not in roots:
            under.setdefault(f.cause, []).append(f.code)
    items = []
    for code in dict.fromkeys(roots):
        nested = "".join(f'<li class="consequence">↳ {_e(c)}</li>' for c in under.get(code, ()))
        items.append(f"<li>{_e(code)}" + (f"<ul>{nested}</ul>" if nested else "") + "</li>")
    return f'<ul class="codes">{"".join(items)}</ul>' if items else ""


def fleet_html(report: FleetReport) -> str:
    s = report.summary()
    cards = [
        ("hosts", s["hosts"]),
        ("with errors", s["hosts_with_errors"]),
        ("warnings only", s["hosts_with_warnings"]),
        ("ok", s["hosts_ok"]),
        ("facts only", s["hosts_facts_only"]),
        ("failed verify", s["verify_failed"]),
        ("stale", s["hosts_stale"]),
        ("unreadable files", s["files_unreadable"]),
    ]
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # No network: nothing below may load anything (the policy says so to the browser too).
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>gpuenv fleet report, {s['hosts']} hosts</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>gpuenv fleet report</h1>",
        f"<p>{_e(headline(report))}. Generated {_e(report.generated_at)}.</p>",
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{n}</b>{_e(label)}</div>' for label, n in cards)
        + "</div>",
        '<h2 id="codes">Findings by host count</h2>',
    ]
    if report.codes:
        out.append(chart_svg(report))
        out.append(
            "<table><tr><th>code</th><th>severity</th><th>hosts</th><th>title (one host's)</th><th>which</th></tr>"
        )
        for c in report.codes:
            out.append(
                f'<tr data-code="{_e(c.code)}"><td><code>{_e(c.code)}</code></td>'
                f'<td class="{_e(c.severity)}">{_e(c.severity)}</td><td class="n">{len(c.hosts)}</td>'
                f"<td>{_e(c.title)}</td><td>{_hosts_cell(c.hosts)}</td></tr>"
            )
        out.append("</table>")
    else:
        out.append(f"<p>{_e(no_findings(report))}</p>")
    out.append('<h2 id="groups">Machines by GPU model, driver and stack</h2>')
    out.append("<table><tr><th>GPU model</th><th>driver</th><th>stack</th><th>hosts</th><th>which</th></tr>")
    for g in report.groups:
        out.append(
            f"<tr><td>{_e(g.gpu_model)}</td><td>{_e(g.driver)}</td><td>{_e(g.stack)}</td>"
            f'<td class="n">{len(g.hosts)}</td><td>{_hosts_cell(g.hosts)}</td></tr>'
        )
    out.append("</table>")
    out.append(f'<h2 id="stale">Stale hosts (data older than {report.max_age_days:g} days)</h2>')
    if report.stale:
        out.append("<table><tr><th>host</th><th>collected</th><th>age (days)</th><th>files</th></tr>")
        for st in report.stale:
            out.append(
                f'<tr data-host="{_e(st.host)}"><td>{_e(st.host)}</td><td>{_e(st.collected_at)}</td>'
                f'<td class="n">{st.age_days:g}</td><td>{_e(", ".join(st.files))}</td></tr>'
            )
        out.append("</table>")
    else:
        out.append("<p>None.</p>")
    out.append('<h2 id="unreadable">Unreadable files</h2>')
    if report.unreadable:
        out.append("<table><tr><th>host</th><th>file</th><th>why</th></tr>")
        for u in report.unreadable:
            out.append(
                f'<tr data-host="{_e(u.host)}"><td>{_e(u.host)}</td><td>{_e(u.path)}</td><td>{_e(u.error)}</td></tr>'
            )
        out.append("</table>")
    else:
        out.append("<p>None.</p>")
    out.append('<h2 id="hosts">Hosts</h2>')
    out.append(
        "<table><tr><th>host</th><th>GPU model</th><th>driver</th><th>stack</th><th>torch</th><th>verify</th>"
        "<th>errors</th><th>warnings</th><th>codes</th><th>collected</th></tr>"
    )
    for h in report.hosts:
        verify = _e(h.verify or "-")
        out.append(
            f'<tr data-host="{_e(h.name)}"><td>{_e(h.name)}</td><td>{_e(h.gpu_model)}</td><td>{_e(h.driver)}</td>'
            f"<td>{_e(h.stack)}</td><td>{_e(h.torch or '-')}</td>"
            f'<td class="{"error" if h.verify == "failed" else ""}">{verify}</td>'
            f'<td class="n">{h.count("error")}</td><td class="n">{h.count("warning")}</td>'
            f"<td>{_codes_html(h.findings)}</td><td>{_e(h.collected_at or '-')}</td></tr>"
        )
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"
