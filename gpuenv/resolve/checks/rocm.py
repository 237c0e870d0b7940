"""ROCm user space: its pairing with the amdgpu driver, and several releases side by side."""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

_AMDGPU_REPO = re.compile(r"repo\.radeon\.com/amdgpu/([0-9.]+)")
_ROCM_REPO = re.compile(r"repo\.radeon\.com/rocm/apt/([0-9.]+)")


def amdgpu_release(facts: Facts) -> str | None:
    """The amdgpu driver release the machine's amdgpu repository (or package) names: '30.30.4'.
    amdgpu-dkms packages encode it in their version (6.x: '…60402-…' = ROCm 6.4.2's driver)."""
    for src in facts.apt_sources or ():
        m = _AMDGPU_REPO.search(src.uri)
        if m and src.enabled:
            return m.group(1)
    return None


def _same_line(driver: str, paired: str) -> bool:
    """'30.30.1' fits a '30.30.x' (or '30.30.4') pairing, '6.4.1' fits '6.4.x': same major.minor."""
    return inv.series(driver) == inv.series(paired.replace(".x", ".0")) or inv.version_tuple(
        driver
    ) == inv.version_tuple(paired)


@check(code="rocm.driver-mismatch", area="amd", needs=("matrices",))
def driver_mismatch(facts: Facts, matrices, target: Target):
    rocm = inv.installed_rocm(facts)
    driver = amdgpu_release(facts)
    if not rocm or not driver or not inv.amd_driver_packages(facts):
        return
    release = matrices.rocm_release(rocm)
    if release is None or not release.amdgpu_driver:
        return
    paired = release.amdgpu_driver
    compatible = tuple(getattr(release, "amdgpu_driver_compat", ()) or ()) or (paired,)
    fits = any(_same_line(driver, c) for c in compatible)
    if fits:
        return
    yield Finding(
        code="rocm.driver-mismatch",
        severity=Severity.WARNING,
        title=f"amdgpu driver {driver} is not the one ROCm {rocm} pairs with ({paired})",
        detail=f"ROCm user space {rocm}; amdgpu-dkms from repo.radeon.com/amdgpu/{driver} "
        f"({', '.join(f'{n} {v}' for n, v in inv.amd_driver_packages(facts).items())}). The matrix pairs ROCm {rocm} "
        f"with amdgpu {', '.join(compatible)}.",
        fix=f"Point /etc/apt/sources.list.d/amdgpu.list at the paired driver release and upgrade: gpuenv install rocm@{rocm} --dry-run",
        refs=(release.source,),
    )


@check(code="rocm.multiple-versions", area="amd")
def multiple_versions(facts: Facts, matrices, target: Target):
    versions = {inv.version_tuple(t.version)[:3]: t for t in facts.toolkits.rocm}
    if len(versions) < 2:
        return
    tks = sorted(versions.values(), key=lambda t: inv.version_tuple(t.version))
    current = inv.installed_rocm(facts)
    yield Finding(
        code="rocm.multiple-versions",
        severity=Severity.INFO,
        title=f"{len(tks)} ROCm releases are installed side by side",
        detail=", ".join(f"{t.version} at {t.path or '?'}" for t in tks)
        + f"; gpuenv judges {current} (the one /opt/rocm points at when known, else the newest).",
        fix="update-alternatives --display rocm  # shows where /opt/rocm points\n"
        "Remove the releases you do not use: sudo apt-get autoremove rocm-core<version>",
    )
