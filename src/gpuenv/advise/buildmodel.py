"""Which sources each platform's build compiles, read statically from CMake files and setup.py.

A source named only on the CUDA side of a build's backend switch (``if(VLLM_GPU_LANG STREQUAL
"CUDA")``, ``if(BUILD_CUDA)``, ``if not IS_ROCM:``, the ``else:`` of ``if torch.version.hip:``)
is compiled by the CUDA build alone: in a tree that also builds for ROCm, its CUDA-only work is
already handled by the ROCm build. A source named on both sides, or outside any switch, is
compiled by both and counts. Headers follow the files that include them (``cuda_only_files``).
Nothing is run: CMake is read line by line (``regions.cmake_sides``), setup.py with ``ast``
(``setuppy``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuenv.advise.regions import CUDA, CUDA_ONLY, HIP, cmake_sides

_SOURCE_SUFFIX = r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hip)"
# A path token in CMake: "csrc/ops.cu", ${CMAKE_CURRENT_SOURCE_DIR}/csrc/*.cu, csrc/quantization.
_CMAKE_PATH = re.compile(r"[\w./${}*-]+" + _SOURCE_SUFFIX + r"\b")
# A word a backend switch needs: an AMD name, or one of the CUDA selectors regions knows.
_CMAKE_SWITCH = re.compile(r"HIP|ROCM|ROCm|AMD|GPU_LANG|BACKEND|TARGET_DEVICE|BUILD_CUDA|USE_CUDA|GGML_CUDA|WITH_CUDA"
                           r"|ENABLE_CUDA")  # fmt: skip
_CMAKE_GENERATOR = re.compile(r"[\w./${}-]+\.py\b")
_CMAKE_SUBDIR = re.compile(r"\badd_subdirectory\s*\(\s*\"?([\w./${}-]+)", re.IGNORECASE)
_CMAKE_DIR_VARS = re.compile(r"\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR|PROJECT_SOURCE_DIR"
                             r"|CMAKE_SOURCE_DIR|\w+_SOURCE_DIR)\}/")  # fmt: skip
_PY_SOURCE = re.compile(r"[\w./*{}-]+" + _SOURCE_SUFFIX + r"$")


@dataclass
class BuildModel:
    """What the tree's build files say each platform compiles: patterns (root-relative globs) of
    the sources named on each side. ``files``: where each came from, for the report."""

    cuda: set[str] = field(default_factory=set)  # named on a CUDA side
    hip: set[str] = field(default_factory=set)  # named on a ROCm side
    both: set[str] = field(default_factory=set)  # named outside any switch: both builds compile them
    files: set[str] = field(default_factory=set)  # the build files with a backend switch

    def add(self, side: str | None, pattern: str) -> None:
        (self.hip if side == HIP else self.cuda if side in (CUDA, CUDA_ONLY) else self.both).add(pattern)


def _join(base: str, rel: str) -> str | None:
    """``rel`` (a path as a build file writes it) from the tree's top; None when it leaves the
    tree or is built from a variable advise cannot read."""
    rel = _CMAKE_DIR_VARS.sub("", rel).strip("\"'")
    if "${" in rel or rel.startswith(("/", "$")):
        return None
    parts: list[str] = [p for p in base.split("/") if p] if base else []
    for p in rel.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(p)
    return "/".join(parts)


def read_cmake(path: str, text: str, model: BuildModel) -> None:
    """The sources and subdirectories a CMake file names, by the side of its backend switch."""
    if _CMAKE_SWITCH.search(text) is None:
        return  # no backend switch (most of CUTLASS's CMake files): nothing to side
    lines = text.splitlines()
    sides = cmake_sides(lines)
    if not any(s is not None for s in sides):
        return
    model.files.add(path)
    base = path.rpartition("/")[0]
    for raw, side in zip(lines, sides, strict=True):
        code = raw.split("#", 1)[0]
        if not code.strip() or code.lstrip().lower().startswith(("if", "elseif", "message")):
            continue
        for m in _CMAKE_PATH.finditer(code):
            joined = _join(base, m.group())
            if joined is not None:
                model.add(side, joined)
        if side in (CUDA, CUDA_ONLY):
            for m in _CMAKE_GENERATOR.finditer(code):
                # vLLM's marlin/generate_kernels.py, run on the CUDA side only: what it writes, and
                # the templates beside it, are the CUDA build's.
                joined = _join(base, m.group())
                if joined is not None and "/" in joined:
                    model.add(side, joined.rpartition("/")[0] + "/*")
        sub = _CMAKE_SUBDIR.search(code)
        if sub is not None:
            joined = _join(base, sub.group(1))
            if joined is not None:
                model.add(side, joined + "/**")


# -- from patterns to files ------------------------------------------------------------------------


def _glob(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")  # glob's ** matches no directory too (csrc/**/*.cu: csrc/a.cu)
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "." if c == "?" else re.escape(c))
        i += 1
    return re.compile("".join(out))


def _matcher(patterns: set[str]) -> tuple[set[str], re.Pattern[str] | None]:
    plain = {p for p in patterns if "*" not in p and "?" not in p}
    globs = [_glob(p).pattern for p in patterns - plain]
    return plain, (re.compile("|".join(f"(?:{g})" for g in globs)) if globs else None)


def compiled_by_cuda_only(model: BuildModel, paths: list[str]) -> set[str]:
    """The files of ``paths`` that the CUDA build compiles and the ROCm build does not."""
    if not model.cuda:
        return set()
    cuda_plain, cuda_glob = _matcher(model.cuda)
    other_plain, other_glob = _matcher(model.hip | model.both)
    out = set()
    for p in paths:
        if p in cuda_plain or (cuda_glob is not None and cuda_glob.fullmatch(p)):
            if p in other_plain or (other_glob is not None and other_glob.fullmatch(p)):
                continue
            out.add(p)
    return out


def included_by(paths: list[str], includes: dict[str, list[tuple[str, bool]]]) -> dict[str, set[str]]:
    """Header path -> the files that ``#include "..."`` it outside the CUDA side of a HIP
    conditional: the file beside the includer when there is one (as the compiler looks first),
    else every file whose path ends with what is written. A header included only on CUDA sides has
    an empty set of includers (and an entry: it is included)."""
    known = set(paths)
    by_name: dict[str, list[str]] = {}
    for p in paths:
        by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    out: dict[str, set[str]] = {}
    for includer, written in includes.items():
        here = includer.rpartition("/")[0]
        for w, cuda_side in written:
            beside = _join(here, w)
            if beside in known:
                targets = [beside]
            else:
                targets = [p for p in by_name.get(w.rsplit("/", 1)[-1], ()) if p == w or p.endswith("/" + w)]
                if len(targets) > 1:  # hopper/flash.h or csrc/flash_attn/src/flash.h: the nearer one
                    near = max(_shared(includer, t) for t in targets)
                    targets = [t for t in targets if _shared(includer, t) == near]
            for t in targets:
                includers = out.setdefault(t, set())
                if not cuda_side:
                    includers.add(includer)
    return out


def _shared(a: str, b: str) -> int:
    """How many leading directories two paths share."""
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


def cuda_only_files(model: BuildModel, paths: list[str], includes: dict[str, list[tuple[str, bool]]]) -> set[str]:
    """The CUDA build's own sources, and the headers only they include (a header included from
    anywhere else, or never, stays), up to a fixpoint."""
    only = compiled_by_cuda_only(model, paths)
    if not only and not any(cuda for written in includes.values() for _, cuda in written):
        return only
    compiled = _matcher(model.hip | model.both)

    def named_by_rocm(p: str) -> bool:
        return p in compiled[0] or (compiled[1] is not None and compiled[1].fullmatch(p) is not None)

    # A source no build names, in a directory of the CUDA build's own sources where the ROCm build
    # names none (flash-attention's csrc/flash_attn/src/*.cu the list leaves out): the CUDA build's.
    rocm_dirs = {p.rpartition("/")[0] for p in paths if named_by_rocm(p)}
    cuda_dirs = {p.rpartition("/")[0] for p in only} - rocm_dirs
    into = included_by(paths, includes)
    for p in paths:
        if p.rpartition("/")[0] not in cuda_dirs or p in only or named_by_rocm(p):
            continue
        # An unnamed source there, or a header nothing in the tree includes (vLLM's
        # marlin_template.h, included only by the kernels its generator writes at build time).
        if p.endswith((".cu", ".cpp", ".cc")) or p not in into:
            only.add(p)
    changed = True
    while changed:
        changed = False
        for p in paths:
            if p in only:
                continue
            if named_by_rocm(p):
                continue  # the ROCm build names it itself
            includers = into.get(p)
            if includers is not None and includers <= only:  # included, and only by the CUDA build's code
                only.add(p)
                changed = True
    return only


def rocm_compiled_files(model: BuildModel, paths: list[str], includes: dict[str, list[tuple[str, bool]]]) -> set[str]:
    """The sources a build file with a ROCm branch names for the ROCm build (on its HIP side or
    outside its switch), and the headers they include outside CUDA-only branches, transitively."""
    if not model.files:
        return set()
    plain, glob = _matcher(model.hip | model.both)
    out = {p for p in paths if p in plain or (glob is not None and glob.fullmatch(p))}
    if not out:
        return out
    into = included_by(paths, includes)
    down: dict[str, set[str]] = {}
    for header, includers in into.items():
        for includer in includers:
            down.setdefault(includer, set()).add(header)
    todo = list(out)
    while todo:
        for header in down.get(todo.pop(), ()):
            if header not in out:
                out.add(header)
                todo.append(header)
    return out
