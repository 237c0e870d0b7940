"""The CUDA toolkit: more than one owner, forward-compatibility libraries on consumer GPUs, PATH."""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.resolve import gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import basis, cuda_toolkit

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

MIXED_REF = "https://docs.nvidia.com/cuda/cuda-installation-guide-linux/"
COMPAT_REF = "https://docs.nvidia.com/deploy/cuda-compatibility/"

_CANONICAL_DRIVER = r"^nvidia-driver-\d+"  # Ubuntu archive: nvidia-driver-570(-server)(-open)
_NVIDIA_REPO_DRIVER = r"^(cuda-drivers(-\d+)?|nvidia-open(-\d+)?|nvidia-driver-cuda)$"
_DEBIAN_DRIVER = r"^nvidia-driver$"


def _upstream(version: str) -> tuple[int, ...]:
    return inv.version_tuple(version)[:3]


@check(code="cuda.mixed-install", area="nvidia", needs=("packages",), blocking=True)
def mixed_install(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    """Two owners of one thing. Package names alone do not tell the owner: NVIDIA's CUDA repository
    ships Ubuntu's names (nvidia-driver-570, libnvidia-compute-570) and Debian's (nvidia-driver)
    too, and its cuda-drivers meta-package depends on them, so cuda-drivers beside nvidia-driver-570
    is one normal install. Two owners show as driver packages of different upstream versions
    (one repository keeps its driver packages at one version), or as a runfile toolkit beside a
    packaged CUDA toolkit (NVIDIA's chart: a runfile toolkit with a packaged driver is fine)."""
    drivers = inv.nvidia_driver_packages(facts)
    owners: dict[str, list[str]] = {}
    for pattern, owner in (
        (_CANONICAL_DRIVER, "distribution archive"),
        (_NVIDIA_REPO_DRIVER, "NVIDIA CUDA repository"),
        (_DEBIAN_DRIVER, "distribution archive"),
    ):
        hits = [n for n in drivers if re.match(pattern, n)]
        if hits:
            owners.setdefault(owner, []).extend(hits)
    problems = []
    versions = {owner: {_upstream(drivers[n]) for n in pkgs} - {()} for owner, pkgs in owners.items()}
    split = len(owners) > 1 and len(set().union(*versions.values())) > 1
    if split:
        problems.append(
            "driver packages from two sources at different versions: "
            + "; ".join(f"{', '.join(f'{n} {drivers[n]}' for n in pkgs)}" for pkgs in owners.values())
        )
    runfile = [t for t in facts.toolkits.cuda if t.source == "runfile"]
    # NVIDIA-repository toolkit packages (cuda-toolkit-12-8, cuda-nvcc-12-8, ...); Ubuntu's own
    # nvidia-cuda-toolkit lives in /usr/lib/nvidia-cuda-toolkit and shares no files with a runfile.
    packaged = [n for n in inv.cuda_toolkit_packages(facts) if n != "nvidia-cuda-toolkit"]
    if runfile and packaged:
        problems.append(
            "runfile toolkit "
            + ", ".join(f"{t.version} at {t.path}" for t in runfile)
            + " beside toolkit packages "
            + ", ".join(packaged)
        )
    if not problems:
        return
    fixes = []
    if runfile and packaged:
        for t in runfile:
            fixes.append(f"sudo {t.path}/bin/cuda-uninstaller  # remove the runfile toolkit first")
    if split:
        keep = "NVIDIA CUDA repository" if "NVIDIA CUDA repository" in owners else next(iter(owners))
        drop = [p for o, pkgs in owners.items() if o != keep for p in pkgs]
        fixes.append(f"sudo apt-get purge {' '.join(drop)}  # keep one owner: the {keep}")
    yield Finding(
        severity=Severity.ERROR,
        title="The NVIDIA driver or CUDA toolkit has more than one owner",
        detail="; ".join(problems) + ". Upgrades from one source break the other's files.",
        fix="\n".join(fixes) + "\nthen reinstall from one source: gpuenv install cuda --dry-run",
        refs=(MIXED_REF,),
    )


def _consumer(name: str) -> bool:
    lowered = name.lower()
    return "geforce" in lowered or "titan" in lowered


@check(code="cuda.forward-compat-unsupported", area="nvidia")
def forward_compat(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    entries = toolkitpaths.path_entries(facts, "LD_LIBRARY_PATH") or []
    compat = [p for p in entries if re.search(r"/cuda[^/]*/compat$", p)]
    if not compat:
        return
    consumer = [g for g in facts.gpus_of("nvidia") if _consumer(gpuinfo.gpu_name(g, matrices))]
    if not consumer:
        return
    packages = ", ".join(inv.cuda_compat_packages(facts)) or "cuda-compat"
    yield Finding(
        severity=Severity.ERROR,
        title="CUDA forward-compatibility libraries are loaded on a consumer GPU",
        detail=f"LD_LIBRARY_PATH has {', '.join(compat)} ({packages}); GPUs: {gpuinfo.describe(consumer, matrices)}. "
        "Forward compatibility supports data-centre and selected professional GPUs only: CUDA fails to initialise.",
        fix=f"Remove {', '.join(compat)} from LD_LIBRARY_PATH (shell profile, /etc/environment), and "
        "upgrade the driver instead if a newer CUDA is needed: gpuenv install cuda --dry-run",
        gpus=gpuinfo.slots(consumer),
        refs=(COMPAT_REF,),
    )


@check(code="cuda.not-on-path", area="nvidia")
def not_on_path(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    path = toolkitpaths.path_entries(facts, "PATH")
    if path is None or not facts.toolkits.cuda:
        return
    dirs = {f"{t.path}/bin" for t in facts.toolkits.cuda if t.path}
    # /usr/local/cuda and /usr/local/cuda-12 are alternatives links to an installed tree.
    if not dirs or dirs & set(path) or any(re.fullmatch(r"/usr/local/cuda(-\d+)?/bin", p) for p in path):
        return
    newest = max(facts.toolkits.cuda, key=lambda t: inv.version_tuple(t.version))
    yield Finding(
        severity=Severity.INFO,
        title=f"CUDA {newest.version} is installed but nvcc is not on PATH",
        detail=f"toolkits: {', '.join(f'{t.version} at {t.path}' for t in facts.toolkits.cuda)}; "
        + (f"PATH's GPU entries: {':'.join(path)}" if path else "PATH has no CUDA directory")
        + " (the environment gpuenv ran in; sudo resets PATH).",
        fix=f"echo 'export PATH={newest.path}/bin${{PATH:+:${{PATH}}}}' >> ~/.profile  # then log in again",
        refs=(MIXED_REF,),
    )


@check(code="cuda.release-unknown", area="nvidia", needs=("matrices",), not_judged=True)
def release_unknown(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    if target.stack != "cuda" or not target.version or cuda_toolkit(matrices, target) is not None:
        return
    toolkits = matrices.cuda_toolkits()
    oldest, newest = toolkits[0].version, toolkits[-1].version
    version = target.version
    if inv.older(version, oldest):
        why, fix = f"older than the oldest toolkit the matrices know ({oldest})", (
            "Move to a toolkit the matrices know: gpuenv install cuda --dry-run"
        )
    elif inv.older(inv.series(newest), version):
        why, fix = f"newer than the newest toolkit the matrices know ({newest})", (
            "gpuenv matrix update --from URL  # a bundle that knows this toolkit"
        )
    else:
        why, fix = f"not a toolkit the matrices know ({oldest} to {newest})", (
            "Judge it against a known toolkit: gpuenv doctor --target cuda@SERIES"
        )
    gpus = facts.gpus_of("nvidia")
    yield Finding(
        severity=Severity.WARNING,
        title=f"CUDA {version} is not in the matrices: this toolkit was not judged",
        detail=f"CUDA {version} ({basis(target)}) is {why}. Not judged: the driver it needs, the GPUs' compute "
        f"capabilities ({', '.join(sorted({c for g in gpus if (c := gpuinfo.compute_capability(g, matrices))})) or '?'}) "
        "in it.",
        fix=fix,
        gpus=gpuinfo.slots(gpus),
    )
