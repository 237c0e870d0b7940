"""ROCm user space: its pairing with the amdgpu driver, and several releases side by side."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import gpuinfo
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.facts_view import amdgpu_release, newest_supporting, rocm_gpus, same_line
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import fitting_rocm, rocm_release

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices, RocmRelease


def _pairing(facts: Facts, matrices: Matrices) -> tuple[str, str, RocmRelease] | None:
    """The installed ROCm release, the installed amdgpu driver package's release and the bundled
    record of that ROCm release; None when any of them is not there to judge."""
    rocm = inv.installed_rocm(facts)
    driver = amdgpu_release(facts)
    if not rocm or not driver or not inv.amd_driver_packages(facts):
        return None
    release = matrices.rocm_release(rocm)
    return None if release is None else (rocm, driver, release)


def _seen(facts: Facts, rocm: str, driver: str) -> str:
    packages = ", ".join(f"{n} {v}" for n, v in inv.amd_driver_packages(facts).items())
    return f"ROCm user space {rocm}; amdgpu driver {driver} ({packages})."


@check(code="rocm.driver-mismatch", area="amd", needs=("matrices",))
def driver_mismatch(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    pairing = _pairing(facts, matrices)
    if pairing is None or not pairing[2].amdgpu_driver:
        return
    rocm, driver, release = pairing
    paired = release.amdgpu_driver
    compatible = tuple(getattr(release, "amdgpu_driver_compat", ()) or ()) or (paired,)
    if any(same_line(driver, c) for c in compatible):
        return
    yield Finding(
        severity=Severity.WARNING,
        title=f"amdgpu driver {driver} is not the one ROCm {rocm} pairs with ({paired})",
        detail=f"{_seen(facts, rocm, driver)} The matrix pairs ROCm {rocm} with amdgpu {', '.join(compatible)}."
        + release.unconfirmed("list of compatible amdgpu drivers"),
        fix=f"Point /etc/apt/sources.list.d/amdgpu.list at the paired driver release and upgrade: gpuenv install rocm@{rocm} --dry-run",
        refs=(release.source,),
    )


@check(code="rocm.driver-unjudged", area="amd", needs=("matrices",), not_judged=True)
def driver_unjudged(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    """A known release whose amdgpu pairing the matrices do not hold (a bundle from `matrix update`,
    or one whose driver list was not read) leaves an installed driver unjudged; silence there would
    read as "the pairing is fine"."""
    pairing = _pairing(facts, matrices)
    if pairing is None or pairing[2].amdgpu_driver or pairing[2].amdgpu_driver_compat:
        return
    rocm, driver, release = pairing
    yield Finding(
        severity=Severity.WARNING,
        title=f"amdgpu driver {driver} was not judged against ROCm {rocm}: the matrices do not know its pairing",
        detail=f"{_seen(facts, rocm, driver)} The bundled matrices hold no amdgpu driver list for ROCm {rocm}, so "
        "whether this driver pairs with it was not checked.",
        fix=f"Check the driver against AMD's compatibility page for ROCm {rocm}, or: gpuenv matrix update --from URL",
        refs=(release.source,),
    )


@check(code="rocm.multiple-versions", area="amd")
def multiple_versions(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    versions = {inv.version_tuple(t.version)[:3]: t for t in facts.toolkits.rocm}
    if len(versions) < 2:
        return
    tks = sorted(versions.values(), key=lambda t: inv.version_tuple(t.version))
    current = inv.installed_rocm(facts)
    yield Finding(
        severity=Severity.INFO,
        title=f"{len(tks)} ROCm releases are installed side by side",
        detail=", ".join(f"{t.version} at {t.path or '?'}" for t in tks)
        + f"; gpuenv judges {current} (the one /opt/rocm points at when known, else the newest).",
        fix="update-alternatives --display rocm  # shows where /opt/rocm points\n"
        "Remove the releases you do not use: sudo apt-get autoremove rocm-core<version>",
    )


@check(code="rocm.release-unknown", area="amd", needs=("matrices",), not_judged=True)
def release_unknown(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    if target.stack != "rocm" or rocm_release(matrices, target) is not None:
        return
    installed = target.extra.get("installed") or target.version
    releases = matrices.rocm_releases()
    oldest, newest = releases[0].version, releases[-1].version
    if not installed:
        why = "the installed ROCm release could not be read (no ROCm toolkit version, no rocm-core package version)"
        fix = "cat /opt/rocm/.info/version  # then judge it: gpuenv doctor --target rocm@VERSION"
    elif inv.older(installed, oldest):
        why = f"ROCm {installed} is older than the oldest release the matrices know ({oldest})"
        fix = (
            f"Move to a release the matrices know: gpuenv install rocm --dry-run plans ROCm {fitting_rocm(facts, matrices).version}, "
            "the newest that lists this machine's GPUs and OS."
        )
    elif inv.older(newest, installed):
        why = f"ROCm {installed} is newer than the newest release the matrices know ({newest})"
        fix = "gpuenv matrix update --from URL  # a bundle that knows this release"
    else:
        why = f"ROCm {installed} is not a release the matrices know ({oldest} to {newest})"
        fix = f"Judge it as the nearest known release: gpuenv doctor --target rocm@{inv.series(installed) or installed}"
    gpus = rocm_gpus(facts, matrices)
    gfx = sorted({t for g in gpus if (t := gpuinfo.gfx_target(g, matrices))})
    unjudged = [
        f"the OS ({facts.os.pretty_name or facts.os.id}) and kernel {facts.kernel.release} against its support list",
        f"GPU support ({', '.join(gfx)}) in it" if gfx else "GPU support in it",
        "the amdgpu driver it pairs with",
    ]
    yield Finding(
        severity=Severity.WARNING,
        title=f"ROCm {installed or '(version unknown)'} is not in the matrices: this stack was not judged",
        detail=f"{why}. Not judged: {'; '.join(unjudged)}."
        + (" " + " ".join(newest_supporting(matrices, t) for t in gfx) if gfx else ""),
        fix=fix,
        gpus=gpuinfo.slots(gpus),
    )


# AMD's install pages of the new stream open with "If you have ROCm 7.2.4 or older installed,
# please uninstall it before proceeding" (ROCm/rocm-docs docs/install/include/200-install.rst,
# the 7.14.0 revision and @ 0c31064a for 10.0), and the transition guide gives the two streams
# different trees and package names (rocm.docs.amd.com/en/docs-7.14.0/about/transition-guide-TheRock.html).
MIXED_STREAMS_REF = (
    "https://rocm.docs.amd.com/en/docs-7.14.0/install/rocm.html (\"If you have ROCm 7.2.4 or older "
    "installed, please uninstall it before proceeding\")"
)


def _legacy_installs(facts: Facts) -> list[str]:
    """The legacy stream's trees and packages: /opt/rocm-X.Y.Z toolkits, rocm-*/hip* packages."""
    trees = [f"ROCm {t.version} at {t.path or '?'}" for t in facts.toolkits.rocm if t.stream != "therock"]
    if trees:
        return trees
    pkgs = inv.rocm_packages(facts)
    return [f"{n} {v}" for n, v in sorted(pkgs.items())][:3]


