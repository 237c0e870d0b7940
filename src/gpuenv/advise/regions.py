"""Where a tree's own ROCm port lives: HIP/ROCm branches of C preprocessor conditionals, of
Python ``if`` statements and of CMake ``if()`` blocks, files named for ROCm, and test files.

A hit inside a ROCm branch (``#if defined(USE_ROCM)``, ``#ifdef __HIP_PLATFORM_AMD__``, the
``#else`` of ``#ifndef GGML_USE_HIP``) is the port itself, not work; a hit inside the CUDA side
of such a conditional has a ROCm alternative beside it: it is *covered*. Pure functions of text
and paths; a file that names neither HIP nor ROCm is answered without a regex (the fast path).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

HIP = "hip"  # the branch is taken on ROCm only
CUDA = "cuda"  # the branch is the CUDA side of a HIP/ROCm conditional (not taken on ROCm)
# A branch taken only by the CUDA compiler, whose other side is not ROCm's either: ``#if
# __CUDA_ARCH__ >= 900`` (HIP-Clang leaves __CUDA_ARCH__ undefined, so it reads 0), CMake's
# ``if(BUILD_CUDA)`` beside CPU and XPU builds. Its ``#else`` is code both builds compile.
CUDA_ONLY = "cuda-only"

# Macro names that mean "compiling for AMD": HIP's platform and compiler macros, projects' own
# USE_ROCM / GGML_USE_HIP / USE_AMD_ROCM flags, AMD GPU architecture macros (__gfx90a__) and
# CDNA/RDNA family flags. _M_AMD64 is MSVC's x86-64, not an AMD GPU.
_AMD_NAME = re.compile(r"\b(?!_M_AMD64\b|AMD64\b)\w*?(?<![A-Za-z0-9])(?:HIP|HIPCC|ROCM|ROCm|HCC|AMD|AMDGCN|CDNA\d*|RDNA\d*"
                       r"|gfx\d+\w*)(?![A-Za-z])\w*")
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.MULTILINE)
# Every AMD macro name holds one of these, or sits in a file that does (CDNA3/__gfx942__ code is
# guarded by HIP or AMD names too): a file without them is read without any regex.
_MARKERS = ("HIP", "ROCM", "AMD")


def mentions_amd(text: str) -> bool:
    """Whether a file names HIP/ROCm/AMD at all: without it, it has no ROCm branch (fast path)."""
    return any(m in text for m in _MARKERS)


def condition_side(directive: str, expr: str) -> str | None:
    """HIP, CUDA or None (neither, or both: ``defined(__CUDACC__) || defined(__HIPCC__)``) for
    the branch a preprocessor condition opens."""
    expr = expr.split("//", 1)[0].split("/*", 1)[0].strip()
    if directive in ("ifdef", "ifndef"):
        if not _AMD_NAME.fullmatch(expr.split()[0] if expr.split() else ""):
            return None
        return HIP if directive == "ifdef" else CUDA
    if "||" in expr:
        sides = {_term_side(t) for t in expr.split("||")}
        return sides.pop() if len(sides) == 1 else None  # all ROCm, or all not-ROCm
    sides = {_term_side(t) for t in expr.split("&&")} - {None}
    if HIP in sides:
        return HIP  # a conjunction with "compiling for ROCm" is taken on ROCm only
    if CUDA in sides:
        return CUDA
    return CUDA_ONLY if CUDA_ONLY in sides else None


def _term_side(term: str) -> str | None:
    term = term.strip().strip("()").strip()
    negated = term.startswith("!")
    m = _AMD_NAME.search(term)
    if m is None:
        if not negated and "__CUDA_ARCH__" in term and (arch := _CUDA_ARCH_MIN.search(term)) and arch.group(1) != "0":
            return CUDA_ONLY  # __CUDA_ARCH__ >= 800: false where HIP leaves the macro undefined
        return None
    if negated or _EQUALS_ZERO.search(term):
        return CUDA
    return HIP


_EQUALS_ZERO = re.compile(r"==\s*0\b")
# __CUDA_ARCH__ >= N, > N, == N (N > 0): never true where the macro is undefined (0). "< N" is.
_CUDA_ARCH_MIN = re.compile(r"__CUDA_ARCH__\s*(?:>=?|==)\s*(\d+|[A-Z_][A-Z0-9_]*)")


@dataclass(frozen=True)
class Regions:
    """Line ranges of one file, sorted: (first line, last line, HIP or CUDA)."""

    starts: tuple[int, ...] = ()
    spans: tuple[tuple[int, int, str], ...] = ()

    def side(self, line: int) -> str | None:
        """HIP when ``line`` is in a ROCm branch (innermost decides nothing: any enclosing ROCm
        branch makes it ROCm code), CUDA when on the CUDA side of one or in a branch only the
        CUDA compiler takes (``#if __CUDA_ARCH__ >= 900``), None otherwise."""
        i = bisect.bisect_right(self.starts, line)
        found = None
        for first, last, side in self.spans[:i]:
            if first <= line <= last:
                if side == HIP:
                    return HIP
                found = CUDA
        return found

    def first_hip(self, text: str) -> int | None:
        """The first line of the first HIP branch that holds code of its own (a statement, or
        an ``#include <hip/...>``): a branch of #defines only (``#if defined(__HIPCC__)
        #define HOST_DEVICE __host__ __device__``) is a portability idiom copied into CUDA-only
        projects, not evidence of a ROCm build."""
        lines: list[str] | None = None
        for first, last, side in self.spans:
            if side != HIP:
                continue
            if lines is None:
                lines = text.splitlines()
            for raw in lines[first - 1 : last]:
                s = raw.strip()
                if not s or s.startswith(("//", "/*", "*")):
                    continue
                if not s.startswith("#") or ("include" in s and "hip/" in s):
                    return first
        return None


NO_REGIONS = Regions()


def c_regions(text: str, arch: bool = False, known: set[str] | None = None) -> Regions:
    """The HIP and CUDA branches of a C/C++/CUDA file's ``#if`` conditionals. ``arch``: read
    ``#if __CUDA_ARCH__ >= N`` in files that name no AMD word too (a tree that builds for ROCm:
    vLLM's persistent_topk.cuh); elsewhere such a file is answered without a regex. ``known``:
    feature macros earlier files #define only on CUDA sides (llama.cpp's TURING_MMA_AVAILABLE in
    common.cuh), read here and added to."""
    names = frozenset(known) if known else frozenset()
    if not mentions_amd(text) and not (arch and "__CUDA_ARCH__" in text) and not (names and _names_any(text, names)):
        return NO_REGIONS
    regions = _c_regions(text, names, arch)
    if regions.spans and "define" in text:
        # vLLM's VLLM_256B_PTX_ENABLED: #define NAME 1 only on the CUDA side, 0 elsewhere; then
        # #if NAME is a CUDA-compiler-only branch too.
        own = _cuda_side_names(text, regions)
        if own - names:
            regions = _c_regions(text, names | own, arch)
            if known is not None:
                known |= own
    return regions


def _names_any(text: str, names: frozenset[str]) -> bool:
    return "#if" in text and any(n in text for n in names)


# #define NAME, NAME 1, NAME (SGL_CUDA_ARCH >= 900): an object-like macro and its value, if any.
_DEFINE_FLAG = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(?:[ \t]+([^\n/]*?))?[ \t]*(?://[^\n]*)?$", re.MULTILINE)


def _cuda_side_names(text: str, regions: Regions) -> frozenset[str]:
    """Macros #defined (bare, or to a non-zero value or an expression) only on CUDA sides of this
    file; a definition to 0 elsewhere (sglang's ``#else  // USE_ROCM`` ``#define
    SGL_ARCH_HOPPER_OR_GREATER 0``) leaves ``#if NAME`` false there."""
    on: dict[str, bool] = {}
    for m in _DEFINE_FLAG.finditer(text):
        if m.group(2) in ("0", "false"):
            continue
        line = text.count("\n", 0, m.start()) + 1
        on[m.group(1)] = on.get(m.group(1), True) and regions.side(line) == CUDA
    return frozenset(name for name, cuda in on.items() if cuda)


def _flag(expr: str) -> str:
    """The macro an ``#if NAME``, ``#if defined(NAME)`` or ``#ifdef NAME`` tests ("" otherwise)."""
    expr = expr.split("//", 1)[0].strip()
    if expr.startswith("defined"):
        expr = expr[len("defined") :]
    expr = expr.strip().strip("()").strip()
    return expr if expr.isidentifier() else ""


def _c_regions(text: str, cuda_names: frozenset[str], rocm_tree: bool = False) -> Regions:
    spans: list[tuple[int, int, str]] = []
    # Per open conditional: [side of the current branch, its first line, sides seen so far, its
    # CUDA-compiler-only spans (kept once an #else shows a stand-in)].
    stack: list[list[Any]] = []
    line, last = 1, 0
    for m in _DIRECTIVE.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        op, expr = m.group(1), m.group(2)
        if op in ("if", "ifdef", "ifndef"):
            side = condition_side(op, expr)
            if side is None and op in ("if", "ifdef") and cuda_names and _flag(expr) in cuda_names:
                side = CUDA_ONLY
            if side is None and op == "if" and _taken_on_rocm(expr):
                side = _TAKEN
            stack.append([side, line + 1, [], []])
            continue
        if not stack:
            continue  # an #else/#endif without its #if (a fragment): nothing to track
        top = stack[-1]
        if top[0] == CUDA_ONLY:
            top[3].append((top[1], line - 1, CUDA))
        elif top[0] is not None and top[0] != _TAKEN:
            spans.append((top[1], line - 1, top[0]))
        top[2].append(top[0])
        if op == "endif":
            if len(top[2]) > 1 or rocm_tree:
                # #if __CUDA_ARCH__ >= 900 with an #else: HIP compiles the other branch. Without
                # one, the code has no stand-in on ROCm: work, unless the tree builds for ROCm
                # itself (its ROCm build compiles without that code: llama.cpp's DGX Spark path).
                spans.extend(top[3])
            stack.pop()
            continue
        if op == "else":
            top[0] = _else_side(top[2])
        else:  # elif
            side = condition_side("if", expr)
            if side is None and _taken_on_rocm(expr):
                side = _TAKEN if _else_side(top[2]) is None else CUDA
            top[0] = side if side is not None else _else_side(top[2])
        top[1] = line + 1
    spans.sort()
    return Regions(tuple(s[0] for s in spans), tuple(spans))


# A branch taken on ROCm and maybe elsewhere too: ``#if defined(USE_ROCM) || __CUDA_ARCH__ <
# 750`` (exllamav2's tanh). Not the port itself (CUDA may take it), but what follows it, the
# ``#else`` with its PTX, is never compiled for ROCm.
_TAKEN = "taken-on-rocm"


def _taken_on_rocm(expr: str) -> bool:
    """Whether a disjunction holds whenever ROCm compiles it: one of its top-level terms is a
    ROCm test (``defined(USE_ROCM) || (...)``); a term inside parentheses decides nothing."""
    expr = expr.split("//", 1)[0].split("/*", 1)[0]
    if "||" not in expr:
        return False
    terms, depth, start = [], 0, 0
    for i, c in enumerate(expr):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0 and expr.startswith("||", i):
            terms.append(expr[start:i])
            start = i + 2
    terms.append(expr[start:])
    return len(terms) > 1 and any("&&" not in t and "|" not in t and _term_side(t) == HIP for t in terms)


def _else_side(seen: list[str | None]) -> str | None:
    """The side of a branch reached when every earlier branch of its conditional failed (after
    a CUDA-compiler-only branch: neither, both builds may take it)."""
    if HIP in seen or _TAKEN in seen:
        return CUDA  # an earlier branch was ROCm's: this one is taken only when not on ROCm
    if CUDA in seen:
        return HIP  # an earlier branch was "not ROCm": this one is taken on ROCm
    return None


# -- Python and CMake branches ---------------------------------------------------------------------

_PY_AMD = re.compile(r"(?<![a-z])(?:hip|amd)(?![a-z])|rocm", re.IGNORECASE)
_PY_NEG = re.compile(r"^\s*(?:el)?if\s+not\b|\bis\s+None\b|==\s*(?:None|False|0)\b")


def python_side(lines: list[str], index: int, limit: int = 400) -> str | None:
    """HIP when line ``index`` (0-based) is inside an ``if`` on ROCm, CUDA when inside its other
    side (``else:``, ``if not is_rocm:``), None otherwise. Reads the enclosing headers upwards."""
    indent = _indent(lines[index])
    i = index - 1
    floor = max(-1, index - limit)
    while i > floor and indent > 0:
        text = lines[i]
        if _deeper(text, indent):
            i -= 1
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            i -= 1
            continue
        here = _indent(text)
        if here < indent:
            indent = here
            if stripped.startswith(("if ", "elif ")) and _PY_AMD.search(stripped):
                return CUDA if _PY_NEG.search(stripped) else HIP
            if stripped.startswith("else"):
                opener = _opener(lines, i, here)
                if opener is not None and _PY_AMD.search(opener):
                    return HIP if _PY_NEG.search(opener) else CUDA
        i -= 1
    return None


def _opener(lines: list[str], else_at: int, indent: int) -> str | None:
    for j in range(else_at - 1, max(-1, else_at - 400), -1):
        s = lines[j].strip()
        if s and not s.startswith("#") and _indent(lines[j]) == indent and s.startswith(("if ", "elif ")):
            return s
        if s and _indent(lines[j]) < indent:
            return None
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _deeper(line: str, indent: int) -> bool:
    """Whether ``line`` is indented at least ``indent`` deep and holds more: never the header
    of a block around a line at ``indent``. (Most lines of a function body; answered from its
    first ``indent`` characters, without stripping the whole line.)"""
    return len(line) > indent and not line[:indent].strip(" \t")


def guarded(lines: list[str], index: int, limit: int = 2000) -> str | None:
    """What makes the import on line ``index`` optional: the ``try``/``if`` around it ("inside
    try:" / "inside if ...:"), or None when it runs unconditionally (module level, or only in a
    function or class)."""
    indent = _indent(lines[index])
    i = index - 1
    floor = max(-1, index - limit)
    while i > floor and indent > 0:
        if _deeper(lines[i], indent):
            i -= 1
            continue
        stripped = lines[i].strip()
        if stripped and not stripped.startswith("#"):
            here = _indent(lines[i])
            if here < indent:
                indent = here
                word = stripped.split(None, 1)[0].rstrip(":")
                if word in ("try", "if", "elif", "else", "except"):
                    head = stripped if len(stripped) <= 60 else stripped[:57] + "..."
                    return f"inside {head}"
        i -= 1
    return None


_CMAKE_IF = re.compile(r"^\s*(if|elseif|else|endif)\s*\(([^\n]*)", re.IGNORECASE)


def cmake_sides(lines: list[str]) -> list[str | None]:
    """The side of every line of a CMake file: inside ``if(USE_ROCM)`` / ``if(GGML_HIP)`` blocks
    HIP, inside their ``else()`` CUDA."""
    out: list[str | None] = []
    stack: list[list[Any]] = []  # [side of the current branch, sides seen]
    for text in lines:
        m = _CMAKE_IF.match(text)
        if m is not None:
            op, cond = m.group(1).lower(), m.group(2)
            side = _cmake_side(cond)
            if op == "if":
                stack.append([side, []])
            elif stack:
                stack[-1][1].append(stack[-1][0])
                if op == "endif":
                    stack.pop()
                elif op == "else":
                    stack[-1][0] = _else_side(stack[-1][1])
                else:
                    stack[-1][0] = side if side is not None else _else_side(stack[-1][1])
        sides = [s[0] for s in stack]
        out.append(HIP if HIP in sides else CUDA if CUDA in sides or CUDA_ONLY in sides else None)
    return out


_CMAKE_AMD = re.compile(r"HIP|ROCM|ROCm|AMD")
_CMAKE_NOT = re.compile(r"\s*NOT\b", re.IGNORECASE)
# The switches that pick the CUDA build among several backends: vLLM's VLLM_GPU_LANG STREQUAL
# "CUDA", bitsandbytes' COMPUTE_BACKEND STREQUAL "cuda" and BUILD_CUDA, USE_CUDA, GGML_CUDA.
_CMAKE_CUDA_PICK = re.compile(r"^\s*(?:\$\{)?\w*(?:GPU_LANG|BACKEND|TARGET_DEVICE)\w*\}?\s+STREQUAL\s+\"?CUDA\b"
                              r"|^\s*(?:BUILD_CUDA|USE_CUDA|GGML_CUDA|WITH_CUDA|ENABLE_CUDA)\s*(?:\)|$)",
                              re.IGNORECASE)  # fmt: skip


def _cmake_side(cond: str) -> str | None:
    cond = cond.rsplit(")", 1)[0] if cond.count(")") > cond.count("(") else cond  # the if( ... ) closing
    if _CMAKE_OR.search(cond):
        # GPU_LANG STREQUAL "CUDA" OR GPU_LANG STREQUAL "HIP": both builds, unless every term agrees
        sides = {_cmake_term(t) for t in _CMAKE_OR.split(cond)}
        return sides.pop() if len(sides) == 1 else None
    sides = {_cmake_term(t) for t in _CMAKE_AND.split(cond)} - {None}
    return HIP if HIP in sides else CUDA if CUDA in sides else CUDA_ONLY if CUDA_ONLY in sides else None


_CMAKE_OR = re.compile(r"\s+OR\s+")
_CMAKE_AND = re.compile(r"\s+AND\s+")


def _cmake_term(term: str) -> str | None:
    term = term.strip().lstrip("(").strip()
    if not _CMAKE_AMD.search(term):
        return CUDA_ONLY if _CMAKE_CUDA_PICK.search(term) else None
    return CUDA if _CMAKE_NOT.match(term) else HIP


# -- paths ------------------------------------------------------------------------------------------

# A path segment, or a part of a file name between _ - . separators, that names the ROCm port:
# csrc/rocm/, hip/, common_hip.cuh, attn_cdna3.cu, gfx942_kernels.cpp.
_ROCM_PART = re.compile(r"(?:^|[/_.-])(?:rocm|hip|hipify|amd|amdgpu|cdna\d*|rdna\d*|gfx\d+\w*|mi[23]\d\dx?)(?=[/_.-]|$)",
                        re.IGNORECASE)  # fmt: skip
_TEST_DIRS = frozenset({"test", "tests", "testing", "unittest", "unittests", "test_utils"})
# Code that is not what the project ships: tests, benchmarks, examples, docs.
_AUX_DIRS = _TEST_DIRS | frozenset({"benchmark", "benchmarks", "bench", "example", "examples", "docs", "doc"})


def is_rocm_file(path: str) -> bool:
    """Whether a file's path says it is part of the ROCm port (its directory or its name)."""
    return _ROCM_PART.search(path) is not None


def is_test_file(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    if any(p.lower() in _TEST_DIRS for p in parts[:-1]):
        return True
    stem = name.rsplit(".", 1)[0]
    return stem.startswith("test_") or stem.endswith(("_test", "_tests")) or stem == "conftest"


def is_auxiliary_file(path: str) -> bool:
    """A test, benchmark, example or documentation file: its imports are not what runs."""
    return is_test_file(path) or any(p.lower() in _AUX_DIRS for p in path.split("/")[:-1])


def twin_key(path: str) -> str:
    """A file's name with CUDA/ROCm words dropped, to pair attn.cu with rocm/attn.hip."""
    directory, _, name = path.rpartition("/")
    words = [p for p in _NAME_PARTS.split(name.lower()) if p]
    if len(words) > 1 and words[-1] not in _PORT_WORDS:
        words = words[:-1]  # the extension (.cu, .txt), but not Dockerfile.rocm's .rocm
    parts = [p for p in words if p not in _PORT_WORDS]
    if parts:
        return "_".join(parts)
    # requirements/cuda.txt and requirements/rocm.txt: named only for their platform, paired in
    # their directory (the CUDA or ROCm part of it dropped).
    return "/".join(p for p in directory.lower().split("/") if p not in _PORT_WORDS) + "/"


_NAME_PARTS = re.compile(r"[_.-]")
_PORT_WORDS = frozenset({"cuda", "hip", "rocm", "cu", "amd", "nv", "nvidia"})
