"""PyTorch in the probed Python: build flavour, vendor, driver, compiled architectures, library paths.

With ``--torch VERSION`` the arch and driver checks judge that release's official wheels instead:
"would any torch 2.6 wheel run on this GPU?"
"""

from __future__ import annotations

import re

from gpuenv import torchpick
from gpuenv.facts import Facts, Gpu
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.checks.amd import rocm_gpus
from gpuenv.resolve.checks.nvidia import toolkit_for
from gpuenv.resolve.checks.rocm import amdgpu_release, same_line
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

COMPAT_REF = "https://docs.nvidia.com/deploy/cuda-compatibility/"
GET_STARTED = "https://pytorch.org/get-started/locally/"


def _torch(facts: Facts):
    return facts.python.torch if facts.python else None


def build_of(torch) -> str:
    """'cuda', 'rocm' or 'cpu' for an installed torch."""
    if torch.hip:
        return "rocm"
    if torch.cuda:
        return "cuda"
    return "cpu"


def cuda_arch_ok(cc: str, archs: tuple[str, ...] | list[str]) -> bool:
    """Does code compiled for ``archs`` (sm_XY cubins, compute_XY PTX) run on compute capability
    ``cc``? The rule is torchpick's (``gpuenv torch`` and the doctor must never disagree)."""
    return torchpick.covers(archs, inv.sm(cc)) is not None


def gpu_fits(gpu: Gpu, matrices, archs) -> bool | None:
    """None when the GPU's architecture is unknown."""
    if gpu.vendor == "nvidia":
        cc = inv.compute_capability(gpu, matrices)
        return None if cc is None else cuda_arch_ok(cc, archs)
    gfx = inv.gfx_target(gpu, matrices)
    return None if gfx is None else gfx in archs


def installed_archs(facts: Facts, matrices) -> tuple[str, ...] | None:
    """The architectures the installed wheel was built for: as torch reported them, else the
    bundled arch list of its official variant ('2.7.0+cu128' -> cu128's list)."""
    torch = _torch(facts)
    if torch.arch_list:
        return tuple(torch.arch_list)
    version, _, local = torch.version.partition("+")
    if matrices is None or not local:
        return None
    for v in matrices.torch_variants(version):
        if v.variant == local:
            return tuple(v.archs) + tuple(v.ptx or ())
    return None


def _rocm_capable(facts: Facts, matrices) -> list[Gpu]:
    """AMD GPUs a ROCm PyTorch build could use (inventory.amd_compute): an APU no wheel supports is
    no reason to call a CUDA or CPU build of torch wrong."""
    if inv.amd_discrete(facts, matrices):
        return list(inv.amd_discrete(facts, matrices))
    return list(inv.amd_compute(facts, matrices))


def _usable(facts: Facts, matrices) -> list[Gpu]:
    out = [g for g in facts.gpus_of("nvidia") if g.kernel_driver == "nvidia"]
    out += [g for g in _rocm_capable(facts, matrices) if g.kernel_driver == "amdgpu"]
    return out


@check(code="torch.cpu-build", area="torch", needs=("python.torch",))
def cpu_build(facts: Facts, matrices, target: Target):
    torch = _torch(facts)
    gpus = _usable(facts, matrices)
    if build_of(torch) != "cpu" or not gpus:
        return
    yield Finding(
        code="torch.cpu-build",
        severity=Severity.WARNING,
        title=f"PyTorch {torch.version} is a CPU-only build on a machine with a usable GPU",
        detail=f"{facts.python.executable or 'python'}: torch {torch.version} (no CUDA, no HIP); GPUs: "
        f"{inv.describe(gpus, matrices)}.",
        fix="gpuenv torch  # prints the pip install command with the right --index-url",
        gpus=inv.slots(gpus),
        refs=(GET_STARTED,),
    )


@check(code="torch.wrong-vendor", area="torch", needs=("python.torch",))
def wrong_vendor(facts: Facts, matrices, target: Target):
    torch = _torch(facts)
    build = build_of(torch)
    nvidia, amd = facts.gpus_of("nvidia"), _rocm_capable(facts, matrices)
    if build == "cuda" and amd and not nvidia:
        have, other = "CUDA", "AMD"
    elif build == "rocm" and nvidia and not amd:
        have, other = "ROCm", "NVIDIA"
    else:
        return
    gpus = amd if other == "AMD" else nvidia
    yield Finding(
        code="torch.wrong-vendor",
        severity=Severity.ERROR,
        title=f"PyTorch is a {have} build on an {other}-only machine",
        detail=f"torch {torch.version} ({'CUDA ' + torch.cuda if torch.cuda else 'HIP ' + (torch.hip or '?')}); "
        f"GPUs: {inv.describe(gpus, matrices)}. torch.cuda.is_available() is False here.",
        fix="gpuenv torch  # the matching build and its pip install command",
        gpus=inv.slots(gpus),
        refs=(GET_STARTED,),
    )


