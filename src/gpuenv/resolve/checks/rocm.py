"""ROCm user space: its pairing with the amdgpu driver, and several releases side by side."""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

_AMDGPU_REPO = r"repo\.radeon\.com/amdgpu/([0-9.]+)"


def dkms_release(version: str | None) -> str | None:
    """The amdgpu driver release an amdgpu-dkms package version encodes in its fourth number:
    '1:6.12.12.60401-2164967.22.04' -> '6.4.1' (ROCm 6.x numbering), '1:6.16.6.30300400-…' ->
    '30.30.4' (the 30.x driver releases). None for anything else."""
    nums = inv.version_tuple(version)
    if len(nums) < 4:
        return None
    code = str(nums[3])
    if len(code) == 5:  # MNNPP: 60401 = 6.4.1
        return f"{int(code[0])}.{int(code[1:3])}.{int(code[3:5])}"
    if len(code) == 8:  # MMNNPPxx: 30300400 = 30.30.4
        return f"{int(code[0:2])}.{int(code[2:4])}.{int(code[4:6])}"
    return None


def amdgpu_release(facts: Facts) -> str | None:
    """The amdgpu driver release installed: the one the amdgpu-dkms package's version encodes,
    else the one the machine's amdgpu repository names ('30.30.4')."""
    for version in inv.amd_driver_packages(facts).values():
        found = dkms_release(version)
        if found:
            return found
    for src in facts.apt_sources or ():
        m = re.search(_AMDGPU_REPO, src.uri)
        if m and src.enabled:
            return m.group(1)
    return None


def same_line(driver: str, paired: str) -> bool:
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
    fits = any(same_line(driver, c) for c in compatible)
    if fits:
        return
    yield Finding(
        code="rocm.driver-mismatch",
        severity=Severity.WARNING,
        title=f"amdgpu driver {driver} is not the one ROCm {rocm} pairs with ({paired})",
        detail=f"ROCm user space {rocm}; amdgpu driver {driver} "
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
