"""Human rendering of a doctor report: grouped by area, errors first, each finding with its fix;
a healthy machine gets a short calm "all good" with its key facts."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.osreleases import label as os_label
from gpuenv.resolve.finding import Finding
from gpuenv.resolve.registry import AREAS, area_of
from gpuenv.resolve.report import Report

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from gpuenv.render.term import Term

_AREA_TITLES = {
    "platform": "Platform and kernel",
    "gpus": "GPUs",
    "nvidia": "NVIDIA and CUDA",
    "amd": "AMD and ROCm",
    "stacks": "Packages and sources",
    "torch": "PyTorch",
    "doctor": "The doctor itself",
}
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_MARK = {"error": "✗", "warning": "!", "info": "i"}


def grouped(findings: tuple[Finding, ...] | list[Finding]) -> list[tuple[str, list[Finding]]]:
    """(area, findings) with the areas holding the worst findings first; pure, for tests."""
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(area_of(f.code), []).append(f)
    order = sorted(groups, key=lambda a: (min(f.severity.rank for f in groups[a]), AREAS.index(a)))
    return [(a, sorted(groups[a], key=lambda f: f.severity.rank)) for a in order]


def target_line(report: Report, facts: Facts | None = None) -> str:
    t = report.target
    basis = t.extra.get("basis", "none")
    if not t.stack:
        both = facts is not None and facts.gpus_of("nvidia") and facts.gpus_of("amd")
        what = (
            "no GPU stack (NVIDIA and AMD GPUs: choose one with --target rocm|cuda)"
            if both
            else "no GPU stack (none installed, none needed)"
        )
    else:
        label = "ROCm" if t.stack == "rocm" else "CUDA"
        if t.stack == "cuda" and not t.version and basis == "installed":
            label = "the installed NVIDIA driver (no CUDA toolkit)"
            basis = "-"
        what = f"{label} {t.version or ''}".strip() + {
            "explicit": " (--target)",
            "installed": " (installed)",
            "auto": " (what `gpuenv install auto` would install)",
        }.get(basis, "")
        installed = t.extra.get("installed")
        if installed and installed != t.version:
            what = f"{label} {installed} (installed, " + (
                f"judged as {t.version})" if t.version else "not in the matrices: not judged)"
            )
    if t.torch:
        what += f", PyTorch {t.torch}"
    return what


def auto_notes(report: Report) -> list[str]:
    """What a bare box's target says about repository keys (#42): install auto's release pinned only
    with --trust-unconfirmed-key, a newer release that fits with it. Each a line of its own."""
    return [report.target.extra[k] for k in ("key", "newer") if report.target.extra.get(k)]


def _calm_rows(facts: Facts, summary_rows: Callable[[Facts], list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """The key facts of a healthy machine: the summary, its Stacks row cut down to the toolkit
    releases and the driver package (no list of package revisions). A summary that cannot be made
    is left out rather than turning "all good" into a traceback."""
    try:
        rows = summary_rows(facts)
    except Exception:  # noqa: BLE001 - the verdict matters more than the decoration
        return []
    stacks = [f"CUDA {t.version}" for t in facts.toolkits.cuda] + [f"ROCm {t.version}" for t in facts.toolkits.rocm]
    if facts.packages is not None:
        dkms = facts.packages.installed.get("amdgpu-dkms")
        if dkms:
            stacks.append(f"amdgpu-dkms {dkms.split(':', 1)[-1].split('-')[0]}")
    return [(label, "; ".join(stacks) or "none installed") if label == "Stacks" else (label, value)
            for label, value in rows]  # fmt: skip


def print_finding(term: Term, f: Finding, indent: str = "") -> None:
    """One finding as doctor and verify show it: severity, title, code, detail, fix (a
    consequence indented under its cause, and said to follow from it)."""
    sev = f.severity.value
    lead = (f"{indent}↳ {_MARK[sev]} {sev}", _STYLE[sev]) if f.cause else (f"{_MARK[sev]} {sev}", _STYLE[sev])
    term.line(lead, f" {f.title} ", (f.code + (f", follows from {f.cause}" if f.cause else ""), "dim"))
    term.line(f"{indent}    {f.detail}")
    lines = f.fix.splitlines()
    term.line(f"{indent}    ", ("fix:", "green"), f" {lines[0] if lines else ''}")
    for line in lines[1:]:
        term.line(f"{indent}         {line}")


def nested(
    findings: tuple[Finding, ...] | list[Finding],
) -> list[tuple[str, list[tuple[Finding, list[Finding]]]]]:
    """(area, [(finding, its consequences)]): the findings that stand on their own grouped by
    area as ``grouped`` does, each with the findings that follow from it (Finding.cause) under
    the first finding of their cause's code; pure, for tests."""
    under: dict[str, list[Finding]] = {}
    for f in findings:
        if f.cause:
            under.setdefault(f.cause, []).append(f)
    out = []
    for area, fs in grouped([f for f in findings if not f.cause]):
        rows = []
        for f in fs:
            rows.append((f, under.pop(f.code, [])))
        out.append((area, rows))
    return out


def counts_line(s: dict[str, int]) -> str:
    """'1 error (+2 consequences), 3 warnings'."""
    parts = [f"{n} {k}{'s' if n != 1 else ''}" for k in ("error", "warning", "info") if (n := s.get(k, 0))]
    more = s.get("consequences", 0)
    if more:
        extra = f"(+{more} consequence{'s' if more != 1 else ''})"
        if s.get("error"):
            parts[0] += f" {extra}"
        else:
            parts.append(extra)
    return ", ".join(parts)


