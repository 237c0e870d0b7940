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
