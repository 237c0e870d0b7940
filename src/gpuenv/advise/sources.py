"""Source scanning: CUDA calls, libraries and constructs in C/C++/CUDA and Python files.

Pure functions of a file's text (``scan(path, suffix, text)``), each file scanned once per
language: C/C++/CUDA by the matches of one pattern (``cpattern``: every alternative starts with
a literal, and the ones that start with a common letter are searched for by passes of their
own), Python by one pattern per statement keyword. The regex engine finds the few candidates;
word boundaries and line context are then checked in Python on those. Line numbers are counted
as the matches go by. A match after ``//`` (C) or ``#`` (Python) on its line is a comment.

Kernel constructs (Hopper/Blackwell instructions, warp-size-32 assumptions) count only in device
code: .cu/.cuh files, files that define ``__global__`` or ``__device__`` functions, and files that
use a macro defined to expand to ``__device__`` (``CUTE_HOST_DEVICE``, ``TCNN_DEVICE``). An
``asm()`` statement is judged by its text wherever it is (``asm``): PTX is a blocker, AMD GPU ISA
is the ROCm port, x86 is host code. A ``% 32`` inside a string (an asm operand, ``" %32,"``) or in
a divisibility check (``size(0) % 32 == 0``) is not a warp assumption. Code in the HIP branch of a
``#if`` (``regions``) is the project's own ROCm port and no finding; code on the CUDA side of
one is marked covered.
"""

from __future__ import annotations

import re

from gpuenv.advise import asm as asm_text
from gpuenv.advise.cpattern import matches
from gpuenv.advise.model import Hit
from gpuenv.advise.regions import CUDA, HIP, NO_REGIONS, Regions, c_regions

C_SUFFIXES = frozenset({".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx"})
DEVICE_SUFFIXES = frozenset({".cu", ".cuh"})

_CALL = re.compile(r"\s*\(")
_INCLUDE = re.compile(r"#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]")
_LIBRARY = re.compile(r"cublasLt|cublasXt|cublas|cudnn|cufft|cusparse|curand|cusolver|cutensor|nvrtc|nccl")

# Header (or header directory) -> library rule.
_HEADERS = {
    "cublas.h": "cublas", "cublas_v2.h": "cublas", "cublasLt.h": "cublas", "cublasXt.h": "cublas",
    "cudnn.h": "cudnn", "cufft.h": "cufft", "cufftXt.h": "cufft", "cusparse.h": "cusparse",
    "cusparse_v2.h": "cusparse", "curand.h": "curand", "curand_kernel.h": "curand",
    "cusolverDn.h": "cusolver", "cusolverSp.h": "cusolver", "cusolver_common.h": "cusolver",
    "cutensor.h": "cutensor", "nvrtc.h": "nvrtc", "nccl.h": "nccl",
    "cuda_runtime.h": "cuda-runtime", "cuda_runtime_api.h": "cuda-runtime", "cuda.h": "cuda-driver",
}  # fmt: skip
_HEADER_DIRS = {"thrust": "thrust", "cub": "cub", "cutlass": "cutlass", "cute": "cutlass"}
_LIBRARY_RULE = {
    "cublasLt": "cublas", "cublasXt": "cublas", "cublas": "cublas", "cudnn": "cudnn", "cufft": "cufft",
    "cusparse": "cusparse", "curand": "curand", "cusolver": "cusolver", "cutensor": "cutensor",
    "nvrtc": "nvrtc", "nccl": "nccl",
}  # fmt: skip
# Every table rule a scan can name (tests/test_advise.py checks the table has each).
RULES = frozenset(
    {f"library:{r}" for r in set(_HEADERS.values()) | set(_HEADER_DIRS.values()) | set(_LIBRARY_RULE.values())}
    | {f"construct:{c}" for c in ("inline-ptx", "hopper-blackwell", "warp-size-32", "texture-surface", "wmma",
                                  "ptx-jit", "cuda-extension", "cg-unsupported", "cuda-build")}  # fmt: skip
)
# Constructs that are host-side API (textures, PTX loading, TMA descriptors, WMMA types in
# headers): findings wherever they are, not only in device code.
_HOST_API = ("cudaBindTexture", "cudaCreate", "cudaDestroy", "texture", "surface", "cuLink", "CU_JIT", '"',
             "cuTensorMap", "CUtensorMap", "nvcuda::wmma", "wmma::", "labeled_partition")  # fmt: skip
