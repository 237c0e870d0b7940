"""PyTorch in the probed Python: build flavour, vendor, driver, compiled architectures, library paths.

With ``--torch VERSION`` the arch and driver checks judge that release's official wheels instead:
"would any torch 2.6 wheel run on this GPU?"
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts, Gpu
from gpuenv.resolve import gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.facts_view import amdgpu_release, rocm_gpus, same_line, shadowed_wheel_libraries
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.facts import Torch
    from gpuenv.matrices import Matrices
    from gpuenv.resolve import wheelfit

# wheelfit, torcharch and pep440 are imported in the functions that use them, past their early
# returns: a machine with no torch and no NVIDIA driver (a fresh box) never loads them.
COMPAT_REF = "https://docs.nvidia.com/deploy/cuda-compatibility/"
GET_STARTED = "https://pytorch.org/get-started/locally/"


def _torch(facts: Facts) -> Torch | None:
    return facts.python.torch if facts.python else None


def build_of(torch: Torch) -> str | None:
    """'cuda', 'rocm', 'cpu', or None when the facts do not tell (inventory.torch_build)."""
    return inv.torch_build(torch)


def _rocm_capable(facts: Facts, matrices: Matrices | None) -> list[Gpu]:
    """AMD GPUs a ROCm PyTorch build could use (inventory.amd_compute): an APU no wheel supports is
    no reason to call a CUDA or CPU build of torch wrong."""
    if gpuinfo.amd_discrete(facts, matrices):
        return list(gpuinfo.amd_discrete(facts, matrices))
    return list(gpuinfo.amd_compute(facts, matrices))


def _gpu_machine(facts: Facts, matrices: Matrices | None) -> list[Gpu]:
    """The GPUs a GPU build of torch would use: every NVIDIA GPU and every ROCm-capable AMD one,
    driver or not (a CPU build is wrong either way: it never uses them)."""
    return list(facts.gpus_of("nvidia")) + _rocm_capable(facts, matrices)


@check(code="torch.cpu-build", area="torch", needs=("python.torch",))
def cpu_build(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    torch = _torch(facts)
    assert facts.python is not None and torch is not None  # run_checks skips the check while its needs are unknown
    gpus = _gpu_machine(facts, matrices)
    if build_of(torch) != "cpu" or not gpus:
        return
    yield Finding(
        severity=Severity.WARNING,
        title=f"PyTorch {torch.version or ''} is a CPU-only build on a machine with a GPU".replace("  ", " "),
        detail=f"{facts.python.executable or 'python'}: torch {torch.version or '?'} (no CUDA, no HIP); GPUs: "
        f"{gpuinfo.describe(gpus, matrices)}.",
        fix="gpuenv torch  # prints the pip install command with the right --index-url",
        gpus=gpuinfo.slots(gpus),
        refs=(GET_STARTED,),
    )


def _rocm_builds_exist(matrices: Matrices | None, release: str | None) -> bool | None:
    """Whether PyTorch ``release`` had official ROCm wheels: False before the first release the
    matrices hold a ROCm variant of (1.8.0, the first with ROCm binaries), None when not known."""
    from gpuenv.standins import pep440

    if matrices is None or release is None:
        return None
    if any(v.stack == "rocm" for v in matrices.torch_variants(release)):
        return True
    firsts = [ver for ver in matrices.torch_versions() if any(v.stack == "rocm" for v in matrices.torch_variants(ver))]
    if firsts and pep440.older(release, firsts[0]):  # 1.8 is 1.8.0
        return False
    return None if not matrices.torch_variants(release) else False


@check(code="torch.wrong-vendor", area="torch", needs=("python.torch",))
def wrong_vendor(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    torch = _torch(facts)
    assert torch is not None  # run_checks skips the check while its needs are unknown
    build = build_of(torch)
    nvidia, amd = facts.gpus_of("nvidia"), facts.gpus_of("amd")
    why = ""
    if build == "cuda" and amd and not nvidia:
        have, other = "CUDA", "AMD"
    elif build == "rocm" and nvidia and not _rocm_capable(facts, matrices):
        have, other = "ROCm", "NVIDIA"
    elif build is None and amd and not nvidia and _rocm_builds_exist(matrices, inv.torch_release(torch)) is False:
        # Which build it is the facts do not say, but that release had no ROCm build at all.
        have, other = "CUDA (or CPU)", "AMD"
        why = f" PyTorch {torch.version} had no official ROCm build, so this is not one."
    else:
        return
    gpus = amd if other == "AMD" else nvidia
    seen = f"CUDA {torch.cuda}" if torch.cuda else f"HIP {torch.hip}" if torch.hip else "build not named"
    # Integrated AMD GPUs that no ROCm wheel supports (a Ryzen laptop's): torch runs on the CPU
    # whichever build it is; worth knowing, not an error.
    usable = other == "NVIDIA" or bool(_rocm_capable(facts, matrices))
    yield Finding(
        severity=Severity.ERROR if usable else Severity.WARNING,
        title=f"PyTorch is a {have} build on an {other}-only machine",
        detail=f"torch {torch.version or '?'} ({seen}); GPUs: {gpuinfo.describe(gpus, matrices)}.{why} "
        "torch.cuda.is_available() is False here."
        + ("" if usable else " No official ROCm build of PyTorch supports these integrated GPUs either: torch runs on the CPU."),
        fix="gpuenv torch  # the matching build and its pip install command"
        if usable
        else "Nothing to fix for CPU work; for GPU work use a supported GPU (gpuenv torch says which build fits it).",
        gpus=gpuinfo.slots(gpus),
        refs=(GET_STARTED,),
    )


def _nvidia_archs(facts: Facts, matrices: Matrices) -> list[wheelfit.GpuArch]:
    """The NVIDIA GPUs as `gpuenv torch` sees them, those of unknown capability left out."""
    from gpuenv.resolve import wheelfit

    return [g for g in wheelfit.gpu_archs(facts, matrices, "nvidia") if g.arch]


@check(code="torch.driver-too-old", area="torch", needs=("matrices",))
def driver_too_old(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    driver = inv.nvidia_driver_version(facts)
    gpus = facts.gpus_of("nvidia")
    if not driver:
        yield from _cuda_version_only(facts, target)
        return
    if not gpus:
        return
    # Imported here, past the returns: a machine without an NVIDIA GPU and driver never needs them.
    from gpuenv.resolve import torcharch, wheelfit

    torch = _torch(facts)
    if torch is not None and torch.cuda and not target.torch:
        archs = torcharch.installed_archs(facts, matrices) or ()
        via_ptx = [
            g.arch for g in _nvidia_archs(facts, matrices) if g.arch and (wheelfit.covers(archs, g.arch) or "").startswith("compute_")
        ]
        mode, why = wheelfit.driver_fit(matrices, driver, inv.series(torch.cuda) or torch.cuda, via_ptx)
        if mode is None and toolkitpaths.toolkit_for(matrices, torch.cuda) is not None:
            yield Finding(
                severity=Severity.ERROR,
                title=f"NVIDIA driver {driver} is too old for PyTorch {torch.version or ''} (CUDA {torch.cuda})".replace(
                    "  ", " "
                ),
                detail=f"torch {torch.version or '?'} was built with CUDA {torch.cuda}: {why}.",
                fix="Upgrade the driver (gpuenv install cuda --dry-run), or install a wheel built for an older CUDA: "
                + (f"gpuenv torch --version {torch.version.split('+')[0]}" if torch.version else "gpuenv torch"),
                gpus=gpuinfo.slots(gpus),
                refs=(COMPAT_REF,),
            )
        return
    if torch is not None and not target.torch and build_of(torch) is None:
        yield from _variant_unknown(facts, matrices, torch, driver)
        return
    if not target.torch:
        return
    gpu_archs = _nvidia_archs(facts, matrices)
    variants = [v for v in matrices.torch_variants(target.torch) if v.stack == "cuda"]
    fitting = [v for v in variants if wheelfit.fit(v, gpu_archs, None, None, matrices)[0]]
    if not fitting:
        return  # torch.arch-missing says so
    verdicts = [(v, wheelfit.fit(v, gpu_archs, driver, None, matrices)) for v in fitting]
    if any(ok for _, (ok, _, _) in verdicts):
        return
    yield Finding(
        severity=Severity.ERROR,
        title=f"NVIDIA driver {driver} is too old for every PyTorch {target.torch} CUDA wheel this GPU can use",
        detail="; ".join(f"{v.variant}: {why}" for v, (_, why, _) in verdicts) + ".",
        fix="Upgrade the driver: gpuenv install cuda --dry-run",
        gpus=gpuinfo.slots(gpus),
        refs=(COMPAT_REF,),
    )


def _variant_unknown(facts: Facts, matrices: Matrices, torch: Torch, driver: str) -> Iterator[Finding]:
    """A torch release whose build the facts do not show (no local version tag, no
    torch.version.cuda: a report's pip list), on an NVIDIA driver that runs only some of that
    release's CUDA wheels: a warning naming which, since which one is installed decides (pip's
    default and download.pytorch.org's indexes differ)."""
    from gpuenv.resolve import wheelfit

    release = inv.torch_release(torch)
    gpus = facts.gpus_of("nvidia")
    if release is None:
        return
    gpu_archs = _nvidia_archs(facts, matrices)
    variants = [v for v in matrices.torch_variants(release) if v.stack == "cuda" and v.stack_version]
    fitting = [v for v in variants if wheelfit.fit(v, gpu_archs, None, None, matrices)[0]]
    verdicts = [(v, wheelfit.fit(v, gpu_archs, driver, None, matrices)) for v in fitting]
    failing = [(v, why) for v, (ok, why, _) in verdicts if not ok]
    if not failing:
        return
    running = [v.variant for v in fitting if all(v is not f for f, _ in failing)]
    yield Finding(
        severity=Severity.WARNING,
        title=f"NVIDIA driver {driver} may be too old for this PyTorch {release}: it depends on its CUDA build",
        detail=f"The facts do not show which CUDA build of torch {release} is installed. "
        + "; ".join(f"{v.variant}: {why}" for v, why in failing)
        + (f"; {', '.join(running)} runs on this driver." if running else "; none of its CUDA builds runs on this driver.")
        + " `python -c 'import torch; print(torch.version.cuda)'` names the build.",
        fix="If the build is one the driver cannot run: upgrade the driver (gpuenv install cuda --dry-run), or "
        + (f"install the {running[0]} wheel: gpuenv torch --version {release}" if running else f"gpuenv torch --version {release}"),
        gpus=gpuinfo.slots(gpus),
        refs=(COMPAT_REF,),
    )


def _cuda_version_only(facts: Facts, target: Target) -> Iterator[Finding]:
    """A driver known only by the CUDA version it supports (inside a container: nvidia-smi's "CUDA
    Version", NVML's cuda_driver_version) still judges the installed CUDA build of torch. From CUDA
    11 on, a driver of a major release runs every build of that major release (minor-version
    compatibility); a newer major release, or before 11 a newer minor, needs a newer driver."""
    supports = facts.nvidia.cuda_driver_version if facts.nvidia else None
    torch = _torch(facts)
    if not supports or target.torch or torch is None or not torch.cuda:
        return
    have, need = inv.version_tuple(supports)[:2], inv.version_tuple(torch.cuda)[:2]
    if len(have) < 2 or len(need) < 2 or have >= need or (have[0] == need[0] and need[0] >= 11):
        return
    yield Finding(
        severity=Severity.ERROR,
        title=f"The NVIDIA driver supports CUDA {supports}, too old for PyTorch {torch.version or ''} "
        f"(CUDA {torch.cuda})".replace("  ", " "),
        detail=f"The driver's own version is not in the facts (a container sees the host's driver only as the CUDA "
        f"version it supports); that is CUDA {supports}, and torch {torch.version or '?'} was built with CUDA "
        f"{torch.cuda}: "
        + ("a newer major release, which minor-version compatibility does not cover."
           if have[0] != need[0] else "before CUDA 11 a driver runs only the CUDA releases up to its own."),
        fix="Upgrade the driver on the host (the container uses the host's), or install a wheel built for CUDA "
        f"{have[0]}.x or older: " + (f"gpuenv torch --version {torch.version.split('+')[0]}" if torch.version else "gpuenv torch"),
        gpus=gpuinfo.slots(facts.gpus_of("nvidia")),
        refs=(COMPAT_REF,),
    )


# A build for the other vendor has none of this GPU's architectures: torch.wrong-vendor says why.
@check(code="torch.arch-missing", area="torch", follows=("torch.wrong_vendor",))
def arch_missing(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if target.torch and matrices is not None:
        yield from _arch_missing_target(facts, matrices, target.torch)
        return
    torch = _torch(facts)
    if torch is None:
        return
    build = build_of(torch)
    if build == "cpu":
        return
    if build == "cuda" or (build is None and facts.gpus_of("nvidia") and not facts.gpus_of("amd")):
        gpus = list(facts.gpus_of("nvidia"))
    elif build == "rocm" or (build is None and facts.gpus_of("amd") and not facts.gpus_of("nvidia")):
        if build is None and _rocm_builds_exist(matrices, inv.torch_release(torch)) is False:
            return  # that release had no ROCm build, so this is none: torch.wrong-vendor's to say
        gpus = list(rocm_gpus(facts, matrices))
    else:
        return
    if not gpus:
        return
    from gpuenv.resolve import torcharch  # past the returns: only a torch that could miss a GPU

    missing, how = torcharch.missing_from(facts, matrices, torch, gpus, build)
    if not missing:
        return
    need = ", ".join(
        sorted(
            {
                gpuinfo.sm(cc)
                if g.vendor == "nvidia" and (cc := gpuinfo.compute_capability(g, matrices))
                else (gpuinfo.gfx_target(g, matrices) or "?")
                for g in missing
            }
        )
    )
    # With the build unknown (no +cuXXX/+rocmX tag, torch.version.cuda/hip not read), the wheel
    # is only presumed official: a source build compiled for this GPU is as likely, so this is a
    # warning that says what it presumed, never an error from missing data.
    presumed = build is None
    yield Finding(
        severity=Severity.WARNING if presumed else Severity.ERROR,
        title=f"PyTorch {torch.version or '(installed)'} has no kernels for {need}"
        + (" if it is an official wheel" if presumed else ""),
        detail=f"GPUs: {gpuinfo.describe(missing, matrices)} need {need}; {how}. "
        + (
            "The build could not be read (no local version tag, torch.version.cuda/hip unknown): a build "
            "compiled from source for this GPU would have them. "
            if presumed
            else ""
        )
        + "Kernels fail with 'no kernel image is available' / 'invalid device function'.",
        fix="gpuenv torch  # the newest official wheel that contains this architecture",
        gpus=gpuinfo.slots(missing),
        refs=(GET_STARTED,),
    )


def _arch_missing_target(facts: Facts, matrices: Matrices, version: str) -> Iterator[Finding]:
    from gpuenv.resolve import wheelfit

    for stack, vendor in (("cuda", "nvidia"), ("rocm", "amd")):
        gpus = list(facts.gpus_of("nvidia")) if vendor == "nvidia" else list(rocm_gpus(facts, matrices))
        if not gpus:
            continue
        archs = [g for g in wheelfit.gpu_archs(facts, matrices, vendor) if g.arch]
        if vendor == "amd" and any(not g.integrated for g in archs):
            archs = [g for g in archs if not g.integrated]  # as `gpuenv torch` does: the iGPU is set aside
        variants = [v for v in matrices.torch_variants(version) if v.stack == stack]
        if not variants or not archs:
            continue
        if any(wheelfit.fit(v, archs, None, None, matrices)[0] for v in variants):
            continue
        yield Finding(
            severity=Severity.ERROR,
            title=f"No official PyTorch {version} wheel has kernels for {', '.join(sorted({g.arch for g in archs if g.arch}))}",
            detail=f"GPUs: {gpuinfo.describe(gpus, matrices)}; {version} wheels: "
            + "; ".join(f"{v.variant}: {', '.join(v.archs + tuple(v.ptx or ()))}" for v in variants),
            fix="gpuenv torch  # the newest release that fits",
            gpus=gpuinfo.slots(gpus),
            refs=(GET_STARTED,),
        )


@check(code="torch.rocm-mismatch", area="torch", needs=("python.torch",))
def rocm_mismatch(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    """The wheel bundles its own ROCm user space; what it needs from the machine is an amdgpu
    kernel driver that user space supports. With the driver release known (amdgpu-dkms), the
    matrix's list of drivers the wheel's ROCm release supports decides; otherwise the machine's
    ROCm release stands in for its driver (same major, not older than the wheel's)."""
    torch = _torch(facts)
    assert torch is not None  # run_checks skips the check while its needs are unknown
    if not torch.hip:
        return
    wheel = inv.version_tuple(torch.hip)[:2]
    wheel_series = ".".join(map(str, wheel))
    driver = amdgpu_release(facts)
    release = matrices.rocm_release(wheel_series) if matrices is not None and len(wheel) == 2 else None
    if driver and release is not None and matrices is not None:
        supported = release.amdgpu_driver_compat or ((release.amdgpu_driver,) if release.amdgpu_driver else ())
        if not supported or any(same_line(driver, c) for c in supported):
            return
        # A driver newer than the wheel's release: the window is read from the driver's side (the
        # release that ships this driver lists the older drivers its user space still supports;
        # PyTorch's wheels routinely lag a ROCm release or two behind the driver).
        own = release.amdgpu_driver
        for newer in matrices.rocm_releases():
            if newer.amdgpu_driver and same_line(driver, newer.amdgpu_driver) and own and any(
                same_line(own.replace(".x", ".0"), c) for c in newer.amdgpu_driver_compat
            ):
                return
        yield Finding(
            severity=Severity.WARNING,
            title=f"PyTorch's ROCm {wheel_series} does not support the machine's amdgpu driver {driver}",
            detail=f"torch {torch.version} (HIP {torch.hip}) bundles ROCm {wheel_series} user space, which AMD "
            f"supports on amdgpu {', '.join(supported)}; this machine's amdgpu-dkms is {driver}.",
            fix="gpuenv torch  # a wheel built for a ROCm release that supports this driver",
            refs=(release.source,),
        )
        return
    rocm = inv.installed_rocm(facts)
    system = inv.version_tuple(rocm)[:2]
    if not rocm or not wheel or not system or (wheel[0] == system[0] and wheel <= system):
        return
    yield Finding(
        severity=Severity.WARNING,
        title=f"PyTorch's ROCm {wheel_series} and the machine's ROCm {rocm} are too far apart",
        detail=f"torch {torch.version} (HIP {torch.hip}); installed ROCm {rocm}. The wheel's bundled runtime needs a "
        "driver from its own ROCm generation.",
        fix="gpuenv torch  # a wheel built for this ROCm, or upgrade ROCm: gpuenv install rocm --dry-run",
        refs=(GET_STARTED,),
    )


_CUDA_LIB = r"^/usr/local/cuda(?:-(\d+\.\d+))?/(lib64|lib|targets/[^/]+/lib)$"
_ROCM_LIB = r"^/opt/rocm(?:-(\d+\.\d+)(?:\.\d+)?)?/(lib64|lib)$"


@check(code="torch.ld-library-path", area="torch", needs=("python.torch",))
def ld_library_path(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    torch = _torch(facts)
    assert torch is not None  # run_checks skips the check while its needs are unknown
    entries = toolkitpaths.path_entries(facts, "LD_LIBRARY_PATH") or []
    build = build_of(torch)
    if build == "cpu" or not entries:
        return
    want = inv.series(torch.cuda if build == "cuda" else torch.hip)
    pattern = _CUDA_LIB if build == "cuda" else _ROCM_LIB
    installed = [t.version for t in (facts.toolkits.cuda if build == "cuda" else facts.toolkits.rocm)]
    clashes = []
    for path in entries:
        m = re.match(pattern, path)
        if not m:
            continue
        have = m.group(1) or (inv.series(installed[0]) if len(installed) == 1 else None)
        if have and want and have != want:
            clashes.append(f"{path} ({'CUDA' if build == 'cuda' else 'ROCm'} {have})")
    shadowed = shadowed_wheel_libraries(facts) if build == "cuda" else []
    if not clashes and not shadowed:
        return
    yield Finding(
        severity=Severity.ERROR,
        title="LD_LIBRARY_PATH puts system GPU libraries ahead of the ones PyTorch bundles",
        detail=f"LD_LIBRARY_PATH: {', '.join(clashes + shadowed)}; torch {torch.version} was built with "
        f"{'CUDA' if build == 'cuda' else 'ROCm'} {want}. The loader takes the system copies first: symbol errors "
        "(cuDNN: 'cuDNN version incompatibility') or silent fallbacks.",
        fix="Remove those directories from LD_LIBRARY_PATH (shell profile, /etc/environment, the job script); "
        "torch finds its own libraries without it.",
    )


@check(code="torch.not-installed", area="torch", needs=("python",))
def not_installed(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    assert facts.python is not None  # run_checks skips the check while its needs are unknown
    if facts.python.torch is not None or "torch" in facts.python.packages:
        return
    gpus = [g for g in facts.gpus if g.vendor in ("nvidia", "amd")]
    if not gpus:
        return
    yield Finding(
        severity=Severity.INFO,
        title="PyTorch is not installed in the probed Python",
        detail=f"{facts.python.executable or 'python'} ({facts.python.version or '?'}) has no torch.",
        fix="gpuenv torch  # prints the build this machine needs and its pip install command",
    )
