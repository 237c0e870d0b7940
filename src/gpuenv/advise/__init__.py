"""`gpuenv advise`: can this source tree run on ROCm, and what would moving cost?

``advise(path)`` is the one entry point: it walks the tree once (``tree``), parses each
manifest statically (``deps``, ``images``), scans each source and build file once (``sources``,
``builds``), tells the project's own ROCm port apart (``regions``, ``asm``) and judges every hit
by the bundled, sourced table (``table``, matrices/advise.json) into findings and a verdict
(``verdict``). No printing and no rich here: ``gpuenv.render.advise`` renders.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from gpuenv.advise.model import Advice, Hit, Level, Skipped, Walked

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.advise.deps import Dep
    from gpuenv.advise.table import Table

_ROCM_SHOWN = 5  # pieces of evidence of an existing ROCm build listed
# An import inside a function: it runs when that code path does. Optional only in a tree that
# builds for ROCm itself (vLLM's flashinfer backends), where the ROCm path is the project's own.
LAZY = "inside a function: imported when that code runs"


class AdviseError(ValueError):
    """Input advise cannot read (a missing path, a file): one line, exit status 2."""


def advise(path: str) -> Advice:
    from gpuenv.advise.table import load
    from gpuenv.advise.verdict import judge

    if not os.path.lexists(path):
        raise AdviseError(f"{path}: no such directory")
    if not os.path.isdir(path):
        raise AdviseError(f"{path}: not a directory (advise reads a source tree)")
    table = load()
    walked = Walked()
    return judge(path, _hits(path, table, walked), table, walked)


def _hits(path: str, table: Table, walked: Walked) -> Iterator[Hit]:
    """Every hit of the tree, file by file, as the walk reads it; ``walked`` counts the rest."""
    from gpuenv.advise.buildmodel import BuildModel, read_cmake
    from gpuenv.advise.builds import is_cmake, scan_build_script, scan_cmake
    from gpuenv.advise.deps import PARSERS, Unparsable
    from gpuenv.advise.images import parse_dockerfile
    from gpuenv.advise.parts import Parts
    from gpuenv.advise.regions import is_auxiliary_file, is_rocm_file, is_test_file, twin_key
    from gpuenv.advise.setuppy import read_setup_py
    from gpuenv.advise.sources import (
        C_SUFFIXES,
        DEVICE_MACROS,
        device_macros,
        lines_of,
        names_device_keyword,
        scan_file,
    )
    from gpuenv.advise.tree import Counts, walk

    counts = Counts()
    rocm = walked.rocm
    model = walked.build = BuildModel()
    parts = walked.parts = Parts()
    macros = set(DEVICE_MACROS)
    cuda_flags: set[str] = set()  # feature macros #defined only on CUDA sides (regions.c_regions)
    person_modules: dict[str, bool] = {}  # module -> whether the table calls it more than portable
    unparsable = 0
    licensed = _licensed_names(path)
    for f in walk(path, counts):
        text = f.data.decode("utf-8", "replace")  # a latin-1 comment must not hide the code around it
        name = f.path.rsplit("/", 1)[-1]
        # A vendored library's HIP branches are that library's portability, not the project's
        # ROCm build: read like a test's for evidence (NVIDIA Warp's cuBQL under warp/native/).
        test = is_test_file(f.path) or bool(licensed and _in_licensed(f.path, licensed))
        if f.manifest == "pkg-info":
            if "/" not in f.path and (m := _PKG_NAME.search(text)):
                walked.name = m.group(1)  # an sdist's own name: evidence when its setup.py is a stub
            continue
        if f.manifest in ("setup.py", "pyproject"):
            parts.note_build_file(f.path)
            if "/" not in f.path:
                _top_manifest(walked, f.manifest, text)
        if f.manifest is not None and is_rocm_file(f.path):
            # requirements/rocm.txt, Dockerfile.rocm: the ROCm port's own install recipe. Evidence
            # of a ROCm build, a twin of its CUDA sibling (requirements/cuda.txt), and no work.
            walked.manifests += 1
            if not test:
                _note(rocm, f"{f.path}:1 (a ROCm manifest)")
            walked.twins.add(twin_key(f.path))
        elif f.manifest is not None:
            walked.manifests += 1
            try:
                if f.manifest == "dockerfile":
                    images, deps = parse_dockerfile(text)
                    yield from (Hit("image", i.reference, f.path, i.line, "image") for i in images)
                else:
                    deps = PARSERS[f.manifest](text)
            except Unparsable:
                unparsable += 1
                deps = []
            if f.manifest == "pyproject" and name.lower() != "pyproject.toml":
                _platform_variant(walked, f.path, text, deps, test)
            for d in deps:
                extra = "" if not d.extra else d.extra[1:-1] if d.extra.startswith("(") else f"the extra [{d.extra}]"
                if d.kind == "index":
                    yield Hit("construct:torch-cuda-index", d.written, f.path, d.line, "dependency", optional=extra)
                else:
                    yield Hit("package", d.name, f.path, d.line, "dependency", optional=extra)
        if f.build:
            walked.build_paths.append(f.path)
            if is_cmake(name):
                found, sign = scan_cmake(f.path, text)
                read_cmake(f.path, text, model)
            else:
                found, sign = scan_build_script(f.path, text)
                read_setup_py(f.path, text, model)
            if not (walked.stub and f.path == "setup.py"):
                walked.judged += 1  # a stub's setup.py holds nothing to judge
            if not f.source:
                walked.source_lines += lines_of(text)  # CMake lines needing a person are lines read too
            yield from found
            if sign and not test:
                _note(rocm, sign)
        if f.suffix == ".hip":
            walked.judged += 1
            _note(rocm, f"{f.path}:1 (a HIP source file)")
            walked.twins.add(twin_key(f.path))
            continue
        if not f.source:
            continue
        walked.source_files += 1
        walked.source_lines += lines_of(text)
        if f.manifest is None:
            walked.judged += 1
        rocm_file = is_rocm_file(f.path)
        if rocm_file and f.suffix in C_SUFFIXES:
            if not test:
                _note(rocm, f"{f.path}:1 (a source file of the ROCm port)")
            walked.twins.add(twin_key(f.path))
        keyword = None
        if f.suffix in C_SUFFIXES:
            keyword = names_device_keyword(text)
            macros |= device_macros(text, keyword)
            walked.c_paths.append(f.path)
            if "cute" in text or "cutlass" in text:
                _own_namespaces(f.path, text, walked)
            if rocm and "include" in text:
                # Only read once the tree shows a ROCm build (root build files come first): the
                # include graph serves the build model, which applies only then (CUTLASS's speed).
                _includes(f.path, text, walked.includes)
        found, sign = scan_file(f.path, f.suffix, text, macros, keyword, bool(rocm), cuda_flags if rocm else None,
                                None if rocm_file else walked.ptx)  # fmt: skip
        if sign and not test:
            _note(rocm, sign)
            walked.ported.add(f.path)
        if f.suffix == ".py":
            parts.note_python(f.path, text, [(h.what, h.line) for h in found if h.rule == "import"])
        elif f.suffix in (".pyx", ".pxd"):
            walked.cython_paths.append(f.path)
        if rocm_file:
            continue  # csrc/rocm/, hip/, *_cdna3.cu: the ROCm port itself, not work
        if f.suffix == ".py" or f.suffix in (".pyx", ".pxd"):
            found = _optional_imports(found, text, table, is_auxiliary_file(f.path), person_modules)
        yield from found
    walked.skipped = Skipped(counts.binary, counts.unreadable, counts.too_large, counts.outside_tree, unparsable,
                             counts.ignored, counts.ignore_lines)  # fmt: skip


_LICENSE_DIRS = frozenset({"licenses", "third_party_licenses", "third-party-licenses", "thirdpartylicenses"})
_LICENSE_NAME = re.compile(r"^(?:licen[sc]e[-_.])?(.+?)(?:[-_.]licen[sc]e)?(?:\.(?:txt|md|rst))?$", re.IGNORECASE)


# License files named for a toolkit or a generic word (Warp's cuda-LICENSE.txt): never read as
# a directory of vendored code, or a project's own csrc/cuda/ would be taken for one.
_NOT_A_LIBRARY = frozenset({"license", "licence", "readme", "notice", "cuda", "nvidia", "nv", "rocm", "hip", "amd",
                            "gpu", "src", "include", "native", "python", "csrc", "lib", "core"})  # fmt: skip


def _licensed_names(root: str) -> frozenset[str]:
    """The libraries a top-level ``licenses/`` directory names, one license file each
    (``cubql-LICENSE.txt``, ``LICENSE.nanovdb``): third-party code the project ships."""
    names = set()
    try:
        with os.scandir(root) as it:
            dirs = [e.path for e in it if e.name.lower() in _LICENSE_DIRS and e.is_dir(follow_symlinks=False)]
        for d in dirs:
            with os.scandir(d) as it:
                for e in it:
                    m = _LICENSE_NAME.match(e.name)
                    if m and m.group(1).lower() not in _NOT_A_LIBRARY:
                        names.add(m.group(1).lower())
    except OSError:
        return frozenset()
    return frozenset(names)


def _in_licensed(path: str, names: frozenset[str]) -> bool:
    """Whether a file lies in a directory named for one of those libraries."""
    return any(seg.lower() in names for seg in path.split("/")[:-1])


_PKG_NAME = re.compile(r"^Name:[ \t]*(\S+)", re.MULTILINE)
_PROJECT_NAME = re.compile(r"^name[ \t]*=[ \t]*[\"']([^\"'\n]+)", re.MULTILINE)
# "x.h", and <pkg/x.h> with a directory: a project's own header reached through its include
# directory (sglang's <sgl_kernel/distributed/common.cuh>); a bare <vector> is never the tree's.
_OWN_INCLUDE = re.compile(r"#[ \t]*include[ \t]*(?:\"([^\"\n]+)\"|<([^<>\s]+/[^<>\s]+)>)")


def _top_manifest(walked: Walked, kind: str, text: str) -> None:
    """The project's own name (pyproject's [project] name, setup(name=...)), and whether its
    setup.py is a stub that only raises."""
    from gpuenv.advise.deps import setup_py_facts

    if kind == "pyproject":
        section = text.find("[project]")
        m = _PROJECT_NAME.search(text, section) if section >= 0 else None
        if m and not walked.name:
            walked.name = m.group(1)
        if "[tool.setuptools.packages.find]" in text and walked.parts is not None:
            walked.parts.installed = _installed_packages(text)
        return
    stub, name = setup_py_facts(text)
    walked.stub = f"setup.py{stub}" if stub else ""
    if name and not walked.name:
        walked.name = name


def _installed_packages(text: str) -> tuple[str, ...]:
    """[tool.setuptools.packages.find] include: the packages the project installs ("megatron.core",
    "megatron.core.*"); () when the table does not parse or lists none (then all are)."""
    from gpuenv.advise.deps import Unparsable, _toml

    try:
        find = _toml(text).get("tool", {}).get("setuptools", {}).get("packages", {}).get("find", {})
    except (Unparsable, AttributeError):
        return ()
    include = find.get("include") if isinstance(find, dict) else None
    if not isinstance(include, list) or not all(isinstance(i, str) for i in include):
        return ()
    if isinstance(find.get("where"), list) and find["where"] not in (["."], [""]):
        return ()  # packages below src/ or another root: their paths are not the dotted names
    return tuple(include)


def _platform_variant(walked: Walked, path: str, text: str, deps: list[Dep], test: bool) -> None:
    """sglang's pyproject_other.toml beside pyproject.toml: a manifest variant with a ROCm extra
    ([srt_hip]) is the ROCm platform's install, and pyproject.toml beside it another platform's
    (its twin: the CUDA packages it names are that platform's, not work)."""
    from gpuenv.advise.regions import is_rocm_file, twin_key

    rocm = next((d for d in deps if d.extra and is_rocm_file(d.extra)), None)
    if rocm is None:
        return
    if not test:
        at = re.search(rf"^[ \t]*\"?{re.escape(rocm.extra)}\"?[ \t]*=", text, re.MULTILINE)
        line = text.count("\n", 0, at.start()) + 1 if at else rocm.line
        _note(walked.rocm, f"{path}:{line} (a ROCm manifest: the extra [{rocm.extra}])")
    walked.twins.add(twin_key(path.rpartition("/")[0] + "/pyproject.toml"))


def _includes(path: str, text: str, into: dict[str, list[tuple[str, bool]]]) -> None:
    """What a file #includes in quotes or as a path in angle brackets (the project's own headers
    where one matches), resolved after the walk, each with whether it sits on the CUDA side of a
    HIP conditional (vLLM's topk.cu includes its PTX-laden headers inside #ifndef USE_ROCM); an
    include in a HIP branch is the port's."""
    from gpuenv.advise.regions import CUDA, HIP, c_regions, mentions_amd

    found = list(_OWN_INCLUDE.finditer(text))
    if not found:
        return
    regions = c_regions(text, True) if mentions_amd(text) else None
    written = []
    line, last = 1, 0
    for m in found:
        side = None
        if regions is not None and regions.spans:
            line += text.count("\n", last, m.start())
            last = m.start()
            side = regions.side(line)
        if side != HIP:
            written.append((m.group(1) or m.group(2), side == CUDA))
    into[path] = written


# `namespace cute {` inside another namespace (TileLang's tvm::tl::cute, CuTe-style layout IR of
# its compiler), or `namespace tvm::tl::cute {`: the project's own namespace, not NVIDIA's ::cute.
_LIB_INCLUDE = re.compile(r"#[ \t]*include[ \t]*[<\"](?:cute|cutlass)/")
_LIB_NAMESPACES = ("cute", "cutlass")


def _own_namespaces(path: str, text: str, walked: Walked) -> None:
    """Note the tree's own nested ``cute``/``cutlass`` namespaces, and the files that use such a
    namespace without including CUTLASS or CuTe themselves (whose uses may be the tree's own).
    Plain ``str.find``: CUTLASS's 3,000 files all name both (a regex over each was a second)."""
    if ("cute/" not in text and "cutlass/" not in text) or _LIB_INCLUDE.search(text) is None:
        used = {ns for ns in _LIB_NAMESPACES if ns + "::" in text}
        if used:
            walked.ns_only[path] = used
    top = path.split("/", 1)[0] if "/" in path else ""
    for ns in _LIB_NAMESPACES:
        if top in walked.own_ns.get(ns, ()):
            continue
        for opener in (f"namespace {ns}", f"::{ns}"):
            at = text.find(opener)
            while at != -1:
                end = at + len(opener)
                rest = text[end : end + 8].lstrip(" \t\n")
                if rest.startswith("{"):
                    start = text.rfind("\n", 0, at) + 1
                    line = text[start:at].strip()
                    nested = opener.startswith("::") and line.startswith("namespace ")
                    if nested or (not opener.startswith("::") and not line
                                  and text.count("{", 0, at) > text.count("}", 0, at)):  # fmt: skip
                        walked.own_ns.setdefault(ns, set()).add(top)
                        break
                at = text.find(opener, end)


def _note(rocm: list[str], sign: str) -> None:
    if len(rocm) < _ROCM_SHOWN:
        rocm.append(sign)


def _optional_imports(found: list[Hit], text: str, table: Table, auxiliary: bool, person: dict[str, bool]) -> list[Hit]:
    """Imports of modules the table does not call portable, marked with what makes them
    optional (inside ``try:``/``if ...:``, or in a test, benchmark or example); the others as they
    are. Read only for such imports, so a tree of plain imports pays nothing; ``person`` caches
    the table's answer per module across files."""
    from gpuenv.advise.regions import guarded

    lines: list[str] | None = None
    out = []
    for hit in found:
        if hit.rule == "import":
            needs = person.get(hit.what)
            if needs is None:
                entry = table.module(hit.what)
                needs = person[hit.what] = entry is not None and entry.level is not Level.PORTABLE
            if needs and auxiliary:
                hit = hit._replace(optional="in a test, benchmark or example")
            elif needs:
                if lines is None:
                    lines = text.splitlines()
                if 0 < hit.line <= len(lines) and lines[hit.line - 1][:1] in (" ", "\t"):
                    why = guarded(lines, hit.line - 1)
                    hit = hit._replace(optional=why or LAZY)
        out.append(hit)
    return out