def render_report(report: Report, facts: Facts, term: Term, only: Sequence[str] = ()) -> None:
    from gpuenv.render.facts import summary_rows

    s = report.summary()
    bundle = report.matrices or {}
    if not s["error"] and not s["warning"]:
        term.line(
            ("✓ All good", "bold green"),
            f" ({', '.join(only)} checked)" if only else "",
            f" — judged against {target_line(report, facts)}",
        )
        for note in auto_notes(report):
            term.line("  ", (note, "dim"))
        if not only:
            for label, value in _calm_rows(facts, summary_rows):
                term.line("  ", (f"{label:<10}", "dim"), f" {value}")
        for f in report.findings:
            term.line("  ", ("i", "cyan"), f" {f.title} ", (f"({f.code})", "dim"))
        if bundle:
            term.line("  ", (f"matrices {bundle.get('version')} ({bundle.get('origin')})", "dim"))
        return
    term.line(
        (counts_line(s) + _not_judged(report), "bold"), f" — judged against {target_line(report, facts)}"
    )
    for note in auto_notes(report):
        term.line("  ", (note, "dim"))
    for area, rows in nested(report.findings):
        term.line()
        term.line((_AREA_TITLES.get(area, area), "bold underline"))
        for f, consequences in rows:
            print_finding(term, f)
            for c in consequences:
                print_finding(term, c, indent="    ")
    if bundle:
        term.line()
        term.line((f"matrices {bundle.get('version')} ({bundle.get('origin')}); ignore a check with --ignore CODE", "dim"))


def _not_judged(report: Report) -> str:
    """'; not judged: rocm.release-unknown, os.unknown' where part of the machine went unjudged."""
    codes = dict.fromkeys(f.code for f in report.unjudged())
    return f"; not judged: {', '.join(codes)}" if codes else ""


def report_markdown(
    report: Report, facts: Facts, notice: str, text: Callable[[str], str] = lambda s: s, only: Sequence[str] = ()
) -> str:
    """`gpuenv doctor --format markdown`: one summary line, each finding with its fix in a fenced
    block, and the facts folded in <details>. ``facts`` is the (redacted) facts; ``text`` redacts
    the findings' strings the same way; ``notice`` is the one redaction line."""
    from gpuenv.render.facts import md_details, md_fence, md_summary_table, md_text
    from gpuenv.standins import jsonout

    s = report.summary()
    verdict = "All good" if not s["error"] and not s["warning"] else counts_line(s) + _not_judged(report)
    checked = f" ({', '.join(only)} checked)" if only else ""
    bundle = report.matrices or {}
    out = [
        md_text(
            f"**gpuenv doctor: {verdict}**{checked} — judged against {target_line(report, facts)}; "
            f"{os_label(facts.os)}, kernel {facts.kernel.release}"
            + (f"; gpuenv {facts.gpuenv_version}" if facts.gpuenv_version else "")
            + (f", matrices {bundle.get('version')}" if bundle.get("version") else "")
        ),
        *(md_text(note) for note in auto_notes(report)),
        f"> {md_text(notice)}",
    ]
    for area, rows in nested(report.findings):
        out.append(f"### {md_text(_AREA_TITLES.get(area, area))}")
        for f, consequences in rows:
            out.append("\n".join(_md_finding(f, text)))
            for c in consequences:
                # Under its cause, indented as a quotation: one cause, one heading.
                lines = "\n".join(_md_finding(c, text)).splitlines()
                out.append("\n".join("> " + line if line else ">" for line in lines))

    out.append(md_details("Machine summary", md_summary_table(facts)))
    out.append(md_details("Facts (gpuenv probe --json)", md_fence(jsonout.dumps(facts.to_dict()), "json")))
    out.append(md_details("Report (gpuenv doctor --json)", md_fence(jsonout.dumps(_redacted_report(report, text)), "json")))
    return "\n\n".join(out) + "\n"


def _md_finding(f: Finding, text: Callable[[str], str]) -> list[str]:
    from gpuenv.render.facts import md_fence, md_text

    sev = f.severity.value
    head = (
        f"↳ **{_MARK[sev]} {sev}** (follows from `{f.cause}`): {md_text(text(f.title))} (`{f.code}`)"
        if f.cause
        else f"#### {_MARK[sev]} {sev}: {md_text(text(f.title))} (`{f.code}`)"
    )
    block = [head, "", md_text(text(f.detail))]
    if f.fix:
        block += ["", "Fix:", "", md_fence(text(f.fix), "sh")]
    if f.refs:
        block += ["", "Refs: " + ", ".join(_ref(text(r)) for r in f.refs)]
    return block


def _ref(url: str) -> str:
    """A reference as a link only where it is a plain https URL; anything else as text."""
    import re

    from gpuenv.render.facts import md_text

    return f"<{url}>" if re.fullmatch(r"https://[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]+", url) else md_text(url)


def _redacted_report(report: Report, text: Callable[[str], str]) -> dict[str, Any]:
    doc: dict[str, Any] = report.to_dict()  # a JSON document: its values differ in kind
    for f in doc["findings"]:
        for key in ("title", "detail", "fix"):
            f[key] = text(f[key])
        for key in ("refs", "commands"):
            if key in f:
                f[key] = [text(r) for r in f[key]]
    if "source" in doc and doc["source"]:
        doc["source"] = text(doc["source"])
    if doc.get("matrices", {}).get("path"):
        doc["matrices"]["path"] = text(doc["matrices"]["path"])
    return doc
