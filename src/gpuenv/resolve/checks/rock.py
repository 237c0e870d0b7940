"""ROCm's own kernel driver package before ROCm 4.5 (rock-dkms), and the Radeon Software /
AMDGPU-PRO amdgpu-dkms that cannot be installed beside it."""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

# Before ROCm 4.5 ROCm shipped its kernel driver as rock-dkms (firmware split out as
# rock-dkms-firmware in 3.5) under the meta package rocm-dkms; from 4.5 it ships amdgpu-dkms, the
# same package name the Radeon Software installer uses. Sources: ROCm 3.5 release notes ("v3.5
# release has two separate rock-dkms and rock-dkms-firmware packages"); ROCm 4.5 introduced
# amdgpu-install and its amdgpu-dkms is versioned 1:5.11.32.40502 for ROCm 4.5.2
# (ROCm/legacy-rocm-build#1658), and AMD's rocminstaller changelog "V1.4: ROCm 4.5 support: Add
# amdgpu-dkms" (srinivamd/rocminstaller rocmuninstall.sh).
ROCK_ERA_END = "4.5"
ROCK_PACKAGES = ("rock-dkms", "rock-dkms-firmware", "rocm-dkms")
# The Radeon Software / AMDGPU-PRO packages that own the same files as rock-dkms: dpkg refuses
# rock-dkms with "trying to overwrite '/usr/share/dkms/modules_to_force_install/amdgpu', which is
# also in package amdgpu-dkms 18.30-641594" (ROCm/legacy-rocm-build#551, #1044; ROCm/ROCm-docker#44,
# where AMD's fxkamd: "you already have amdgpu-dkms installed, which conflicts with rock-dkms"),
# and rock-dkms-firmware with the same about amdgpu-dkms-firmware (ROCm/legacy-rocm-build#1543).
FOREIGN_PACKAGES = ("amdgpu-dkms", "amdgpu-dkms-firmware")
# AMDGPU-PRO's own numbering, YY.NN[-build] with no epoch (18.30-641594, 19.50-967956): the
# Radeon Software release the package came from.
_PRO_VERSION = r"^(\d{2}\.\d{2})(?:\.\d+)?-\d+$"  # compiled at its first use: only amdgpu-dkms has it
QUICK_START = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/quick-start.html"
SOURCES = (
    "https://github.com/ROCm/legacy-rocm-build/issues/551",
    "https://github.com/ROCm/ROCm-docker/issues/44",
)


def radeon_software_release(version: str) -> str | None:
    """'18.30-641594' -> '18.30': the AMDGPU-PRO / Radeon Software release an amdgpu-dkms of that
    installer's numbering names; None for any other version (a ROCm amdgpu-dkms is
    '1:5.11.32.40502-…')."""
    m = re.match(_PRO_VERSION, version.strip())
    return m.group(1) if m else None


def _rock_era_reason(facts: Facts) -> str | None:
    """Why this machine wants ROCm's rock-dkms (a ROCm release before 4.5), or None."""
    packages = facts.packages
    installed = packages.installed if packages else {}
    unconfigured = set(packages.unconfigured or ()) if packages else set()
    rock = [n for n in ROCK_PACKAGES if n in installed or n in unconfigured]
    if rock:
        return f"{', '.join(rock)} {'is' if len(rock) == 1 else 'are'} installed"
    rocm = inv.installed_rocm(facts)
    if inv.older(rocm, ROCK_ERA_END):
        return f"ROCm {rocm} is installed, whose kernel driver package is rock-dkms"
    return None


def _rocm_wanted(facts: Facts, target: Target) -> str | None:
    """The ROCm (4.5 or later) this machine has or is judged for, in words, or None."""
    rocm = inv.installed_rocm(facts)
    if rocm:
        return f"ROCm {rocm} is installed"
    # A target inferred from the installed stack may rest on this very amdgpu-dkms: only an asked-for
    # (--target) or auto-chosen ROCm counts.
    if target.stack == "rocm" and target.extra.get("basis") != "installed":
        return f"The target is ROCm {target.version or ''}".rstrip()
    return None


@check(code="rocm.driver-conflict", area="amd", needs=("packages",))
def driver_conflict(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    installed = facts.packages.installed if facts.packages else {}
    foreign = {n: installed[n] for n in FOREIGN_PACKAGES if n in installed}
    if not foreign:
        return
    releases = sorted({r for v in foreign.values() if (r := radeon_software_release(v))})
    listed = ", ".join(f"{n} {v}" for n, v in foreign.items())
    rock_era = _rock_era_reason(facts)
    if rock_era is not None:
        origin = (
            f"Radeon Software / AMDGPU-PRO {', '.join(releases)}"
            if releases
            else "the Radeon Software / AMDGPU-PRO installer (ROCm before 4.5 never shipped amdgpu-dkms)"
        )
        yield Finding(
            severity=Severity.ERROR,
            title=f"{listed} ({origin}) blocks ROCm's own kernel driver package, rock-dkms",
            detail=f"{rock_era}. ROCm before 4.5 ships the amdgpu/amdkfd kernel driver as rock-dkms and "
            f"rock-dkms-firmware; {', '.join(foreign)} from {origin} owns the same files, so dpkg refuses "
            "rock-dkms ('trying to overwrite ... which is also in package amdgpu-dkms') and ROCm runs, if at "
            "all, on a driver it was not built for.",
            fix="Remove the Radeon Software driver, reboot, then install ROCm's:\n"
            "sudo amdgpu-pro-uninstall  # or: sudo apt-get purge " + " ".join(foreign) + "\n"
            "sudo reboot\n"
            "sudo apt-get install rock-dkms rock-dkms-firmware",
            refs=SOURCES,
        )
        return
    # From 4.5 ROCm's driver is an amdgpu-dkms too, and apt would replace this one; a driver of
    # AMDGPU-PRO's own numbering (no epoch; ROCm's are "1:<kernel>.<ROCm code>") comes from a
    # Radeon Software release of the rock-dkms years (18.30 and 19.50 in the threads above), not
    # the driver ROCm pairs with, and AMD's quick start removes an older amdgpu-dkms first.
    wanted = _rocm_wanted(facts, target)
    if not releases or wanted is None:
        return
    yield Finding(
        severity=Severity.WARNING,
        title=f"{listed} is Radeon Software / AMDGPU-PRO {', '.join(releases)}'s kernel driver, not ROCm's",
        detail=f"{wanted}. ROCm from 4.5 on ships its own amdgpu-dkms (versioned with the ROCm release, e.g. "
        f"1:5.11.32.40502 for 4.5.2); this one is from a Radeon Software release that predates it, so ROCm "
        "would run on a driver it was not paired with.",
        fix="Remove the old driver first, reboot, then install ROCm's (AMD's quick start does the same):\n"
        "sudo apt autoremove amdgpu-dkms\n"
        "sudo reboot\n"
        "gpuenv install rocm --dry-run",
        refs=(*SOURCES, QUICK_START),
    )
