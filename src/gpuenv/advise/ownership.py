"""Findings that are not what they seem, dropped or set apart before the verdict: a ``cute``
namespace the tree nests in its own, the project's own name as a dependency, and a CUDA-only
package imported lazily by the module named for it (its integration, used only with its feature).
"""

from __future__ import annotations

import re

from gpuenv.advise.model import Level, Walked

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.advise.verdict import _Group


def drop_own_namespaces(groups: dict[tuple[str, str, Level, bool, bool], _Group], person: dict[str, set[int]],
                         walked: Walked) -> None:  # fmt: skip
    """A file that names ``cute::`` but includes no CuTe header, below a top directory that nests
    a ``cute`` namespace of its own (TileLang's compiler), uses that namespace: no CUTLASS use."""
    for key in [k for k in groups if k[0] == "library:cutlass" and k[1] in walked.ns_only]:
        top = key[1].split("/", 1)[0] if "/" in key[1] else ""
        if all(top in walked.own_ns.get(ns, ()) for ns in walked.ns_only[key[1]]):
            group = groups.pop(key)
            if key[1] in person:
                person[key[1]] -= group.lines


def integration(where: str, module: str) -> str:
    """A CUDA-only package imported inside a function of a module named for it (Megatron's
    core/post_training/modelopt/ importing modelopt, export/trtllm/ importing tensorrt_llm): that
    integration runs only when its feature is asked for, even where the tree has no ROCm build."""
    from gpuenv.advise.parts import is_backend

    top = module.split(".", 1)[0].lower()
    words = {w for seg in where.lower().split("/")[:-1] for w in (seg, *re.split(r"[_.-]", seg))}
    named = top in words or top in where.lower().rsplit("/", 1)[-1].split(".")[0].split("_")
    if not named and not (is_backend(where) and not _GENERIC.search(where)):
        return ""
    return f"{where.rpartition('/')[0]}/ (imported inside a function of a module named for it: used when that feature is)"


_DEF = re.compile(r"\s*(?:async\s+)?def\s+(\w+)")
# Words of a function's name that name a platform, not one package (pycuda in _cuda_setup is core).
_PLATFORM_WORDS = frozenset({"cuda", "cu", "nv", "nvidia", "gpu", "gpus", "device", "kernel", "kernels"})


def function_named_for(lines: list[str], index: int, module: str) -> str:
    """What makes a lazy import optional when the function around it is named for the package
    it imports (``def _lazy_load_cudf_is_bool(): from cudf.api.types import ...``): that function
    runs when the package's own data or feature is used, as a module named for it does
    (``integration``). "" when the function is not so named, or the import is not in one."""
    indent = len(lines[index]) - len(lines[index].lstrip(" \t"))
    top = module.split(".", 1)[0].lower()
    names = {top, *re.split(r"[_-]", top)}
    for i in range(index - 1, max(-1, index - 2000), -1):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith(("#", ")", "]", "}")):
            continue
        here = len(lines[i]) - len(lines[i].lstrip(" \t"))
        if here >= indent:
            continue
        indent = here
        found = _DEF.match(lines[i])
        if found:
            words = [w for w in found.group(1).lower().split("_") if w and w not in _PLATFORM_WORDS]
            # cudf in _cudf_str_cat_inf names pylibcudf too: a word at the end of the package's name.
            if any(w in names or (len(w) >= 4 and top.endswith(w)) for w in words):
                return f"inside def {found.group(1)}(): a function named for {top}, run when that feature is"
            return ""
        if indent == 0:
            return ""
    return ""


# is_backend's generic words: a cuda/ or nvidia/ directory names a platform, not one package.
_GENERIC = re.compile(r"(?:^|[/_.-])(?:cuda|nvidia)(?=[/_.-]|$)", re.IGNORECASE)


def drop_itself(groups: dict[tuple[str, str, Level, bool, bool], _Group], person: dict[str, set[int]],
                 ident: str) -> None:  # fmt: skip
    """The project is never its own dependency: NVIDIA Warp's `import warp` and its uv.lock entry
    for warp-lang are the tree itself (known only once its pyproject is read, after some hits)."""
    for key in [k for k in groups if k[0] in (f"package:{ident}", f"module:{ident}")]:
        group = groups.pop(key)
        if key[1] in person:
            person[key[1]] -= group.lines