def _nvidia_archs(facts: Facts, matrices) -> list[torchpick.GpuArch]:
    """The NVIDIA GPUs as `gpuenv torch` sees them, those of unknown capability left out."""
    return [g for g in torchpick.gpu_archs(facts, matrices, "nvidia") if g.arch]


@check(code="torch.driver-too-old", area="torch", needs=("matrices",))
def driver_too_old(facts: Facts, matrices, target: Target):
    driver = inv.nvidia_driver_version(facts)
    gpus = facts.gpus_of("nvidia")
    if not driver or not gpus:
        return
    torch = _torch(facts)
    if torch is not None and torch.cuda and not target.torch:
        archs = installed_archs(facts, matrices) or ()
        via_ptx = [
            g.arch for g in _nvidia_archs(facts, matrices) if (torchpick.covers(archs, g.arch) or "").startswith("compute_")
        ]
        mode, why = torchpick.driver_fit(matrices, driver, inv.series(torch.cuda) or torch.cuda, via_ptx)
        if mode is None and toolkit_for(matrices, torch.cuda) is not None:
            yield Finding(
                code="torch.driver-too-old",
                severity=Severity.ERROR,
                title=f"NVIDIA driver {driver} is too old for PyTorch {torch.version} (CUDA {torch.cuda})",
                detail=f"torch {torch.version} was built with CUDA {torch.cuda}: {why}.",
                fix="Upgrade the driver (gpuenv install cuda --dry-run), or install a wheel built for an older CUDA: "
                f"gpuenv torch --version {torch.version.split('+')[0]}",
                gpus=inv.slots(gpus),
                refs=(COMPAT_REF,),
            )
        return
    if not target.torch:
        return
    archs = _nvidia_archs(facts, matrices)
    variants = [v for v in matrices.torch_variants(target.torch) if v.stack == "cuda"]
    fitting = [v for v in variants if torchpick.fit(v, archs, None, None, matrices)[0]]
    if not fitting:
        return  # torch.arch-missing says so
    verdicts = [(v, torchpick.fit(v, archs, driver, None, matrices)) for v in fitting]
    if any(ok for _, (ok, _, _) in verdicts):
        return
    yield Finding(
        code="torch.driver-too-old",
        severity=Severity.ERROR,
        title=f"NVIDIA driver {driver} is too old for every PyTorch {target.torch} CUDA wheel this GPU can use",
        detail="; ".join(f"{v.variant}: {why}" for v, (_, why, _) in verdicts) + ".",
        fix="Upgrade the driver: gpuenv install cuda --dry-run",
        gpus=inv.slots(gpus),
        refs=(COMPAT_REF,),
    )


@check(code="torch.arch-missing", area="torch")
def arch_missing(facts: Facts, matrices, target: Target):
    if target.torch and matrices is not None:
        yield from _arch_missing_target(facts, matrices, target.torch)
        return
    torch = _torch(facts)
    if torch is None:
        return
    build = build_of(torch)
    if build == "cpu":
        return
    archs = installed_archs(facts, matrices)
    if not archs:
        return
    gpus = facts.gpus_of("nvidia") if build == "cuda" else rocm_gpus(facts, matrices)
    missing = [g for g in gpus if gpu_fits(g, matrices, archs) is False]
    if not missing:
        return
    need = ", ".join(
        sorted(
            {
                inv.sm(inv.compute_capability(g, matrices))
                if g.vendor == "nvidia"
                else inv.gfx_target(g, matrices)
                for g in missing
            }
        )
    )
    yield Finding(
        code="torch.arch-missing",
        severity=Severity.ERROR,
        title=f"PyTorch {torch.version} has no kernels for {need}",
        detail=f"GPUs: {inv.describe(missing, matrices)} need {need}; the wheel was built for {', '.join(archs)}. "
        "Kernels fail with 'no kernel image is available' / 'invalid device function'.",
        fix="gpuenv torch  # the newest official wheel that contains this architecture",
        gpus=inv.slots(missing),
        refs=(GET_STARTED,),
    )


