"""Both stacks at once, and a stack left behind by a GPU that is gone."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.checks.apt import vendor_of
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check


def _cuda_items(facts: Facts) -> list[str]:
    pkgs = {**inv.nvidia_driver_packages(facts), **inv.cuda_toolkit_packages(facts)}
    return list(pkgs) + [f"{t.path or 'CUDA ' + t.version}" for t in facts.toolkits.cuda]


def _rocm_items(facts: Facts) -> list[str]:
    pkgs = {**inv.amd_driver_packages(facts), **inv.rocm_packages(facts)}
    return list(pkgs) + [f"{t.path or 'ROCm ' + t.version}" for t in facts.toolkits.rocm]


@check(code="stack.both-installed", area="stacks")
def both_installed(facts: Facts, matrices, target: Target):
    if not (inv.has_cuda_stack(facts) and inv.has_rocm_stack(facts)):
        return
    both_gpus = bool(facts.gpus_of("nvidia")) and bool(facts.gpus_of("amd"))
    if not both_gpus and not facts.platform.wsl:
        return  # one stack has no GPU here: stack.leftovers names it, with the purge
    yield Finding(
        code="stack.both-installed",
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
def leftovers(facts: Facts, matrices, target: Target):
    if facts.platform.wsl:
        return  # WSL lists no PCI GPUs: "the GPU is gone" cannot be judged there
    vendors = {"nvidia": bool(facts.gpus_of("nvidia")), "amd": bool(facts.gpus_of("amd"))}
    sources = {"nvidia": [], "amd": []}
    for src in facts.apt_sources or ():
        vendor = vendor_of(src.uri)
        if vendor and src.enabled:
            sources[vendor].append(src.file or src.uri)
    for vendor, label, items, purge in (
        (
            "nvidia",
            "CUDA/NVIDIA",
            _cuda_items(facts),
            "gpuenv install rocm --dry-run  # purges the CUDA stack",
        ),
        ("amd", "ROCm/amdgpu", _rocm_items(facts), "gpuenv install cuda --dry-run  # purges the ROCm stack"),
    ):
        found = items + sources[vendor]
        if vendors[vendor] or not found:
            continue
        yield Finding(
            code="stack.leftovers",
            severity=Severity.WARNING,
            title=f"{label} leftovers on a machine without {'an NVIDIA' if vendor == 'nvidia' else 'an AMD'} GPU",
            detail=f"found: {', '.join(found[:10])}{' …' if len(found) > 10 else ''}.",
            fix=purge
            if any(facts.gpus_of(v) for v in vendors if v != vendor)
            else "Remove them (list, simulate, purge): apt-get -s purge <packages>, then apt-get purge <packages>; "
            "delete the listed source files.",
        )
