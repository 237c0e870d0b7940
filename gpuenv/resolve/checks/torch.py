"""PyTorch in the probed Python: build flavour, vendor, driver, compiled architectures, library paths.

With ``--torch VERSION`` the arch and driver checks judge that release's official wheels instead:
"would any torch 2.6 wheel run on this GPU?"
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts, Gpu
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.checks.amd import rocm_gpus
from gpuenv.resolve.checks.nvidia import toolkit_for
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
    """Does a wheel compiled for ``archs`` run on compute capability ``cc``? A cubin runs on GPUs
    of the same major version and an equal or higher minor; PTX (compute_XY) JIT-compiles for any
    GPU of capability >= XY."""
    major, minor = (list(inv.version_tuple(cc)) + [0, 0])[:2]
    for arch in archs:
        m = re.fullmatch(r"(sm|compute)_(\d+?)(\d)[a-z]?", arch)
        if not m:
            continue
        a_major, a_minor = int(m.group(2)), int(m.group(3))
        if m.group(1) == "sm" and a_major == major and a_minor <= minor:
            return True
        if m.group(1) == "compute" and (a_major, a_minor) <= (major, minor):
            return True
    return False


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
            return tuple(v.archs) + tuple(getattr(v, "ptx", ()) or ())
    return None


def driver_floor(matrices, cuda: str) -> str | None:
    """Oldest driver a wheel built with CUDA ``cuda`` runs on (minor-version compatibility)."""
    tk = toolkit_for(matrices, cuda)
    if tk is None:
        return None
    return tk.minor_compat_driver or tk.min_driver


def _usable(facts: Facts, matrices) -> list[Gpu]:
    out = [g for g in facts.gpus_of("nvidia") if g.kernel_driver == "nvidia"]
    out += [g for g in rocm_gpus(facts, matrices) if g.kernel_driver == "amdgpu"]
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
    nvidia, amd = facts.gpus_of("nvidia"), rocm_gpus(facts, matrices)
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


@check(code="torch.driver-too-old", area="torch", needs=("matrices",))
def driver_too_old(facts: Facts, matrices, target: Target):
    driver = inv.nvidia_driver_version(facts)
    gpus = facts.gpus_of("nvidia")
    if not driver or not gpus:
        return
    torch = _torch(facts)
    if torch is not None and torch.cuda and not target.torch:
        floor = driver_floor(matrices, torch.cuda)
        if floor and inv.older(driver, floor):
            yield Finding(
                code="torch.driver-too-old",
                severity=Severity.ERROR,
                title=f"NVIDIA driver {driver} is too old for PyTorch {torch.version} (CUDA {torch.cuda})",
                detail=f"a CUDA {torch.cuda} wheel needs driver >= {floor} even with minor-version compatibility; "
                f"running {driver}.",
                fix=f"Upgrade the driver (gpuenv install cuda --dry-run), or install a wheel for an older CUDA: gpuenv torch --version {torch.version.split('+')[0]}",
                gpus=inv.slots(gpus),
                refs=(COMPAT_REF,),
            )
        return
    if not target.torch:
        return
    variants = [v for v in matrices.torch_variants(target.torch) if v.stack == "cuda"]
    fitting = [
        v
        for v in variants
        if all(gpu_fits(g, matrices, v.archs + tuple(v.ptx or ())) is not False for g in gpus)
    ]
    if not fitting:
        return  # torch.arch-missing says so
    ok = [v for v in fitting if not inv.older(driver, driver_floor(matrices, v.stack_version or "") or "0")]
    if ok:
        return
    floors = ", ".join(f"{v.variant} >= {driver_floor(matrices, v.stack_version or '')}" for v in fitting)
    yield Finding(
        code="torch.driver-too-old",
        severity=Severity.ERROR,
        title=f"NVIDIA driver {driver} is too old for every PyTorch {target.torch} CUDA wheel this GPU can use",
        detail=f"wheels that contain the GPU's architecture need: {floors}; running {driver}.",
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
    for stack, gpus in (("cuda", facts.gpus_of("nvidia")), ("rocm", rocm_gpus(facts, matrices))):
        if not gpus:
            continue
        variants = [v for v in matrices.torch_variants(version) if v.stack == stack]
        if not variants:
            continue
        fits = [
            v
            for v in variants
            if all(gpu_fits(g, matrices, v.archs + tuple(v.ptx or ())) is not False for g in gpus)
        ]
        if fits:
            continue
        yield Finding(
            code="torch.arch-missing",
            severity=Severity.ERROR,
            title=f"No official PyTorch {version} wheel has kernels for these GPUs",
            detail=f"GPUs: {inv.describe(gpus, matrices)}; {version} wheels: "
            + "; ".join(f"{v.variant}: {', '.join(v.archs)}" for v in variants),
            fix="gpuenv torch  # the newest release that fits",
            gpus=inv.slots(gpus),
            refs=(GET_STARTED,),
        )


@check(code="torch.rocm-mismatch", area="torch", needs=("python.torch",))
def rocm_mismatch(facts: Facts, matrices, target: Target):
    torch = _torch(facts)
    rocm = inv.installed_rocm(facts)
    if not torch.hip or not rocm:
        return
    wheel, system = inv.version_tuple(torch.hip)[:2], inv.version_tuple(rocm)[:2]
    if not wheel or not system or (wheel[0] == system[0] and wheel <= system):
        return
    yield Finding(
        code="torch.rocm-mismatch",
        severity=Severity.WARNING,
        title=f"PyTorch's ROCm {'.'.join(map(str, wheel))} and the machine's ROCm {rocm} are too far apart",
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