# Macros that expand to __device__ in widely vendored headers (CUTLASS/CuTe, tiny-cuda-nn,
# PyTorch); a tree's own are found where it #defines them (``device_macros``).
DEVICE_MACROS = frozenset({"CUTE_HOST_DEVICE", "CUTE_DEVICE", "CUTLASS_DEVICE", "CUTLASS_HOST_DEVICE",
                           "TCNN_DEVICE", "TCNN_HOST_DEVICE", "C10_DEVICE", "C10_HOST_DEVICE"})  # fmt: skip
# Starts with a literal "#" (no ^ anchor): the regex engine then skips to each "#" by itself.
_DEVICE_DEFINE = re.compile(r"#[ \t]*define[ \t]+(\w+)[ \t]+[^\n]*\b__(?:device|global)__")
_DEVICE_KEYWORD = re.compile(r"__(?:global|device)__")
_HOST_CHECK = re.compile(r"\s*[=!]=\s*0\b")
_HOST_LINE = re.compile(r"TORCH_CHECK|assert|\.size\(|\bsize\(|\.shape\b|\.stride\(|\bnumel\(")
# Candidates that need no word boundary before them (they start with punctuation).
_PUNCT = frozenset('#&%"<')


def lines_of(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def names_device_keyword(text: str) -> bool:
    """Whether a file names ``__global__`` or ``__device__``. One regex pass: two ``in`` tests
    read a file that has neither (most headers) twice, and the walk asks twice per file."""
    return _DEVICE_KEYWORD.search(text) is not None


def is_device_code(suffix: str, text: str, macros: frozenset[str] | set[str] = DEVICE_MACROS,
                   keyword: bool | None = None) -> bool:  # fmt: skip
    """``keyword``: ``names_device_keyword(text)`` when the caller has it already."""
    if suffix in DEVICE_SUFFIXES:
        return True
    if names_device_keyword(text) if keyword is None else keyword:
        return True
    return _names_any(text, macros)


def _names_any(text: str, names: frozenset[str] | set[str]) -> bool:
    """Whether ``text`` holds any of ``names``. The vendored device macros all hold "DEVICE"
    (CUTE_HOST_DEVICE, TCNN_DEVICE): a file without that word is ruled out for all of them by
    one test, not by one whole read per name."""
    if any(n in text for n in names if "DEVICE" not in n):
        return True
    return "DEVICE" in text and any(n in text for n in names if "DEVICE" in n)


def device_macros(text: str, keyword: bool | None = None) -> set[str]:
    """Names a file #defines to expand to ``__device__``/``__global__`` (``#define TCNN_DEVICE __device__``).
    ``keyword``: ``names_device_keyword(text)`` when the caller has it already."""
    if not (names_device_keyword(text) if keyword is None else keyword):
        return set()
    return set(_DEVICE_DEFINE.findall(text))


def scan(path: str, suffix: str, text: str, macros: frozenset[str] | set[str] = DEVICE_MACROS) -> list[Hit]:
    """Every hit in one source file (``path`` is only copied into the hits), by line."""
    return scan_file(path, suffix, text, macros)[0]


def scan_file(path: str, suffix: str, text: str, macros: frozenset[str] | set[str] = DEVICE_MACROS,
              keyword: bool | None = None, arch: bool = False, known: set[str] | None = None,
              ptx: dict[tuple[str, int], tuple[str, ...]] | None = None) -> tuple[list[Hit], str | None]:  # fmt: skip
    """(every hit, by line; the first sign in the file that the project builds for ROCm itself:
    a HIP branch of a ``#if``, a ``hip/`` header, AMD GPU assembly), or None. ``keyword``:
    ``names_device_keyword(text)`` when the caller has it already; ``arch``: read ``__CUDA_ARCH__``
    guards in every file; ``known``: CUDA-side feature macros of files read before
    (``regions.c_regions``); ``ptx``: filled with the PTX instructions of each inline-PTX hit
    ((path, line) -> names, ``asm.instructions``)."""
    hits: list[Hit] = []
    evidence: list[str] = []
    if suffix == ".py":
        _scan_python(path, text, hits)
        if "__global__" in text:  # CUDA source held in a string (load_inline, RawKernel)
            from gpuenv.advise.pykernels import kernel_text

            kernels = kernel_text(text)  # its strings of C source only, not the Python around them
            # Its own #ifdef __HIP_DEVICE_COMPILE__ / #else (cupyx's kernels): the CUDA side is covered.
            regions = c_regions(kernels) if "#if" in kernels and _HIP_DIRECTIVE.search(kernels) else NO_REGIONS
            mark = len(hits)
            _scan_c(path, kernels, hits, evidence, host=False, device=True, regions=regions, ptx=ptx)
            if len(hits) > mark:  # each construct shown as its line is written, Python and all
                lines = text.split("\n")
                hits[mark:] = [h._replace(what=_line_text(lines[h.line - 1], 0))
                                if h.kind == "construct" and h.rule != "construct:inline-ptx" else h
                                for h in hits[mark:]]  # fmt: skip
    elif suffix in CYTHON_SUFFIXES:
        _scan_python(path, text, hits)
        _scan_cython_externs(path, text, hits)
        _scan_c(path, text, hits, evidence, host=True, device=False, regions=NO_REGIONS, hash_comments=True, ptx=ptx)
        unique: dict[tuple[str, int], Hit] = {}  # extern from "cublas_v2.h" is also a cublas name
        docs = _doc_lines(text) if '"""' in text or "'''" in text else ()
        for h in hits:
            if h.line not in docs:
                unique.setdefault((h.rule, h.line), h)
        hits[:] = list(unique.values())
    elif suffix in C_SUFFIXES:
        regions = c_regions(text, arch, known)
        first = regions.first_hip(text) if regions.spans else None
        if first is not None:
            evidence.append(f"{path}:{first - 1} (a HIP/ROCm branch of #if)")
        elif "hip/" in text and (m := _HIP_INCLUDE.search(text)):
            evidence.append(f"{path}:{text.count(chr(10), 0, m.start()) + 1} {m.group().strip()}")
        _scan_c(path, text, hits, evidence, host=True, device=is_device_code(suffix, text, macros, keyword),
                regions=regions, ptx=ptx)  # fmt: skip
    return hits, (evidence[0] if evidence else None)


CYTHON_SUFFIXES = frozenset({".pyx", ".pxd"})
_HIP_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b[^\n]*__HIP", re.MULTILINE)
_DOCSTRING = re.compile(r"(\"\"\"|''')(.*?)\1", re.DOTALL)


def _doc_lines(text: str) -> set[int]:
    """The lines of a Cython file's docstrings (triple-quoted text that is not kernel source):
    texture.pyx's ``.. seealso:: `cudaCreateTextureObject()`_`` documents the call, it is no use."""
    out: set[int] = set()
    for m in _DOCSTRING.finditer(text):
        body = m.group(2)
        if "__global__" in body or "__device__" in body or "#include" in body:
            continue
        first = text.count("\n", 0, m.start()) + 1
        out.update(range(first, first + body.count("\n") + 1))
    return out
_HIP_INCLUDE = re.compile(r"#[ \t]*include[ \t]*[<\"]hip/[^>\"\n]*[>\"]")
_EXTERN_FROM = re.compile(r"extern\s+from\s+\"([^\"\n]+)\"")


def _scan_cython_externs(path: str, text: str, hits: list[Hit]) -> None:
    """``cdef extern from "cublas_v2.h"``: Cython's #include."""
    for m in _EXTERN_FROM.finditer(text):
        header = m.group(1)
        rule = _HEADERS.get(header) or _HEADERS.get(header.rsplit("/", 1)[-1])
        if rule is not None:
            line = text.count("\n", 0, m.start()) + 1
            hits.append(Hit(f"library:{rule}", m.group(), path, line, "library", True))


def _scan_c(path: str, text: str, hits: list[Hit], evidence: list[str], *, host: bool, device: bool,
            regions: Regions, hash_comments: bool = False,
            ptx: dict[tuple[str, int], tuple[str, ...]] | None = None) -> None:  # fmt: skip
    line, last = 1, 0
    asm_end = -1  # where the last asm() statement ends: its operands are not warp assumptions
    # A line with many uses of one namespace (cute::, cutlass::, thrust::) is one use: CUTLASS
    # itself has 170,000 of them, and a person reads the line once. (The speed of big trees.)
    ns_until, ns_word = -1, ""
    count, rfind, append, spans = text.count, text.rfind, hits.append, regions.spans
    for m in matches(text):
        pos = m.start()
        word = m.group()
        if pos < ns_until and word == ns_word:
            continue
        if pos and word[0] not in _PUNCT and text[pos - 1] in _WORD:
            continue  # inside a longer name: hipcub::, my_cudaMalloc
        start = rfind("\n", 0, pos) + 1
        before = text[start:pos]
        if before and ("//" in before or before.lstrip()[:1] in ("*", "/") or (hash_comments and "#" in before)):
            continue  # a comment
        if word[-1] == ":":
            # cutlass::, cute::, cub::, thrust::: most hits of a big tree, so taken without
            # _classify (a library use, judged as host code is).
            if not host:
                continue
            line += count("\n", last, pos)
            last = pos
            ns_word = word
            ns_until = text.find("\n", pos)
            if ns_until == -1:
                ns_until = len(text)
            side = regions.side(line) if spans else None
            if side != HIP:
                append(_new_hit(Hit, (_NAMESPACE_RULE[word], word + _ident(text, m.end()), path, line, "library", True,
                                      1, "", side == CUDA)))  # fmt: skip
            continue
        rule, kind, what = _classify(word, text, m.end(), before, start)
        if rule is None:
            continue
        if hash_comments and before[-1:] == "." and before[-2:-1] in _WORD:
            # Cython: driver.CU_JIT_INPUT_PTX, an attribute of a binding module (the project's own
            # or an imported one): the binding's own file, or its import, is what is judged.
            continue
        if rule == _W32 and not _warp_assumption(word, text, pos, m.end(), before, start, asm_end):
            continue
        if rule == "construct:inline-ptx":
            what, span, asm_end, body = _statement(text, start, m.end())
            isa = asm_text.classify(body, device)
            if isa == asm_text.AMD:
                if not evidence:
                    evidence.append(f"{path}:{line + text.count(chr(10), last, pos)} (AMD GPU assembly)")
                continue  # the ROCm port's own assembly
            if isa in (asm_text.HOST, asm_text.EMPTY) or (isa == asm_text.UNKNOWN and not device):
                continue  # CPU assembly or a compiler barrier: runs whatever the GPU
        elif kind == "construct":
            if not device and not word.startswith(_HOST_API):
                continue  # a kernel construct outside device code: host arithmetic
            span = 1
        elif not host:
            continue
        else:
            span = 1
        line += count("\n", last, pos)
        last = pos
        side = regions.side(line) if spans else None
        if side == HIP:
            continue  # the project's own ROCm branch: the port, not work
        if kind == "construct" and rule != "construct:inline-ptx":
            what = _line_text(text, start)
        if ptx is not None and rule == "construct:inline-ptx":
            ptx[(path, line)] = asm_text.instructions(body)
        append(_new_hit(Hit, (rule, what, path, line, kind, True, span, "", side == CUDA)))


# A Hit from a tuple of all its fields, without NamedTuple's Python-level __new__ (a big tree
# makes 180,000 of them).
_new_hit = tuple.__new__
# The namespaces the pattern matches ("cutlass::", ...) and their rule.
_NAMESPACE_RULE = {f"{name}::": f"library:{rule}" for name, rule in _HEADER_DIRS.items()}
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _warp_assumption(word: str, text: str, pos: int, end: int, before: str, start: int, asm_end: int) -> bool:
    """Whether a warp-size-32 candidate is one: not an asm operand (" %32,"), nor inside any
    string, nor a host-side divisibility or shape check (size(0) % 32 == 0)."""
    if pos < asm_end:
        return False  # an operand or constraint of the asm() statement before
    if word[0] in "%&0" and (before.count('"') - before.count('\\"')) % 2:
        return False  # inside a string literal: an asm operand placeholder, a format
    if word[0] == "%":
        if _HOST_CHECK.match(text, end):
            return False  # x % 32 == 0: a divisibility (alignment) check, not a lane index
        eol = text.find("\n", end)
        if _HOST_LINE.search(text, start, eol if eol != -1 else len(text)):
            return False
    return True
_NONE: tuple[None, str, str] = (None, "", "")
_W32 = "construct:warp-size-32"
_LANE_MASK_LINE = re.compile(r"mask|warp|lane|ballot|shfl|_sync", re.IGNORECASE)


def _classify(word: str, text: str, end: int, before: str, start: int) -> tuple[str | None, str, str]:
    """(rule, kind, what as written) of one candidate; rule None: not a finding after all."""
    first = word[0]
    if first == "c":
        if word[2:3] == "d" and word.startswith("cuda") and word[4:5].isupper():
            if word.startswith(("cudaBindTexture", "cudaCreateTextureObject", "cudaCreateSurfaceObject")):
                return "construct:texture-surface", "construct", word
            return "library:cuda-runtime", "api", word
        if word.endswith("::"):
            return f"library:{_HEADER_DIRS[word[:-2]]}", "library", word + _ident(text, end)
        if word.startswith("cp."):
            return "construct:hopper-blackwell", "construct", word
        lib = _LIBRARY.match(word)
        if lib is not None and len(word) > lib.end() and (word[lib.end()].isupper() or word[lib.end()] == "_"):
            return f"library:{_LIBRARY_RULE[lib.group()]}", "library", word
        if word[2:3].isupper() and _CALL.match(text, end):
            if word.startswith("cuLink"):
                return "construct:ptx-jit", "construct", word
            if word.startswith("cuTensorMap"):
                return "construct:hopper-blackwell", "construct", word
            return "library:cuda-driver", "api", word
        return _NONE
    if first == "#":
        if before.strip():
            return _NONE  # not a preprocessor line
        inc = _INCLUDE.match(word)
        if inc is None:
            return _W32, "construct", word  # #define WARP_SIZE 32
        header = inc.group(1).strip()
        rule = _HEADERS.get(header) or _HEADERS.get(header.rsplit("/", 1)[-1])
        if rule is None and "/" in header:
            rule = _HEADER_DIRS.get(header.split("/", 1)[0])
        return (f"library:{rule}", "library", word) if rule else _NONE
    if first == "0":  # a full 32-bit mask outside a *_sync call: FULL_MASK constants
        eol = text.find("\n", end)
        if _LANE_MASK_LINE.search(text, start, eol if eol != -1 else len(text)):
            return _W32, "construct", word
        return _NONE
    if first == "n":
        if word.startswith("nvcuda"):
            return "construct:wmma", "construct", word
        library = _LIBRARY.match(word)  # the scan matched one of these names at this word
        return (f"library:{_LIBRARY_RULE[library.group()]}", "library", word) if library else _NONE
    if first == "t":
        if word.startswith("thrust"):
            return "library:thrust", "library", word + _ident(text, end)
        if word.startswith("thread"):
            return _W32, "construct", word
        if word.startswith("tcgen"):
            return "construct:hopper-blackwell", "construct", word
        return "construct:texture-surface", "construct", word
    if first == "s":
        return "construct:texture-surface", "construct", word
    if first == "w":
        if word.startswith("wmma"):
            return "construct:wmma", "construct", word
        if word.startswith("wgmma"):
            return "construct:hopper-blackwell", "construct", word
        return _W32, "construct", word
    if first == "a":
        return "construct:inline-ptx", "construct", word
    if first == "<" or first == "d":
        return _W32, "construct", word  # a launch or block shape of one 32-thread warp
    if first == "l":
        return "construct:cg-unsupported", "construct", word
    if first == "_":
        if word.startswith("__asm"):
            return "construct:inline-ptx", "construct", word
        if word.startswith("__cluster"):
            return "construct:hopper-blackwell", "construct", word
        return _W32, "construct", word
    if first == '"' or first == "C":
        if word.startswith("CUtensorMap"):
            return "construct:hopper-blackwell", "construct", word
        return "construct:ptx-jit", "construct", word
    if first == "S":
        return "construct:hopper-blackwell", "construct", word
    return _W32, "construct", word  # & 31, % 32, WARP_SIZE = 32, kWarpSize = 32


_IDENT = re.compile(r"\w*")


def _ident(text: str, pos: int) -> str:
    m = _IDENT.match(text, pos)  # \w* always matches; the check is for the type checker
    return m.group() if m else ""


# One pattern per statement keyword: a pattern that starts with a literal word is searched for by
# the regex engine's own fast prefix scan; an alternation of them tries every i and f of the text.
_PY_FROM = re.compile(r"from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+\(?[ \t]*([\w \t,]+)")
_PY_IMPORT = re.compile(
    r"import[ \t]+([A-Za-z_][\w.]*(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*(?:[ \t]+as[ \t]+\w+)?)*)"
)
_PY_EXTENSION = re.compile(r"CUDAExtension\b")


def _scan_python(path: str, text: str, hits: list[Hit]) -> None:
    found = [(m.start(), 0, m) for m in _PY_FROM.finditer(text)]
    found += [(m.start(), 1, m) for m in _PY_IMPORT.finditer(text)]
    if "CUDAExtension" in text:
        found += [(m.start(), 2, m) for m in _PY_EXTENSION.finditer(text)]
    found.sort()  # by place (no two start at one): the tuples' later items are never compared
    line, last = 1, 0
    count, rfind, append = text.count, text.rfind, hits.append
    for pos, kind, m in found:
        if pos and (text[pos - 1].isalnum() or text[pos - 1] == "_"):
            continue
        start = rfind("\n", 0, pos) + 1
        before = text[start:pos]
        if "#" in before:
            continue
        if kind == 2 or (kind == 0 and "CUDAExtension" in m.group(2)):
            if kind == 2 and before.lstrip().startswith("from "):
                continue  # the import line itself: counted once, by its "from"
            line += count("\n", last, pos)
            last = pos
            append(_new_hit(Hit, ("construct:cuda-extension", "CUDAExtension", path, line, "extension", True, 1, "",
                                  False)))  # fmt: skip
            continue
        if before.strip():
            continue  # "import" in the middle of a line (the import of a from line): not a statement
        line += count("\n", last, pos)  # counted from the last hit's place: lines passed over add up
        last = pos
        if kind == 0:  # from MOD import a, b: MOD, and MOD.a for packages of modules
            module = m.group(1)
            names = [n.strip().split()[0] for n in m.group(2).split(",") if n.strip()]
            candidates = [module] + [f"{module}.{n}" for n in names]
        else:
            candidates = [part.split()[0] for part in m.group(1).split(",") if part.strip()]
        for module in candidates:
            append(_new_hit(Hit, ("import", module, path, line, "import", True, 1, "", False)))


# A string literal (its escapes, an unclosed one to the end of its line) or a parenthesis. The
# string is written as runs between escapes: a run is one repeat of a character set to the
# regex engine, where an alternation per character (the plain way) costs a branch per character.
_TOKEN = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"?|[()]')


def _statement(text: str, start: int, open_at: int, limit: int = 8192) -> tuple[str, int, int, str]:
    """(the statement from ``start`` to the parenthesis closing at/after ``open_at``, one line;
    how many lines it spans; where it ends; its full text). String literals are skipped; an
    unclosed one ends at ``limit``."""
    depth, end, i = 1, min(len(text), open_at + limit), min(len(text), open_at + limit)
    for t in _TOKEN.finditer(text, open_at, end):
        c = t.group()
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if not depth:
                i = t.end()
                break
    body = text[start:i]
    written = " ".join(body.split())
    return (written if len(written) <= 120 else written[:117] + "..."), body.count("\n") + 1, i, body


def _line_text(text: str, start: int, limit: int = 120) -> str:
    end = text.find("\n", start)
    written = text[start : end if end != -1 else len(text)].strip()
    return written if len(written) <= limit else written[: limit - 3] + "..."