def _arch_missing_target(facts: Facts, matrices, version: str):
    for stack, vendor in (("cuda", "nvidia"), ("rocm", "amd")):
        gpus = list(facts.gpus_of("nvidia")) if vendor == "nvidia" else list(rocm_gpus(facts, matrices))
        if not gpus:
            continue
        archs = [g for g in torchpick.gpu_archs(facts, matrices, vendor) if g.arch]
        if vendor == "amd" and any(not g.integrated for g in archs):
            archs = [g for g in archs if not g.integrated]  # as `gpuenv torch` does: the iGPU is set aside
        variants = [v for v in matrices.torch_variants(version) if v.stack == stack]
        if not variants or not archs:
            continue
        if any(torchpick.fit(v, archs, None, None, matrices)[0] for v in variants):
            continue
        yield Finding(
            code="torch.arch-missing",
            severity=Severity.ERROR,
            title=f"No official PyTorch {version} wheel has kernels for {', '.join(sorted({g.arch for g in archs}))}",
            detail=f"GPUs: {inv.describe(gpus, matrices)}; {version} wheels: "
            + "; ".join(f"{v.variant}: {', '.join(v.archs + tuple(v.ptx or ()))}" for v in variants),
            fix="gpuenv torch  # the newest release that fits",
            gpus=inv.slots(gpus),
            refs=(GET_STARTED,),
        )


@check(code="torch.rocm-mismatch", area="torch", needs=("python.torch",))
def rocm_mismatch(facts: Facts, matrices, target: Target):
    """The wheel bundles its own ROCm user space; what it needs from the machine is an amdgpu
    kernel driver that user space supports. With the driver release known (amdgpu-dkms), the
    matrix's list of drivers the wheel's ROCm release supports decides; otherwise the machine's
    ROCm release stands in for its driver (same major, not older than the wheel's)."""
    torch = _torch(facts)
    if not torch.hip:
        return
    wheel = inv.version_tuple(torch.hip)[:2]
    wheel_series = ".".join(map(str, wheel))
    driver = amdgpu_release(facts)
    release = matrices.rocm_release(wheel_series) if matrices is not None and len(wheel) == 2 else None
    if driver and release is not None:
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
            code="torch.rocm-mismatch",
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
        code="torch.rocm-mismatch",
        severity=Severity.WARNING,
        title=f"PyTorch's ROCm {wheel_series} and the machine's ROCm {rocm} are too far apart",
        detail=f"torch {torch.version} (HIP {torch.hip}); installed ROCm {rocm}. The wheel's bundled runtime needs a "
        "driver from its own ROCm generation.",
        fix="gpuenv torch  # a wheel built for this ROCm, or upgrade ROCm: gpuenv install rocm --dry-run",
        refs=(GET_STARTED,),
    )


_CUDA_LIB = re.compile(r"^/usr/local/cuda(?:-(\d+\.\d+))?/(lib64|lib|targets/[^/]+/lib)$")
_ROCM_LIB = re.compile(r"^/opt/rocm(?:-(\d+\.\d+)(?:\.\d+)?)?/(lib64|lib)$")


@check(code="torch.ld-library-path", area="torch", needs=("python.torch",))
def ld_library_path(facts: Facts, matrices, target: Target):
    torch = _torch(facts)
    entries = inv.path_entries(facts, "LD_LIBRARY_PATH") or []
    build = build_of(torch)
    if build == "cpu" or not entries:
        return
    want = inv.series(torch.cuda if build == "cuda" else torch.hip)
    pattern = _CUDA_LIB if build == "cuda" else _ROCM_LIB
    installed = [t.version for t in (facts.toolkits.cuda if build == "cuda" else facts.toolkits.rocm)]
    clashes = []
    for path in entries:
        m = pattern.match(path)
        if not m:
            continue
        have = m.group(1) or (inv.series(installed[0]) if len(installed) == 1 else None)
        if have and want and have != want:
            clashes.append(f"{path} ({'CUDA' if build == 'cuda' else 'ROCm'} {have})")
    if not clashes:
        return
    yield Finding(
        code="torch.ld-library-path",
        severity=Severity.ERROR,
        title="LD_LIBRARY_PATH puts system GPU libraries ahead of the ones PyTorch bundles",
        detail=f"LD_LIBRARY_PATH: {', '.join(clashes)}; torch {torch.version} was built with "
        f"{'CUDA' if build == 'cuda' else 'ROCm'} {want}. The loader takes the system copies first: symbol errors "
        "or silent fallbacks.",
        fix="Remove those directories from LD_LIBRARY_PATH (shell profile, /etc/environment, the job script); "
        "torch finds its own libraries without it.",
    )


@check(code="torch.not-installed", area="torch", needs=("python",))
def not_installed(facts: Facts, matrices, target: Target):
    if facts.python.torch is not None or "torch" in facts.python.packages:
        return
    gpus = [g for g in facts.gpus if g.vendor in ("nvidia", "amd")]
    if not gpus:
        return
    yield Finding(
        code="torch.not-installed",
        severity=Severity.INFO,
        title="PyTorch is not installed in the probed Python",
        detail=f"{facts.python.executable or 'python'} ({facts.python.version or '?'}) has no torch.",
        fix="gpuenv torch  # prints the build this machine needs and its pip install command",
    )
