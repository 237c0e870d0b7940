"""From hits to findings and the verdict: the one place where levels add up.

Each hit is judged by its table entry. Findings that need nothing of a person (portable) are
summed up per entry across the tree: the first place it is used, how many uses, the names used.
Findings that do (work, blocker) are kept per entry and file: the first place, every line
(``lines``), how many uses; so a kernel file with 300 full-mask shuffles is one finding with 300
lines, not 300 findings. The verdict is the worst level; the share of source lines needing a
person counts distinct source lines with a work or blocker finding (an asm() statement counts
every line it spans).

Three things move a finding off its table level, each said in the finding and the reasons: an
import inside ``try:``/``if ...:`` is optional and one level lower (blocker -> work -> portable);
a use on the CUDA side of the project's own HIP conditional, or in a file whose ROCm twin exists
(csrc/cuda/attn.cu beside csrc/rocm/attn.hip), is *covered*: listed, but needing no one for ROCm;
and a tree with evidence of its own ROCm build (HIP sources, HIP branches in kernel code, ROCm
branches in setup.py or CMake; never a test or a Python flag alone) is portable-with-work, not
cuda-only, its reasons naming the blockers that build covers and those it leaves.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuenv.advise.model import Advice, Finding, Hit, Level, Skipped, Verdict, Walked
from gpuenv.advise.regions import twin_key
from gpuenv.advise.table import Entry, Table

_RANK = {Level.PORTABLE: 0, Level.WORK: 1, Level.BLOCKER: 2}
_VERDICT = {Level.PORTABLE: Verdict.PORTABLE, Level.WORK: Verdict.WORK, Level.BLOCKER: Verdict.CUDA_ONLY}
_NEXT = {
    # Portable, or portable once the work is done: ROCm can be set up meanwhile.
    Verdict.PORTABLE: "gpuenv install rocm --dry-run",
    Verdict.WORK: "gpuenv install rocm --dry-run",
    # CUDA-only as written: stay on CUDA until the blockers are ported.
    Verdict.CUDA_ONLY: "gpuenv install cuda --dry-run",
    # Nothing judged: read the tree that holds the code (a source checkout, not a stub).
    Verdict.UNKNOWN: "gpuenv advise PATH-OF-THE-SOURCE-CHECKOUT",
}
_LOWER = {Level.BLOCKER: Level.WORK, Level.WORK: Level.PORTABLE, Level.PORTABLE: Level.PORTABLE}
LOOKED_FOR = ("source files (.cu .cuh .cpp .cc .c .h .hpp .py .pyx .pxd), HIP sources (.hip), build files "
              "(CMakeLists.txt, *.cmake, setup*.py), and GPU dependencies or base images in manifests "
              "(requirements*.txt, pyproject.toml, setup.cfg, environment.yml, Pipfile, lock files, Dockerfiles)")
_SHOWN_NAMES = 4


def judge(path: str, hits: Iterable[Hit], table: Table, walked: Walked) -> Advice:
    """The advice of the hits, and of what the walk counted (read once the hits are spent)."""
    rules = table.rules
    lookups = {"package": table.package, "image": table.image, "import": table.module}
    cache: dict[tuple[str, str], Entry | None] = {}
    seen_imports: set[tuple[str, str, int]] = set()
    groups: dict[tuple[str, str, Level, bool, bool], _Group] = {}
    entries: dict[str, Entry] = {}
    person: dict[str, set[int]] = {}  # path -> distinct lines needing a person
    path_lines: set[int] | None = None  # the set in ``person`` of the path of the last hit
    person_path = None
    for hit in hits:
        # Unpacked once: a big tree has 180,000 hits, and each field read by name costs a lookup.
        rule, what, where, line, _, source_line, span, optional_why, on_cuda_side = hit
        lookup = lookups.get(rule)
        if lookup is None:
            entry = rules.get(rule)
        else:
            key = (rule, what)
            entry = cache[key] if key in cache else cache.setdefault(key, lookup(what))
        if entry is None:
            continue
        if rule == "import":  # "from cuda.bindings import driver": one import, two candidate names
            seen = (entry.rule, where, line)
            if seen in seen_imports:
                continue
            seen_imports.add(seen)
        entries[entry.rule] = entry
        level = _LOWER[entry.level] if optional_why else entry.level
        portable = level is Level.PORTABLE
        covered = on_cuda_side and not portable
        optional = bool(optional_why) and entry.level is not Level.PORTABLE
        gkey = (entry.rule, "" if portable else where, level, covered, optional)
        group = groups.get(gkey)
        if group is None:
            group = groups[gkey] = _Group(hit)
        group.add(hit, where, line, what, not portable)
        if not portable and not covered and source_line:
            if where != person_path or path_lines is None:
                person_path, path_lines = where, person.setdefault(where, set())
            if span == 1:
                path_lines.add(line)
            else:
                path_lines.update(range(line, line + span))
    rocm_twins, rocm_path = walked.twins, tuple(walked.rocm)
    source_files, manifests, source_lines, skipped = (walked.source_files, walked.manifests, walked.source_lines,
                                                      walked.skipped)  # fmt: skip
    judged = walked.judged
    # A file whose ROCm twin exists (csrc/cuda/attn.cu, csrc/rocm/attn.hip) is covered as a whole.
    twinned = {w for (_, w, _, _, _) in groups if w and rocm_twins and twin_key(w) in rocm_twins}
    findings = [g.finding(entries[rule], level, covered or (bool(where) and where in twinned))
                for (rule, where, level, covered, _), g in groups.items()]  # fmt: skip
    person_lines = sum(len(v) for p, v in person.items() if p not in twinned)
    findings.sort(key=lambda f: (-_RANK[f.level], f.covered, _place(f.where)))
    if judged == 0 and not findings:
        return _unknown(path, source_files, manifests, skipped)
    # Covered uses need no one for ROCm: the project's own ROCm path has their alternative.
    worst = max((f.level for f in findings if not f.covered), key=_RANK.__getitem__, default=Level.PORTABLE)
    verdict = _VERDICT[worst]
    rocm_reasons = _rocm_reasons(rocm_path, findings)
    if verdict is Verdict.CUDA_ONLY and rocm_path:
        # flash-attn, vLLM: CUDA-only kernels beside a ROCm build of their own. What a person
        # must check is whether the ROCm build needs the blockers it leaves (the reasons list them).
        verdict = Verdict.WORK
    return Advice(
        path=path,
        verdict=verdict,
        reasons=tuple(rocm_reasons + _reasons(verdict, findings)),
        findings=tuple(findings),
        source_files=source_files,
        manifests=manifests,
        source_lines=source_lines,
        person_lines=person_lines,
        skipped=skipped,
        next_command=_NEXT[verdict],
        rocm_path=rocm_path,
    )


def _unknown(path: str, source_files: int, manifests: int, skipped: Skipped) -> Advice:
    """A tree with nothing to judge (an sdist stub, a docs-only checkout): not portable, unknown."""
    return Advice(
        path=path,
        verdict=Verdict.UNKNOWN,
        reasons=(f"nothing to judge: no source, build or dependency to read (looked for {LOOKED_FOR}); "
                 f"{manifests} manifest(s) name no GPU dependency, {skipped.total} file(s) skipped",),  # fmt: skip
        findings=(),
        source_files=source_files,
        manifests=manifests,
        source_lines=0,
        person_lines=0,
        skipped=skipped,
        next_command=_NEXT[Verdict.UNKNOWN],
        looked_for=LOOKED_FOR,
    )


class _Group:
    """The uses one finding stands for, summed up as they come (a tree's hits are never all held:
    CUTLASS has 170,000): the first place, how many, the lines (per-file findings), the names."""

    __slots__ = ("first", "count", "lines", "names")

    def __init__(self, first: Hit) -> None:
        self.first = first
        self.count = 0
        self.lines: set[int] = set()
        self.names: dict[str, None] = {}

    def add(self, hit: Hit, path: str, line: int, what: str, per_file: bool) -> None:
        """Count ``hit`` (its path, line and name as the caller unpacked them)."""
        self.count += 1
        if per_file:
            self.lines.add(line)
        elif (path, line) < (self.first.path, self.first.line):
            self.first = hit  # portable findings: the first place in the tree
        self.names[what] = None  # distinct names only: "cutlass::gemm" 10,000 times is one

    def finding(self, entry: Entry, level: Level, covered: bool) -> Finding:
        first = self.first
        if first.kind == "construct" or first.kind == "extension" or first.kind == "build":
            what = first.what  # a construct as written on its first line; the others are in ``lines``
        else:
            what = _names(list(self.names))
        return Finding(
            level=level,
            what=what,
            where=f"{first.path}:{first.line}",
            why=entry.why,
            rocm_equivalent=entry.rocm_equivalent,
            source=entry.source,
            kind=first.kind,
            rule=entry.rule,
            name=entry.name,
            count=self.count,
            lines=tuple(sorted(self.lines)),
            optional=first.optional,
            covered=covered,
        )


def _place(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")
    return path, int(line)


def _names(whats: list[str]) -> str:
    distinct = list(dict.fromkeys(whats))
    shown = ", ".join(distinct[:_SHOWN_NAMES])
    return shown + (f" (+{len(distinct) - _SHOWN_NAMES} more)" if len(distinct) > _SHOWN_NAMES else "")


def _rocm_reasons(signs: tuple[str, ...], findings: list[Finding]) -> list[str]:
    if not signs:
        return []
    blockers = [f for f in findings if f.level is Level.BLOCKER]
    covered = [f for f in blockers if f.covered]
    left = [f for f in blockers if not f.covered]
    out = [f"the project builds for ROCm itself ({signs[0]}" + (f", +{len(signs) - 1} more" if len(signs) > 1 else "")
           + ")"]  # fmt: skip
    if covered:
        out.append(f"its ROCm path covers {_count(covered)} ({_names([f'{f.name} at {f.where}' for f in covered])}): "
                   "each sits on the CUDA side of a HIP branch, or beside a ROCm twin file")  # fmt: skip
    if left:
        out.append(f"it leaves {_count(left)} on the CUDA path ({_names([f'{f.name} at {f.where}' for f in left])}): "
                   "check that the ROCm build does not need them")  # fmt: skip
    elif blockers:
        out.append("it leaves no blocker uncovered")
    return out


def _count(findings: list[Finding]) -> str:
    n = sum(f.count for f in findings)
    return f"{n:,} blocker use{'' if n == 1 else 's'} in {len(findings):,} file{'' if len(findings) == 1 else 's'}"


def _reasons(verdict: Verdict, findings: list[Finding]) -> list[str]:
    """One line per table entry that decided the verdict, worst first, with its first place."""
    if verdict is Verdict.PORTABLE:
        if not findings:
            return ["nothing CUDA-specific found: no CUDA calls, libraries, constructs or CUDA-only dependencies"]
        return [f"every GPU dependency and call found has a ROCm build or a mechanical HIP translation "
                f"({_names([f.name for f in findings])})"]  # fmt: skip
    by_rule: dict[str, list[Finding]] = {}
    for f in findings:  # already worst first, then by place
        if f.level is not Level.PORTABLE and not f.covered:
            by_rule.setdefault(f.rule, []).append(f)
    out = []
    for rule, group in by_rule.items():
        first, uses = group[0], sum(f.count for f in group)
        more = f", +{uses - 1} more" if uses > 1 else ""
        label = first.name if rule.startswith(("construct:", "library:")) else first.what
        word = "CUDA-only" if first.level is Level.BLOCKER else "needs a person"
        if first.optional:
            word += f" (an optional import, {first.optional}: one level below the table's)"
        out.append(f"{label} ({first.where}{more}): {word}")
    return out
