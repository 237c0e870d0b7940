"""From hits to findings and the verdict: the one place where levels add up.

Each hit is judged by its table entry. Findings that need nothing of a person (portable) are
summed up per entry across the tree: the first place it is used, how many uses, the names used.
Findings that do (work, blocker) are kept per entry and file: the first place, every line
(``lines``), how many uses; so a kernel file with 300 full-mask shuffles is one finding with 300
lines, not 300 findings. The verdict is the worst level; the share of source lines needing a
person counts distinct source lines with a work or blocker finding (an asm() statement counts
every line it spans).

Two things keep a finding from deciding the verdict, each said in the finding and the reasons: one
in an optional part (``parts``: a nested package, ``contrib/``, a module reached only by guarded or
lazy imports, an extra) is listed under its part; a use on the CUDA side of the project's own HIP
conditional, in a file whose ROCm twin exists (csrc/cuda/attn.cu beside csrc/rocm/attn.hip), or in
a file only the CUDA build compiles (``buildmodel``), is *covered*: listed, needing no one for ROCm;
and a tree with evidence of its own ROCm build (HIP sources, HIP branches in kernel code, ROCm
branches in setup.py or CMake; never a test or a Python flag alone) is portable-with-work, not
cuda-only, its reasons naming the blockers that build covers and those it leaves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

from gpuenv.advise import LAZY
from gpuenv.advise.builds import BUILD_RULE
from gpuenv.advise.model import Advice, Finding, Hit, Level, Skipped, Verdict, Walked
from gpuenv.advise.ownership import drop_itself, drop_own_namespaces, integration
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
        level = entry.level
        portable = level is Level.PORTABLE
        covered = on_cuda_side and not portable
        optional = bool(optional_why) and not portable and optional_why != LAZY
        gkey = (entry.rule, "" if portable else where, level, covered, optional)
        group = groups.get(gkey)
        if group is None:
            group = groups[gkey] = _Group(hit)
        group.add(hit, where, line, what, not portable)
        if not portable and not covered and not optional and source_line:
            if where != person_path or path_lines is None:
                person_path, path_lines = where, person.setdefault(where, set())
            if span == 1:
                path_lines.add(line)
            else:
                path_lines.update(range(line, line + span))
    if walked.own_ns:
        drop_own_namespaces(groups, person, walked)
    itself = table.package(walked.name) if walked.name else None
    if itself is not None:
        drop_itself(groups, person, itself.rule.split(":", 1)[1])
    rocm_twins, rocm_path = walked.twins, tuple(walked.rocm)
    source_files, manifests, source_lines, skipped = (walked.source_files, walked.manifests, walked.source_lines,
                                                      walked.skipped)  # fmt: skip
    judged = walked.judged
    where_of = {w for (_, w, _, _, _) in groups if w}
    # A file whose ROCm twin exists (csrc/cuda/attn.cu, csrc/rocm/attn.hip) is covered as a whole;
    # so is one only the CUDA build compiles, in a tree that builds for ROCm too (buildmodel).
    handled = {w: "beside its ROCm twin file" for w in where_of if rocm_twins and twin_key(w) in rocm_twins}
    twins = _twin_directories(walked)
    for w in where_of:
        if w in twins:
            handled.setdefault(w, twins[w])
    rocm_compiled: set[str] = set()
    if rocm_path and walked.build is not None:
        from gpuenv.advise.buildmodel import cuda_only_files, rocm_compiled_files

        for w in cuda_only_files(walked.build, walked.c_paths, walked.includes) & where_of:
            handled.setdefault(w, "already handled by the ROCm build: only the CUDA build compiles it")
        rocm_compiled = rocm_compiled_files(walked.build, walked.c_paths, walked.includes) & where_of
    parts, run_time = _optional_parts(path, walked, where_of)
    for w, how in run_time.items():
        handled.setdefault(w, f"already handled by the ROCm build: {how}")
    # The CUDA build's own flags (-gencode, CUDA::cublas) in a build file with a ROCm branch: the
    # ROCm build has its own beside them.
    own = walked.build.files if rocm_path and walked.build is not None else set()
    findings = []
    for (rule, where, level, covered, _), g in groups.items():
        how = handled.get(where, "")
        if not how and rule == BUILD_RULE and where in own:
            how = "the CUDA build's own configuration, beside the ROCm branch of this build file"
        elif not how and rule == BUILD_RULE and rocm_path and _build_twin(where, walked):
            how = "the CUDA build's own build file: the ROCm build has its own beside it"
        elif not how and rule == BUILD_RULE and rocm_path and all(_QUIET_FIND.search(n) for n in g.names):
            # TileLang's find_package(CUDAToolkit QUIET): the build goes on without CUDA
            how = "an optional probe for CUDA (find_package ... QUIET): the ROCm build goes on without it"
        elif not how and level is Level.WORK and rocm_path and where in walked.ported:
            # bitsandbytes' gemm_4bit_simt.cu: a file with HIP branches of its own is one the
            # project's ROCm build compiles and adapts; what it left alone it left on purpose.
            how = "in a file the project's ROCm port adapts with HIP branches of its own"
        elif not how and level is Level.WORK and where in rocm_compiled:
            # vLLM's concat_mla_q.cuh (lane = threadIdx.x & 31): work-level code the project's own
            # ROCm build compiles and ships. A blocker there (PTX) is never excused this way.
            how = "compiled by the project's own ROCm build (its build files name it for ROCm)"
        part = parts.get(where, "")
        if not part and g.first.optional == LAZY:
            part = LAZY if rocm_path else integration(where, g.first.what) or "-"  # "-": not optional after all
        findings.append(g.finding(entries[rule], level, covered or bool(how), how, part))
    counted = {_place(f.where)[0] for f in findings if f.level is not Level.PORTABLE and not f.covered
               and not f.optional}  # fmt: skip
    person_lines = sum(len(v) for p, v in person.items() if p in counted)
    findings.sort(key=lambda f: (-_RANK[f.level], f.covered, bool(f.optional), _place(f.where)))
    if walked.stub:
        return _stub(path, walked, table, findings, source_files, manifests, skipped)
    if judged == 0 and not findings:
        return _unknown(path, source_files, manifests, skipped)
    # Covered uses need no one for ROCm: the project's own ROCm path has their alternative. Optional
    # parts (a nested package, contrib/, a guarded import, an extra) do not decide the verdict.
    worst = max((f.level for f in findings if not f.covered and not f.optional), key=_RANK.__getitem__,
                default=Level.PORTABLE)  # fmt: skip
    verdict = _VERDICT[worst]
    rocm_reasons = _rocm_reasons(rocm_path, findings)
    if verdict is Verdict.CUDA_ONLY and rocm_path:
        # CUDA-only kernels the build model could not place, beside a ROCm build of the project's
        # own: what a person must check is whether the ROCm build needs them (the reasons list them).
        verdict = Verdict.WORK
    port = _port(walked, table)
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
        ptx=inventory(walked.ptx, findings, table),
        port=port,
    )


_QUIET_FIND = re.compile(r"^\s*find_package\s*\(\s*CUDA\w*\b(?![^)]*\bREQUIRED\b)[^)]*\bQUIET\b", re.IGNORECASE)
_CUDA_DIRS = frozenset({"cuda", "nvidia", "nv"})
_ROCM_DIRS = frozenset({"rocm", "amd", "hip"})


def _twin_directories(walked: Walked) -> dict[str, str]:
    """Files under a cuda/ or nvidia/ directory whose sibling rocm/, amd/ or hip/ directory
    exists (vLLM's models/kimi_k3/nvidia/ beside models/kimi_k3/amd/): the ROCm port has its own."""
    if not walked.rocm:
        return {}
    parents = set()
    # Cython bindings too (cupy_backends/cuda/api/driver.pyx beside cupy_backends/hip/).
    paths = walked.c_paths + walked.cython_paths + (walked.parts.modules if walked.parts is not None else [])
    for p in paths:
        segments = p.split("/")[:-1]
        for i, seg in enumerate(segments):
            if seg.lower() in _ROCM_DIRS:
                parents.add("/".join(segments[:i]))
    out = {}
    for w in paths:
        segments = w.split("/")[:-1]
        for i, seg in enumerate(segments):
            if seg.lower() in _CUDA_DIRS and "/".join(segments[:i]) in parents:
                out[w] = f"beside its ROCm twin directory ({'/'.join(segments[:i] + ['...'])})"
                break
    return out


_CUDA_WORDS = ("cuda", "nvidia")
_ROCM_WORDS = ("hip", "rocm", "amd")


def _build_twin(path: str, walked: Walked) -> bool:
    """Whether a build file sits in a directory named for CUDA whose ROCm-named sibling holds a
    build file too (llama.cpp's ggml/src/ggml-cuda/CMakeLists.txt beside ggml-hip/)."""
    segments = path.split("/")[:-1]
    dirs = {p.rpartition("/")[0] for p in walked.build_paths}
    for i, seg in enumerate(segments):
        for cuda in _CUDA_WORDS:
            if cuda in seg.lower():
                for rocm in _ROCM_WORDS:
                    twin = "/".join(segments[:i] + [seg.lower().replace(cuda, rocm)])
                    if any(d.lower() == twin or d.lower().startswith(twin + "/") for d in dirs):
                        return True
    return False


def _optional_parts(root: str, walked: Walked, where_of: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """File -> the optional part it is in, for the files with findings; and file -> why a kernel
    compiled at run time is the CUDA path's (``parts.jit_parts``)."""
    from gpuenv.advise.parts import is_backend, optional_modules, optional_part, package_dirs

    p = walked.parts
    if p is None:
        return {}, {}
    # A nested package is optional beside a package at the top; without one it is the project.
    top = "setup.py" in p.roots or "pyproject.toml" in p.roots
    packages = p.packages if top else set()
    modules: dict[str, str] = {}
    packaged = package_dirs(p) if top else None
    if any(w.endswith(".py") for w in where_of) or p.loads:
        outside = set(_twin_directories(walked))
        if walked.rocm:
            outside |= {m for m in p.modules if is_backend(m)}
        if p.installed:
            # Modules of packages pyproject.toml does not install (Megatron's tools/): what they
            # import at module level is not made core by them.
            outside |= {m for m in p.modules if p.not_installed(m)}
        modules = optional_modules(p, outside)
    out = {}
    for w in where_of:
        why = optional_part(w, packages, modules, packaged, bool(walked.rocm), p)
        if why:
            out[w] = why
    # Kernels compiled at run time follow the Python that names them, beside a ROCm build of the
    # tree's own only: without one, a lazily imported loader is no evidence the core runs without it.
    if walked.rocm and p.loads and any(w in where_of and w not in out for w in walked.c_paths):
        cache: dict[str, str] = {}

        def why_of(module: str) -> str:
            if module not in cache:
                cache[module] = optional_part(module, packages, modules, packaged, bool(walked.rocm), p)
            return cache[module]

        from gpuenv.advise.parts import jit_parts, resolver
        from gpuenv.advise.switches import Reader

        optional, cuda = jit_parts(p, walked.c_paths, walked.includes, why_of, Reader(_reader(root), resolver(p)))
        for w, why in optional.items():
            if w in where_of and w not in out:
                out[w] = f"{w.rpartition('/')[0]}/ ({why})"
        return out, {w: how for w, how in cuda.items() if w in where_of and w not in out}
    return out, {}


def _reader(root: str) -> Callable[[str], str | None]:
    """The text of a file of the tree (its path relative to ``root``), read again as the walk read
    it; None when that fails now."""
    from gpuenv.advise.tree import read_text

    return lambda relative: read_text(os.path.join(root, relative))


def _port(walked: Walked, table: Table) -> str:
    entry = table.port(walked.name) if walked.name else None
    return entry or ""


def _stub(path: str, walked: Walked, table: Table, findings: list[Finding], source_files: int, manifests: int,
          skipped: Skipped) -> Advice:  # fmt: skip
    """An sdist whose setup.py only raises: its code is elsewhere. Judged by its name alone:
    cuda-only when the table says so of that distribution, unknown otherwise; never portable."""
    entry = table.package(walked.name) if walked.name else None
    named = f" ({walked.name})" if walked.name else ""
    reason = f"a stub, not the source: {walked.stub}"
    if entry is not None and entry.level is Level.BLOCKER:
        verdict = Verdict.CUDA_ONLY
        reasons = (reason, f"its distribution{named} is CUDA-only: {entry.why} (source: {entry.source})")
    else:
        verdict = Verdict.UNKNOWN
        reasons = (reason, f"nothing to judge here{named}: advise the project's source checkout")
    return Advice(path=path, verdict=verdict, reasons=reasons, findings=tuple(findings), source_files=source_files,
                  manifests=manifests, source_lines=walked.source_lines, person_lines=0, skipped=skipped,
                  next_command=_NEXT[verdict], looked_for=LOOKED_FOR if verdict is Verdict.UNKNOWN else "")  # fmt: skip


def inventory(ptx: dict[tuple[str, int], tuple[str, ...]], findings: list[Finding],
              table: Table) -> tuple[dict[str, object], ...]:  # fmt: skip
    """The distinct PTX instructions of the inline-PTX findings: count, files, how many uses count
    (not covered, not optional), and the AMD counterpart from the table."""
    if not ptx:
        return ()
    state: dict[str, tuple[bool, bool]] = {}  # file -> (covered, optional) of its inline PTX finding
    for f in findings:
        if f.rule == "construct:inline-ptx":
            state[_place(f.where)[0]] = (f.covered, bool(f.optional))
    rows: dict[str, dict[str, object]] = {}
    for (where, _), ops in sorted(ptx.items()):
        covered, optional = state.get(where, (True, False))
        for op in ops:
            row = rows.get(op)
            if row is None:
                counterpart = table.ptx(op)
                row = rows[op] = {"instruction": op, "count": 0, "counted": 0, "files": [],
                                  "rocm": counterpart[0] if counterpart else "none known: a person must redesign it",
                                  "source": counterpart[1] if counterpart else None}  # fmt: skip
            row["count"] = int(str(row["count"])) + 1
            if not covered and not optional:
                row["counted"] = int(str(row["counted"])) + 1
            files = row["files"]
            if isinstance(files, list) and where not in files:
                files.append(where)
    return tuple(sorted(rows.values(), key=lambda r: (-int(str(r["count"])), str(r["instruction"]))))


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

    def finding(self, entry: Entry, level: Level, covered: bool, handled: str = "", part: str = "") -> Finding:
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
            optional=("" if part == "-" else part or first.optional) if level is not Level.PORTABLE else "",
            covered=covered,
            handled=handled or ("on the CUDA side of the project's own HIP branch" if covered else ""),
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
    blockers = [f for f in findings if f.level is Level.BLOCKER and not f.optional]
    covered = [f for f in blockers if f.covered]
    left = [f for f in blockers if not f.covered]
    out = [f"the project builds for ROCm itself ({signs[0]}" + (f", +{len(signs) - 1} more" if len(signs) > 1 else "")
           + ")"]  # fmt: skip
    if covered:
        out.append(f"its ROCm path covers {_count(covered)} ({_names([f'{f.name} at {f.where}' for f in covered])}): "
                   "each sits on the CUDA side of a HIP branch, beside a ROCm twin file, or in code only the CUDA build "
                   "compiles")  # fmt: skip
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
    if verdict is Verdict.PORTABLE and not any(f.optional and f.level is not Level.PORTABLE for f in findings):
        if not findings:
            return ["nothing CUDA-specific found: no CUDA calls, libraries, constructs or CUDA-only dependencies"]
        return [f"every GPU dependency and call found has a ROCm build or a mechanical HIP translation "
                f"({_names([f.name for f in findings if f.level is Level.PORTABLE] or [f.name for f in findings])})"]  # fmt: skip
    by_rule: dict[str, list[Finding]] = {}
    optional: dict[str, Level] = {}
    for f in findings:  # already worst first, then by place
        if f.level is not Level.PORTABLE and not f.covered and not f.optional:
            by_rule.setdefault(f.rule, []).append(f)
        elif f.optional and not f.covered and f.level is not Level.PORTABLE:
            part = f.optional.split(" (", 1)[0]
            optional[part] = max(optional.get(part, f.level), f.level, key=_RANK.__getitem__)
    out = []
    for rule, group in by_rule.items():
        first, uses = group[0], sum(f.count for f in group)
        more = f", +{uses - 1} more" if uses > 1 else ""
        label = first.name if rule.startswith(("construct:", "library:")) else first.what
        word = "CUDA-only" if first.level is Level.BLOCKER else "needs a person"
        out.append(f"{label} ({first.where}{more}): {word}")
    if not out:
        out.append("the core needs nothing of a person: every CUDA-specific use found is covered by the project's "
                   "ROCm build or in an optional part")  # fmt: skip
    if optional:
        shown = [f"{part} ({'cuda-only' if level is Level.BLOCKER else 'needs work'})" for part, level in optional.items()]
        out.append(f"optional: {_names(shown)}; the verdict follows the core")
    return out
