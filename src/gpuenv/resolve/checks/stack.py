"""Both stacks at once, and a stack left behind by a GPU that is gone."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.vendorrepos import vendor_of

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices


def _cuda_items(facts: Facts) -> list[str]:
    pkgs = {**inv.nvidia_driver_packages(facts), **inv.cuda_toolkit_packages(facts)}
    return list(pkgs) + [f"{t.path or 'CUDA ' + t.version}" for t in facts.toolkits.cuda]


def _rocm_items(facts: Facts) -> list[str]:
    pkgs = {**inv.amd_driver_packages(facts), **inv.rocm_packages(facts)}
    return list(pkgs) + [f"{t.path or 'ROCm ' + t.version}" for t in facts.toolkits.rocm]


@check(code="stack.both-installed", area="stacks", noted=True)
def both_installed(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if not (inv.has_cuda_stack(facts) and inv.has_rocm_stack(facts)):
        return
    both_gpus = bool(facts.gpus_of("nvidia")) and bool(facts.gpus_of("amd"))
    if not both_gpus and not facts.platform.wsl:
        return  # one stack has no GPU here: stack.leftovers names it, with the purge
    yield Finding(
        severity=Severity.WARNING,
        title="CUDA and ROCm are both installed",
        detail=f"CUDA: {', '.join(_cuda_items(facts)[:6])}; ROCm: {', '.join(_rocm_items(facts)[:6])}. "
        + (
            "Both vendors' GPUs are present, so this can be intended; library paths and PyTorch builds must "
            "be kept apart."
            if both_gpus
            else "The GPUs cannot be seen here (WSL): keep only the stack the Windows host's GPU uses."
        ),
        fix="Keep the stack your GPUs use and remove the other: gpuenv install rocm|cuda --dry-run shows the purge.",
    )


@check(code="stack.leftovers", area="stacks")
def leftovers(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if facts.platform.wsl or facts.platform.container or not facts.bus_read:
        # WSL lists no PCI GPUs, and a container image carries its stack to whatever host runs
        # it (a CUDA image on a CPU-only CI runner): "the GPU is gone" cannot be judged there,
        # nor where the bus could not be read (a purge of a driver whose GPU is here is no fix).
        return
    vendors = {"nvidia": bool(facts.gpus_of("nvidia")), "amd": bool(facts.gpus_of("amd"))}
    sources: dict[str, list[str]] = {"nvidia": [], "amd": []}
    for src in facts.apt_sources or ():
        vendor = vendor_of(src.uri)
        if vendor and src.enabled:
            sources[vendor].append(src.file or src.uri)
    for vendor, label, packages, trees, other in (
        (
            "nvidia",
            "CUDA/NVIDIA",
            {**inv.nvidia_driver_packages(facts), **inv.cuda_toolkit_packages(facts)},
            [t.path or f"CUDA {t.version}" for t in facts.toolkits.cuda],
            "rocm",
        ),
        (
            "amd",
            "ROCm/amdgpu",
            {**inv.amd_driver_packages(facts), **inv.rocm_packages(facts)},
            [t.path or f"ROCm {t.version}" for t in facts.toolkits.rocm],
            "cuda",
        ),
    ):
        found = list(packages) + trees + sources[vendor]
        if vendors[vendor] or not found:
            continue
        fix = []
        if packages:
            names = " ".join(packages)
            fix.append(f"sudo apt-get -s purge {names}  # simulate: check nothing else goes with them")
            fix.append(f"sudo apt-get purge {names}")
        files = [f for f in sources[vendor] if f.startswith("/")]
        if files:
            fix.append(f"sudo rm {' '.join(files)} && sudo apt-get update")
        loose = [t for t in trees if t.startswith("/") and not packages]  # no package owns them
        for tree in loose if vendor == "nvidia" else ():
            fix.append(f"sudo {tree}/bin/cuda-uninstaller  # a runfile install")
        if loose and vendor == "amd":
            fix.append(f"sudo rm -r {' '.join(loose)}")
        if vendors["amd" if vendor == "nvidia" else "nvidia"]:
            fix.append(f"or let gpuenv do it: gpuenv install {other} --dry-run  # shows the purge")
        yield Finding(
            severity=Severity.WARNING,
            title=f"{label} leftovers on a machine without {'an NVIDIA' if vendor == 'nvidia' else 'an AMD'} GPU",
            detail=f"found: {', '.join(found[:10])}{' …' if len(found) > 10 else ''}.",
            fix="\n".join(fix) or "Remove the listed files.",
        )