def _therock_installs(facts: Facts) -> list[str]:
    """The new stream's installs: TheRock trees, amdrocm packages, rocm wheels."""
    found = []
    for t in facts.toolkits.rocm:
        if t.stream == "therock":
            where = t.path or ("pip wheels" if t.source == "pip" else "amdrocm packages")
            found.append(f"ROCm {t.version} ({where})")
    return found


@check(code="rocm.mixed-streams", area="amd")
def mixed_streams(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    """A legacy-stream ROCm (/opt/rocm-X.Y.Z, rocm-* packages) beside a TheRock one: both put
    libamdhip64 and friends on the machine, /opt/rocm's links belong to one of them, and AMD's
    install pages ask for the legacy one to be removed first."""
    legacy, therock = _legacy_installs(facts), _therock_installs(facts)
    if not legacy or not therock:
        return
    yield Finding(
        severity=Severity.WARNING,
        title="A legacy ROCm and a TheRock ROCm are installed side by side",
        detail=f"legacy stream: {', '.join(legacy)}; new stream (TheRock): {', '.join(therock)}. "
        "Their libraries (libamdhip64, rocBLAS, ...) differ in release, and /opt/rocm's links can lead to either; "
        "a program may load one stream's runtime with the other's libraries.",
        fix="Keep one stream. To keep the new one, remove the legacy packages: "
        "sudo apt-get purge rocm-core  # and the rocm-*/hip* packages that depend on it (apt lists them)",
        refs=(MIXED_STREAMS_REF,),
    )


# ROCm on WSL 2 is a separate path (AMD's Windows driver, a WSL runtime in the guest) with its own
# support matrix of Windows releases, Windows drivers, guest distributions and ROCm releases.
WSL_MATRIX_REF = "https://rocm.docs.amd.com/projects/radeon/en/latest/docs/compatibility/wsl/wsl_compatibility.html"
# The guest must be Ubuntu: AMD (schung-amd) on Oracle Linux 9.4 under WSL, "this configuration is
# unsupported", pointing at that matrix (ROCm/legacy-rocm-build#3561).
WSL_GUEST_REF = "https://github.com/ROCm/legacy-rocm-build/issues/3561"
# The matrix lists Windows 11 and not Windows 10 (AMD, schung-amd, ROCm/legacy-rocm-build#6323);
# Windows 11 builds start at 22000 (Microsoft's Windows 11 release information).
WSL_WINDOWS_REF = "https://github.com/ROCm/legacy-rocm-build/issues/6323"
WINDOWS_11_FIRST_BUILD = 22000


@check(code="rocm.wsl-release-unsupported", area="amd", not_judged=True)
def wsl_release_unsupported(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if not facts.platform.wsl:
        return
    rocm = inv.installed_rocm(facts)
    if not (rocm or inv.rocm_packages(facts) or target.stack == "rocm"):
        return
    stack = f"ROCm {rocm}" if rocm else f"ROCm{' ' + target.version if target.version else ''}"
    guest = inv.os_label(facts)
    # Judged as every check judges the OS: a derivative as its base (an Ubuntu-based guest is an
    # Ubuntu guest), and an unnamed one (ID=linux, unknown) not called the wrong distribution.
    if inv.os_id(facts) not in ("ubuntu", None):
        yield Finding(
            severity=Severity.ERROR,
            title=f"{stack} on WSL does not run on this guest ({guest})",
            detail=f"This WSL 2 guest is {guest}; AMD's ROCm-on-WSL path supports Ubuntu guests only (its WSL "
            "compatibility matrix), and AMD answered a ROCm-on-WSL failure on Oracle Linux with 'this configuration "
            "is unsupported'. rocminfo fails there (HSA_STATUS_ERROR_OUT_OF_RESOURCES).",
            fix="Install an Ubuntu release the WSL matrix lists (wsl --install -d Ubuntu-24.04 or Ubuntu-22.04) "
            "and install ROCm there with amdgpu-install --usecase=wsl,rocm --no-dkms.",
            refs=(WSL_MATRIX_REF, WSL_GUEST_REF),
        )
        return
    build = facts.platform.windows_build
    parts = inv.version_tuple(build)
    if len(parts) >= 3 and parts[2] < WINDOWS_11_FIRST_BUILD:
        yield Finding(
            severity=Severity.WARNING,
            title=f"{stack} on WSL: Windows build {build} is Windows 10, which AMD's WSL matrix does not list",
            detail=f"Windows {build} (a build below {WINDOWS_11_FIRST_BUILD} is Windows 10). AMD's WSL compatibility "
            "matrix lists Windows 11 only; whether ROCm runs here was not judged.",
            fix="Use Windows 11 with the Adrenalin driver the WSL matrix pairs with this ROCm release.",
            refs=(WSL_MATRIX_REF, WSL_WINDOWS_REF),
        )
        return
    yield Finding(
        severity=Severity.WARNING,
        title=f"{stack} on WSL: its Windows driver and release pairing was not judged",
        detail=f"Guest {guest or 'not known'}; Windows build {build or 'not known'}. ROCm on WSL supports only "
        "the Windows releases, Adrenalin drivers and ROCm releases AMD's WSL matrix pairs, and gpuenv carries no "
        "copy of that matrix, so this pairing was not judged.",
        fix="Compare the Adrenalin driver (Windows: AMD Software > System), the Windows build (cmd /c ver) and "
        f"{stack} with AMD's WSL compatibility matrix.",
        refs=(WSL_MATRIX_REF,),
    )
