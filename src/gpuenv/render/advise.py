"""Human rendering of `gpuenv advise`: the verdict, why, the cost, then the findings by level.

Findings of one table entry are shown together (the first files and their lines, then a
count), so a tree with thousands of uses still prints a screenful; ``--json`` carries them all.
"""

from __future__ import annotations

from gpuenv.advise.model import Advice, Finding, Level, Verdict

TYPE_CHECKING = False  # typing's flag without importing typing, nor rich until it renders
if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {Verdict.PORTABLE: "bold green", Verdict.WORK: "bold yellow", Verdict.CUDA_ONLY: "bold red",
          Verdict.UNKNOWN: "bold"}  # fmt: skip
_HEADING = {Level.BLOCKER: ("CUDA-only", "red"), Level.WORK: ("Needs a person", "yellow"),
            Level.PORTABLE: ("Portable", "green")}  # fmt: skip
_PLACES = 3  # places shown per entry before "+N more"


def lines(advice: Advice) -> list[tuple[str, str]]:
    """(style, text) lines; pure, so it is tested without a terminal."""
    out: list[tuple[str, str]] = [(_STYLE[advice.verdict], f"{advice.path}: {advice.verdict.value}")]
    out += [("", f"  - {r}") for r in advice.reasons]
    out.append(("", ""))
    out.append(("bold", f"Source lines needing a person: {advice.person_lines:,} of {advice.source_lines:,} "
                        f"({advice.share:.2%}) in {advice.source_files:,} source file{'' if advice.source_files == 1 else 's'}"))  # fmt: skip
    if advice.port:
        out.append(("", f"  - a ROCm port is maintained outside this project: {advice.port}"))
    for level in (Level.BLOCKER, Level.WORK, Level.PORTABLE):
        groups: dict[str, list[Finding]] = {}
        for f in advice.findings:
            if f.level is level and not f.optional:
                groups.setdefault(f.rule, []).append(f)
        if not groups:
            continue
        title, style = _HEADING[level]
        out.append(("", ""))
        uses = sum(f.count for fs in groups.values() for f in fs)
        covered = sum(f.count for fs in groups.values() for f in fs if f.covered)
        more = f", {covered:,} covered by the project's ROCm path" if covered else ""
        out.append((f"bold {style}", f"{title} ({uses:,}{more}):"))
        for members in groups.values():
            out += _group(members, style)
    out += _optional(advice)
    out += _ptx(advice)
    if advice.skipped.total or advice.skipped.ignore_lines:
        s = advice.skipped
        parts = [f"{n} {what}" for n, what in ((s.binary, "binary"), (s.unreadable, "unreadable"),
                 (s.too_large, "too large"), (s.outside_tree, "links out of the tree"),
                 (s.unparsable, "manifests that do not parse"),
                 (s.ignored, "ignored (what .gitignore ignores; build, dist, *.egg-info and venv directories)"),
                 (s.ignore_lines, ".gitignore lines whose pattern does not compile (skipped, as git does)")) if n]  # fmt: skip
        out.append(("", ""))
        out.append(("dim", f"Skipped: {', '.join(parts)}"))
    out.append(("", ""))
    out.append(("bold", f"Next: {advice.next_command}"))
    return out


def _group(members: list[Finding], style: str) -> list[tuple[str, str]]:
    first = members[0]
    uses = sum(f.count for f in members)
    if first.level is Level.PORTABLE:
        out = [(style, f"  {first.name}: {first.what}  ({_uses(uses)}, first at {first.where})")]
    else:
        out = [(style, f"  {first.name} ({_uses(uses)} in {len(members):,} file{'' if len(members) == 1 else 's'})")]
        for f in members[:_PLACES]:
            path = f.where.rpartition(":")[0]
            shown = ", ".join(str(n) for n in f.lines[:8]) + (f", ... ({len(f.lines):,} lines)" if len(f.lines) > 8
                                                            else "")  # fmt: skip
            tags = "".join(f"  [{t}]" for t in (("covered by the ROCm path" if f.covered else ""),
                                                (f"optional: {f.optional}" if f.optional else "")) if t)  # fmt: skip
            out.append(("", f"      {f.where}  {f.what}{tags}"))
            if len(f.lines) > 1:
                out.append(("dim", f"        {path} lines {shown}"))
        if len(members) > _PLACES:
            out.append(("dim", f"      ... and {len(members) - _PLACES:,} more files (--json lists them all)"))
    out.append(("", f"      why: {first.why}"))
    if first.rocm_equivalent:
        out.append(("", f"      ROCm: {first.rocm_equivalent}"))
    out.append(("dim", f"      source: {first.source}"))
    return out


def _optional(advice: Advice) -> list[tuple[str, str]]:
    rows = advice.optional_parts()
    if not rows:
        return []
    out = [("", ""), ("bold", "Optional CUDA-only parts (they do not decide the verdict):")]
    for r in rows:
        level = "cuda-only" if r["verdict"] == "blocker" else "needs work"
        out.append(("red" if r["verdict"] == "blocker" else "yellow",
                    f"  {r['part']}: {level}, {_uses(r['count'])} ({', '.join(r['names'])})"))  # fmt: skip
    return out


def _ptx(advice: Advice) -> list[tuple[str, str]]:
    if not advice.ptx:
        return []
    out = [("", ""), ("bold", "Inline PTX, by instruction (uses; uses the ROCm build needs; files):")]
    for r in advice.ptx:
        files = list(r["files"])
        shown = ", ".join(files[:_PLACES]) + (f" (+{len(files) - _PLACES} more)" if len(files) > _PLACES else "")
        out.append(("", f"  {r['instruction']}: {r['count']}; {r['counted']}; {shown}"))
        out.append(("dim", f"      AMD: {r['rocm']}"))
    return out


def _uses(n: int) -> str:
    return f"{n:,} use" + ("" if n == 1 else "s")


def render_advice(advice: Advice, console: Console) -> None:
    from rich.text import Text

    for style, text in lines(advice):
        console.print(Text(text, style=style or ""))
