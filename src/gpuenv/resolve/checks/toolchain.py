"""Host compilers: the gcc/g++ nvcc would use against the range its CUDA release accepts, and
hipcc without ROCm's own clang."""

from __future__ import annotations

import re

from gpuenv.facts import Facts, Tool
from gpuenv.resolve import inventory as inv
from gpuenv.resolve import toolkitpaths
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

NVCC_REF = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#nvcc-environment-variables"
HIPCC_REF = "https://rocm.docs.amd.com/projects/HIPCC/en/docs-6.4.0/env.html"
_NAMED = r"^(?:.*/)?(?:[\w.-]+-linux-gnu-)?(gcc|g\+\+|clang|clang\+\+)(?:-(\d+))?$"


def cuda_in_use(facts: Facts, target: Target) -> tuple[str, str] | None:
    """(version, why) of the CUDA toolkit a build would use: the nvcc on PATH, CUDA_HOME's tree,
    the explicit target, else the newest installed toolkit."""
    found = toolkitpaths.nvcc_on_path(facts)
    if found:
        return found[0], f"the nvcc on PATH, {found[1]}"
    env = facts.environment or {}
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            tk = toolkitpaths.toolkit_of_path(facts, env[var])
            if tk and tk[0] == "cuda":
                return tk[1], f"{var}={env[var]}"
    if target.stack == "cuda" and target.version and target.explicit:
        return target.version, "the --target"
    versions = inv.installed_cuda(facts)
    if versions:
        return versions[0], "the newest installed toolkit"
    return None


def _tool(facts: Facts, name: str, major: str | None = None) -> Tool | None:
    tools = [t for t in facts.toolchain or () if t.name == name and t.version]
    if major is not None:
        return next((t for t in tools if (t.version or "").split(".")[0] == major), None)
    for source in ("path", "package"):
        hit = next((t for t in tools if t.source == source and t.default), None)
        if hit:
            return hit
    return None


def host_compiler(facts: Facts) -> tuple[str, str, str] | None:
    """(family 'gcc'|'clang', version, what) of the host compiler nvcc runs: NVCC_CCBIN's, else
    the default g++ (gcc when no g++ is known)."""
    ccbin = (facts.environment or {}).get("NVCC_CCBIN")
    if ccbin:
        m = re.match(_NAMED, ccbin.strip())
        if not m:
            return None  # a directory or another compiler: not judged
        name, major = m.group(1), m.group(2)
        family = "clang" if name.startswith("clang") else "gcc"
        tool = _tool(facts, {"clang++": "clang", "gcc": "gcc"}.get(name, name), major)
        version = tool.version if tool else major
        return (family, version, f"NVCC_CCBIN={ccbin}") if version else None
    for name in ("g++", "gcc"):
        tool = _tool(facts, name)
        if tool and tool.version:
            how = {"path": "PATH", "package": "dpkg"}.get(
                tool.source or "", tool.source or "?"
            )
            return "gcc", tool.version, f"the default {name}, {tool.path or name} (from {how})"
    return None


@check(code="cuda.host-compiler", area="nvidia", needs=("matrices", "toolchain"))
def host_compiler_check(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    cuda = cuda_in_use(facts, target)
    compiler = host_compiler(facts)
    if cuda is None or compiler is None:
        return
    supported = matrices.host_compilers(cuda[0])
    if supported is None:
        return  # no source for this release's range: say nothing rather than guess
    family, version, what = compiler
    low, high = supported.gcc if family == "gcc" else supported.clang
    major = inv.version_tuple(version)[:1]
    if not major or low <= major[0] <= high:
        return
    label = "GCC" if family == "gcc" else "Clang"
    newer = major[0] > high
    alternatives = sorted(
        {int(t.version.split(".")[0]) for t in facts.toolchain or () if t.name == "g++" and t.version
         and low <= int(t.version.split(".")[0]) <= high},
    )  # fmt: skip
    pick = alternatives[-1] if alternatives else high
    fix = (
        []
        if alternatives
        else [
            f"sudo apt-get install gcc-{pick} g++-{pick}  # or the newest GCC your distribution packages within {low}-{high}"
        ]
    )
    fix += [
        f"nvcc -ccbin g++-{pick} ...  # or for every nvcc run: export NVCC_CCBIN=g++-{pick}",
        f"CMake: -DCMAKE_CUDA_HOST_COMPILER=g++-{pick} (or export CUDAHOSTCXX=g++-{pick}); "
        f"PyTorch extensions: export CC=gcc-{pick} CXX=g++-{pick}",
        f"or make it the default: sudo update-alternatives --install /usr/bin/g++ g++ /usr/bin/g++-{pick} 100",
    ]
    yield Finding(
        severity=Severity.WARNING,
        title=f"nvcc of CUDA {inv.series(cuda[0]) or cuda[0]} does not support {label} {major[0]}"
        f" ({'newer' if newer else 'older'} than {label} {high if newer else low})",
        detail=f"host compiler: {label} {version}, {what}; CUDA {cuda[0]} ({cuda[1]}) accepts {label} {low}-{high}. "
        + (
            "nvcc stops with '#error -- unsupported GNU version!' unless given -allow-unsupported-compiler, "
            "which risks failed builds or wrong results."
            if newer and family == "gcc"
            else "nvcc stops with an unsupported-compiler error unless given -allow-unsupported-compiler."
            if newer
            else "Older compilers than the range are not supported by NVIDIA."
        )
        + (
            f" Installed alternatives in range: {', '.join(f'g++-{n}' for n in alternatives)}."
            if alternatives
            else ""
        ),
        fix="\n".join(fix),
        refs=(supported.source.split(" ", 1)[0], NVCC_REF),
    )


@check(code="rocm.hipcc-clang-missing", area="amd", needs=("toolchain",))
def hipcc_clang_missing(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if (facts.environment or {}).get("HIP_CLANG_PATH"):
        return  # the user points hipcc at another clang
    tools = facts.toolchain or ()
    trees_with_clang = {
        t.path.rsplit("/llvm/bin/clang", 1)[0] for t in tools if t.name == "rocm-llvm" and t.path
    }
    bare = [
        t.path
        for t in tools
        if t.name == "hipcc" and t.path and t.path.rsplit("/bin/hipcc", 1)[0] not in trees_with_clang
    ]
    if not bare:
        return
    trees = [path.rsplit("/bin/hipcc", 1)[0] for path in bare]
    yield Finding(
        severity=Severity.ERROR,
        title="hipcc is installed without ROCm's clang",
        detail=f"{', '.join(bare)} present, but no {', '.join(f'{p}/llvm/bin/clang' for p in trees)}. "
        "hipcc runs the clang in ROCM_PATH/llvm/bin (HIP_CLANG_PATH unset): every HIP compile fails.",
        fix="sudo apt-get install rocm-llvm  # ROCm's clang, /opt/rocm/llvm\n"
        "or point hipcc at another ROCm clang: export HIP_CLANG_PATH=/path/to/llvm/bin",
        refs=(HIPCC_REF,),
    )
