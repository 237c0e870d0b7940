"""System CUDA and ROCm libraries on the loader path that contradict the installed toolkit.

The loader opens a library by its soname (libcudart.so.12) and takes the first directory that
has it: LD_LIBRARY_PATH, then the ldconfig cache. Two copies of one soname at different
versions, or a runtime of another CUDA or ROCm release than the installed toolkit, mean a
program gets a library it was not built with.
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts, Library
from gpuenv.resolve import inventory as inv
from gpuenv.resolve import toolkitpaths
from gpuenv.resolve.facts_view import wanted_toolkit
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

LD_REF = "https://man7.org/linux/man-pages/man8/ld.so.8.html"
CUDA_LIBS = ("cudart", "cublas")  # versioned like the toolkit: cudart 12.8.90 is CUDA 12.8
ROCM_LIBS = ("miopen", "rocblas", "rccl", "hipblaslt")
ON_LOADER_PATH = ("ld_library_path", "ldconfig")
_ORDER: dict[str | None, int] = {"ld_library_path": 0, "ldconfig": 1}


def loader_libraries(facts: Facts, names: tuple[str, ...]) -> list[Library]:
    """The libraries a program can load without help, in the loader's order."""
    libs = [lib for lib in facts.libraries or () if lib.name in names and lib.source in ON_LOADER_PATH]
    return sorted(libs, key=lambda lib: _ORDER[lib.source])  # stable: the probe's order within a source


def describe(lib: Library) -> str:
    where = "LD_LIBRARY_PATH" if lib.source == "ld_library_path" else "ldconfig"
    return f"{lib.path} ({lib.name} {lib.version or 'unversioned'}, {where})"


def _soname_clashes(libs: list[Library]) -> list[tuple[Library, Library]]:
    """(winner, shadowed) pairs: one soname (name + major) at two versions on the loader path."""
    first: dict[tuple[str, str], Library] = {}
    out = []
    for lib in libs:
        if not lib.version:
            continue
        key = (lib.name, lib.version.split(".")[0])
        winner = first.setdefault(key, lib)
        if (
            winner is not lib
            and "." in lib.version
            and "." in (winner.version or "")
            and (inv.version_tuple(winner.version)[:2] != inv.version_tuple(lib.version)[:2])
        ):
            out.append((winner, lib))
    return out


@check(code="cuda.library-conflict", area="nvidia", needs=("libraries",))
def cuda_library_conflict(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    libs = loader_libraries(facts, CUDA_LIBS)
    if not libs:
        return
    wanted = wanted_toolkit(facts, target, "cuda")
    want = inv.series(wanted[0]) if wanted else None
    problems: list[str] = []
    stale: list[Library] = []
    for winner, shadowed in _soname_clashes(libs):
        problems.append(
            f"{describe(winner)} is found first; {describe(shadowed)} is never loaded, though programs built "
            f"with CUDA {inv.series(shadowed.version)} may expect it"
            + (f" (the toolkit in use, {wanted[1]}, is CUDA {wanted[0]})" if wanted else "")
        )
        # Keep the copy of the toolkit in use; without one known, the LD_LIBRARY_PATH copy is the ad-hoc one.
        stale.append(shadowed if want and inv.series(winner.version) == want else winner)
    toolkits = inv.installed_cuda(facts)
    majors = {inv.version_tuple(v)[0] for v in toolkits if inv.version_tuple(v)}
    strays = []
    if majors:
        for lib in libs:
            major = inv.version_tuple(lib.version)[:1]
            if lib.name == "cudart" and major and major[0] not in majors:
                strays.append(lib)
        if strays:
            problems.append(
                "CUDA runtime of another major than the installed toolkit"
                + ("s" if len(toolkits) > 1 else "")
                + f" ({', '.join(toolkits)}): "
                + ", ".join(describe(lib) for lib in strays)
            )
    if not problems:
        return
    fixes = []
    for lib in stale + strays:
        directory = lib.path.rsplit("/", 1)[0] if lib.path else "?"
        fixes.append(_remove_dir_fix(lib, directory))
    yield Finding(
        severity=Severity.WARNING,
        title="The loader path holds CUDA libraries that contradict the installed toolkit",
        detail="; ".join(problems)
        + ". The loader takes the first directory that has a soname: LD_LIBRARY_PATH, then "
        "the ldconfig cache.",
        fix="\n".join(dict.fromkeys(fixes)) or "Remove the stale directories from the loader path.",
        refs=(LD_REF,),
    )


def _remove_dir_fix(lib: Library, directory: str) -> str:
    if lib.source == "ld_library_path":
        return f"remove {directory} from LD_LIBRARY_PATH (shell profile, /etc/environment, the job script)"
    return (
        f"grep -rl '{directory}' /etc/ld.so.conf /etc/ld.so.conf.d/  # the file that adds it: delete that line or "
        "purge the package that ships it\nsudo ldconfig"
    )


_ROCM_TREE = r"^/opt/rocm-(\d+\.\d+(?:\.\d+)?)/"


def _rocm_release_of(facts: Facts, lib: Library) -> str | None:
    found = toolkitpaths.toolkit_of_path(facts, lib.path or "")
    if found and found[0] == "rocm":
        return ".".join(str(n) for n in inv.version_tuple(found[1])[:3])
    m = re.match(_ROCM_TREE, toolkitpaths.real_path(facts, lib.path or ""))
    return m.group(1) if m else None


def _same(a: str, b: str) -> bool:
    """One release: 7.2 and 7.2.0 agree on what both say."""
    ta, tb = inv.version_tuple(a), inv.version_tuple(b)
    n = min(len(ta), len(tb))
    return ta[:n] == tb[:n]


@check(code="rocm.library-conflict", area="amd", needs=("libraries",))
def rocm_library_conflict(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    libs = [(lib, rel) for lib in loader_libraries(facts, ROCM_LIBS) if (rel := _rocm_release_of(facts, lib))]
    releases = list(dict.fromkeys(rel for _, rel in libs))
    in_use = inv.installed_rocm(facts)
    if not libs or (len(releases) == 1 and (in_use is None or _same(releases[0], in_use))):
        return
    if len(releases) > 1:
        what = "libraries of several ROCm releases: " + ", ".join(
            f"{describe(lib)} from ROCm {rel}" for lib, rel in libs
        )
    else:
        what = (
            f"ROCm {releases[0]} libraries ({', '.join(describe(lib) for lib, _ in libs)}) while the ROCm in use "
            f"(/opt/rocm) is {in_use}"
        )
    wrong = [lib for lib, rel in libs if in_use is not None and not _same(rel, in_use)]
    fixes = [_remove_dir_fix(lib, (lib.path or "?").rsplit("/", 1)[0]) for lib in wrong] or [
        "keep one ROCm release's lib directory on the loader path"
    ]
    yield Finding(
        severity=Severity.WARNING,
        title="The loader path mixes ROCm releases",
        detail=f"{what}. A HIP program then loads one release's libraries against another's runtime.",
        fix="\n".join(dict.fromkeys(fixes)),
        refs=(LD_REF,),
    )

