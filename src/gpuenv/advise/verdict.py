"""From hits to findings and the verdict: the one place where levels add up.

Each hit is judged by its table entry. Findings that need nothing of a person (portable) are
summed up per entry across the tree: the first place it is used, how many uses, the names used.
Findings that do (work, blocker) are kept per entry and file: the first place, every line
(``lines``), how many uses; so a kernel file with 300 full-mask shuffles is one finding with 300
lines, not 300 findings. The verdict is the worst level; the share of source lines needing a
person counts distinct source lines with a work or blocker finding (an asm() statement counts
every line it spans).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuenv.advise.model import Advice, Finding, Hit, Level, Skipped, Verdict
from gpuenv.advise.table import Entry, Table

_RANK = {Level.PORTABLE: 0, Level.WORK: 1, Level.BLOCKER: 2}
_VERDICT = {Level.PORTABLE: Verdict.PORTABLE, Level.WORK: Verdict.WORK, Level.BLOCKER: Verdict.CUDA_ONLY}
_NEXT = {
    # Portable, or portable once the work is done: ROCm can be set up meanwhile.
    Verdict.PORTABLE: "gpuenv install rocm --dry-run",
    Verdict.WORK: "gpuenv install rocm --dry-run",
    # CUDA-only as written: stay on CUDA until the blockers are ported.
    Verdict.CUDA_ONLY: "gpuenv install cuda --dry-run",
}
_SHOWN_NAMES = 4


def judge(
    path: str,
    hits: Iterable[Hit],
    table: Table,
    *,
    source_files: int,
    manifests: int,
    source_lines: int,
    skipped: Skipped,
    rocm_path: tuple[str, ...] = (),
) -> Advice:
    rules = table.rules
    lookups = {"package": table.package, "image": table.image, "import": table.module}
    cache: dict[tuple[str, str], Entry | None] = {}
    seen_imports: set[tuple[str, str, int]] = set()
    groups: dict[tuple[str, str], list[Hit]] = {}
    entries: dict[str, Entry] = {}
    person: set[tuple[str, int]] = set()
    for hit in hits:
        lookup = lookups.get(hit.rule)
        if lookup is None:
            entry = rules.get(hit.rule)
        else:
            key = (hit.rule, hit.what)
            entry = cache[key] if key in cache else cache.setdefault(key, lookup(hit.what))
        if entry is None:
            continue
        if hit.rule == "import":  # "from cuda.bindings import driver": one import, two candidate names
            seen = (entry.rule, hit.path, hit.line)
            if seen in seen_imports:
                continue
            seen_imports.add(seen)
        entries[entry.rule] = entry
        portable = entry.level is Level.PORTABLE
        groups.setdefault((entry.rule, "" if portable else hit.path), []).append(hit)
        if not portable and hit.source_line:
            if hit.span == 1:
                person.add((hit.path, hit.line))
            else:
                person.update((hit.path, n) for n in range(hit.line, hit.line + hit.span))

    findings = [_finding(entries[rule], members, bool(where)) for (rule, where), members in groups.items()]
    findings.sort(key=lambda f: (-_RANK[f.level], _place(f.where)))
    worst = max((f.level for f in findings), key=_RANK.__getitem__, default=Level.PORTABLE)
    verdict = _VERDICT[worst]
    if verdict is Verdict.CUDA_ONLY and rocm_path:
        # flash-attn, vLLM: CUDA-only kernels beside a ROCm build of their own. The blockers are
        # on the CUDA path; what a person must check is whether the ROCm path covers them.
        verdict = Verdict.WORK
    return Advice(
        path=path,
        verdict=verdict,
        reasons=tuple(_rocm_reasons(rocm_path) + _reasons(verdict, findings)),
        findings=tuple(findings),
        source_files=source_files,
        manifests=manifests,
        source_lines=source_lines,
        person_lines=len(person),
        skipped=skipped,
        next_command=_NEXT[verdict],
        rocm_path=rocm_path,
    )


def _finding(entry: Entry, members: list[Hit], per_file: bool) -> Finding:
    first = min(members, key=lambda h: (h.path, h.line)) if not per_file else members[0]
    if first.kind == "construct" or first.kind == "extension":
        what = first.what  # a construct as written on its first line; the others are in ``lines``
    else:
        what = _names([h.what for h in members])
    return Finding(
        level=entry.level,
        what=what,
        where=f"{first.path}:{first.line}",
        why=entry.why,
        rocm_equivalent=entry.rocm_equivalent,
        source=entry.source,
        kind=first.kind,
        rule=entry.rule,
        name=entry.name,
        count=len(members),
        lines=tuple(sorted({h.line for h in members})) if per_file else (),
    )


def _place(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")
    return path, int(line)


def _names(whats: list[str]) -> str:
    distinct = list(dict.fromkeys(whats))
    shown = ", ".join(distinct[:_SHOWN_NAMES])
    return shown + (f" (+{len(distinct) - _SHOWN_NAMES} more)" if len(distinct) > _SHOWN_NAMES else "")


def _rocm_reasons(signs: tuple[str, ...]) -> list[str]:
    if not signs:
        return []
    return [f"the project has its own ROCm build ({signs[0]}"
            + (f", +{len(signs) - 1} more" if len(signs) > 1 else "") + "): its CUDA-only pieces are on the "
            "CUDA path; check that the ROCm path covers what you use"]  # fmt: skip


def _reasons(verdict: Verdict, findings: list[Finding]) -> list[str]:
    """One line per table entry that decided the verdict, worst first, with its first place."""
    if verdict is Verdict.PORTABLE:
        if not findings:
            return ["nothing CUDA-specific found: no CUDA calls, libraries, constructs or CUDA-only dependencies"]
        return [f"every GPU dependency and call found has a ROCm build or a mechanical HIP translation "
                f"({_names([f.name for f in findings])})"]  # fmt: skip
    by_rule: dict[str, list[Finding]] = {}
    for f in findings:  # already worst first, then by place
        if f.level is not Level.PORTABLE:
            by_rule.setdefault(f.rule, []).append(f)
    out = []
    for rule, group in by_rule.items():
        first, uses = group[0], sum(f.count for f in group)
        more = f", +{uses - 1} more" if uses > 1 else ""
        label = first.name if rule.startswith(("construct:", "library:")) else first.what
        word = "CUDA-only" if first.level is Level.BLOCKER else "needs a person"
        out.append(f"{label} ({first.where}{more}): {word}")
    return out
