"""The CUDA and ROCm toolkits as the facts place them: the bundled entry of a toolkit version,
where a path (a loader directory, a PATH entry, CUDA_HOME) leads and which toolkit tree it is in,
and which nvcc a shell runs (pure functions, no I/O).
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.resolve.inventory import series
from gpuenv.resolve.memo import LastAsked

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.matrices import CudaToolkit, Matrices


def path_entries(facts: Facts, variable: str) -> list[str] | None:
    """Entries of a colon-separated variable ([] when unset), or None when the probe did not read
    the environment. (The probe keeps only PATH's toolkit entries: no PATH means none.)"""
    env = facts.environment
    if env is None:
        return None
    return [p.rstrip("/") for p in env.get(variable, "").split(":") if p]


_toolkits = LastAsked()  # per matrices: {version: toolkit}


def toolkit_for(matrices: Matrices, version: str) -> CudaToolkit | None:
    """The bundled CUDA toolkit entry for a version ('12.8.1', or a series '12.8' = its GA);
    remembered per matrices object (fleet runs ask the same few versions thousands of times)."""
    memo: dict[str, CudaToolkit | None] = _toolkits.answers(matrices)
    if version not in memo:
        memo[version] = matrices.cuda_toolkit(version) or matrices.cuda_toolkit(series(version) or version)
    return memo[version]


# -- toolkit paths (loader libraries, PATH, CUDA_HOME) -------------------------------------------

_CUDA_TREE = r"^/usr/local/cuda(?:-(\d+(?:\.\d+)*))?(?:/|$)"
_ROCM_TREE = r"^/opt/rocm(?:-(\d+(?:\.\d+)*))?(?:/|$)"


def real_path(facts: Facts, path: str) -> str:
    """Where ``path`` leads as far as the facts know (``path_targets``: the longest recorded
    prefix, e.g. /usr/local/cuda -> /usr/local/cuda-12.8), else the path itself."""
    norm = path.rstrip("/") or "/"
    targets = facts.path_targets or {}
    probe = norm
    while probe and probe != "/":
        target = targets.get(probe)
        if target:
            return target + norm[len(probe):]
        parent = probe.rsplit("/", 1)[0]
        if parent == probe:
            break  # a relative entry ("bin", "." in PATH) has no parent to try
        probe = parent
    return norm


def path_exists(facts: Facts, path: str) -> bool | None:
    """False when the probe saw that ``path`` leads nowhere, True when it or a toolkit tree
    is there, None when the facts do not say."""
    norm = path.rstrip("/") or "/"
    targets = facts.path_targets
    if targets is not None and norm in targets:
        return targets[norm] is not None
    trees = [t.path for t in (*facts.toolkits.cuda, *facts.toolkits.rocm) if t.path]
    if real_path(facts, norm) in trees:
        return True
    return None


def toolkit_of_path(facts: Facts, path: str) -> tuple[str, str] | None:
    """('cuda', '12.8.1') or ('rocm', '7.2.0') for a path inside a toolkit tree (links followed as
    the facts recorded them); the installed toolkit's full version where the tree is one of them,
    else the version the directory name carries; None for other paths or unknown versions."""
    real = real_path(facts, path)
    for stack, pattern, tks in (("cuda", _CUDA_TREE, facts.toolkits.cuda), ("rocm", _ROCM_TREE, facts.toolkits.rocm)):
        m = re.match(pattern, real)
        if not m:
            continue
        for tk in tks:
            if tk.path and (real == tk.path or real.startswith(tk.path.rstrip("/") + "/")):
                return stack, tk.version
        if m.group(1):
            return stack, m.group(1)
        if facts.path_targets is None and len(tks) == 1:
            return stack, tks[0].version  # /usr/local/cuda, not resolved by the probe, one toolkit
        return None
    return None


def nvcc_on_path(facts: Facts) -> tuple[str, str] | None:
    """(version, path) of the nvcc a shell runs: what `nvcc --version` said on the live machine,
    else the first PATH entry inside a CUDA tree; None when not known."""
    for tool in facts.toolchain or ():
        if tool.name == "nvcc" and tool.source == "command" and tool.version:
            return tool.version, tool.path or "nvcc"
    for entry in path_entries(facts, "PATH") or ():
        found = toolkit_of_path(facts, entry)
        if found and found[0] == "cuda":
            return found[1], f"{entry}/nvcc"
    return None
