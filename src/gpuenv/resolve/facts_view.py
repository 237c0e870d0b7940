"""What several checks read the same way from the facts: the helpers check modules share, so that
each check module depends only on the layers below it (resolve/inventory.py, the matrices), never on
another check module. Pure functions of the facts (and the bundled matrices), no I/O.
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.resolve import gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Target
from gpuenv.vendorrepos import vendor_of

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import Gpu
    from gpuenv.matrices import Matrices, RocmRelease

# -- NVIDIA driver (nvidia.driver-missing's and nvidia.driver-not-loaded's conditions) -----------


def _nvidia_driver_installed(facts: Facts) -> bool:
    """A driver package that brings the kernel module (libnvidia-compute alone is user space
    only, pulled in by other packages: it is no driver)."""
    return any(not n.startswith("libnvidia-compute") for n in inv.nvidia_driver_packages(facts))


def nvml_unloaded(facts: Facts) -> bool:
    """NVML's own "driver not loaded": its user-space library is installed and the nvidia module is
    not in the kernel, whatever installed it (a package, akmods, a runfile): an installed driver,
    even where the facts list no packages."""
    return facts.nvidia is not None and facts.nvidia.nvml == "driver_not_loaded"


def nvidia_driver_absent(facts: Facts) -> bool:
    """No NVIDIA driver at all (nvidia.driver-missing's condition)."""
    if facts.nvidia and facts.nvidia.driver_version or nvml_unloaded(facts):
        return False
    if facts.module_loaded("nvidia"):
        return False
    return facts.packages is not None and not _nvidia_driver_installed(facts)


def nvidia_driver_unloaded(facts: Facts) -> bool:
    """A driver installed and its module not loaded (nvidia.driver-not-loaded's condition): NVML
    says so, or driver packages are installed and nvidia is not in /proc/modules."""
    return nvml_unloaded(facts) or (_nvidia_driver_installed(facts) and facts.module_loaded("nvidia") is False)


# -- AMD GPUs under ROCm and the amdgpu driver -----------------------------------------------

# How a finding names each support level of rocm.json.
LEVELS = {
    "full": "supported",
    "radeon": "supported on Radeon terms",
    "preview": "technology preview",
    "deprecated": "deprecated: existing features maintained, no new ones",
}
_AMDGPU_REPO = r"repo\.radeon\.com/amdgpu/([0-9.]+)"


def rocm_gpus(facts: Facts, matrices: Matrices | None) -> tuple[Gpu, ...]:
    """The AMD GPUs ROCm would run on: the discrete ones, else integrated ones (APU-only boxes)."""
    return gpuinfo.amd_discrete(facts, matrices) or gpuinfo.amd_integrated(facts, matrices)


# Radeon (consumer and workstation) GPUs are supported on fewer distributions than Instinct
# (ROCm system requirements footnote: Ubuntu 24.04 / 22.04.5 and RHEL 9.6 only).
RADEON_OS = ("ubuntu", "rhel")


def radeon_terms_apply(release: RocmRelease) -> bool:
    """'Ubuntu and RHEL only' is the Radeon support terms of the legacy stream's ROCm 6.0 and
    later; the 5.x pages list each Radeon GPU's distributions in their own tables, and the new
    stream's OS entries carry their per-GPU limits (gpus_only), both judged by os.unsupported."""
    return release.stream is None and inv.version_tuple(release.version) >= (6,)


def off_radeon_terms(release: RocmRelease, gfx: str, os_id: str) -> bool:
    """The release supports ``gfx`` on Radeon terms only, and those leave this distribution out
    (an RX 7900 XTX on Debian 12 under ROCm 6.3.3); False when the distribution is not known."""
    return (
        release.support(gfx) == "radeon"
        and radeon_terms_apply(release)
        and os_id not in (*RADEON_OS, "", "unknown")
    )


def newest_supporting(matrices: Matrices, gfx: str) -> str:
    """'gfx906: the newest ROCm release that lists it is 6.3.3 (deprecated).' or the absence of one."""
    newest = matrices.newest_rocm_for(gfx)
    releases = matrices.rocm_releases()
    if newest is None:
        return f"{gfx}: no ROCm release the matrices know ({releases[0].version} to {releases[-1].version}) lists it."
    level = newest.support(gfx)
    shown = f" ({LEVELS[level]})" if level in LEVELS else ""
    return f"{gfx}: the newest ROCm release that lists it is {newest.version}{shown}."


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


# -- where an installed stack came from ---------------------------------------------------------

# NVIDIA Driver Installation Guide, Linux System Requirements (x86_64), current edition plus R610's
# additions: os-release ID -> major versions. CUDA toolkits carry no per-release distro list in the
# matrices, so this is the list os.unsupported uses for a CUDA target.
CUDA_DISTROS_SOURCE = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/introduction.html"
CUDA_DISTROS = {
    "ubuntu": ("22.04", "24.04", "26.04"),
    "debian": ("12", "13"),
    "rhel": ("8", "9", "10"),
    "rocky": ("8", "9", "10"),
    "almalinux": ("8", "9", "10"),
    "ol": ("8", "9"),
    "fedora": ("42", "44"),
    "sles": ("15", "16"),
    "opensuse-leap": ("15", "16"),
    "amzn": ("2023",),
    "azurelinux": ("3.0",),
}
VENDOR = "vendor"  # the vendor's own repository (repo.radeon.com, NVIDIA's CUDA repositories)
DISTRIBUTION = "distribution"  # the distribution's packages (Arch, Fedora, Debian, NixOS, ...)


def vendor_serves(facts: Facts, matrices: Matrices, stack: str) -> bool | None:
    """Whether the vendor's repository has packages for this distribution in any release (any
    bundled ROCm release lists it; NVIDIA's list names it); None when the OS is not named."""
    os_id = inv.os_id(facts)
    if os_id is None:
        return None
    if stack == "cuda":
        return os_id in CUDA_DISTROS
    return any(o.id == os_id for r in matrices.rocm_releases() for o in r.os)


def stack_origin(facts: Facts, matrices: Matrices, stack: str) -> str | None:
    """Where the installed ``stack`` (rocm: ROCm and amdgpu; cuda: CUDA and the NVIDIA driver)
    came from: VENDOR, DISTRIBUTION, or None when the facts do not tell. The vendor's when an
    enabled apt source of the vendor is there; the distribution's when the vendor has no packages
    for this distribution at all, or apt's sources were read and hold none of the vendor's while
    packages of the stack are installed."""
    vendor = "amd" if stack == "rocm" else "nvidia"
    recorded = {t.origin for t in (facts.toolkits.rocm if stack == "rocm" else facts.toolkits.cuda) if t.origin}
    if recorded:
        return VENDOR if VENDOR in recorded else recorded.pop()  # what the probe read (toolkits[].origin)
    sources = facts.apt_sources
    if any(src.enabled and vendor_of(src.uri) == vendor for src in sources or ()):
        return VENDOR
    if vendor_serves(facts, matrices, stack) is False:
        return DISTRIBUTION
    packaged = inv.has_rocm_stack(facts) if stack == "rocm" else bool(inv.nvidia_driver_packages(facts))
    if sources is not None and facts.packages is not None and packaged:
        return DISTRIBUTION
    return None


def newest_rocm_listing(facts: Facts, matrices: Matrices) -> RocmRelease | None:
    """The newest bundled ROCm release that lists this OS release (a derivative's base)."""
    os_id, version = inv.os_id(facts), inv.os_version(facts)
    if os_id is None or not version:
        return None
    listed = [r for r in matrices.rocm_releases() if r.os_support(os_id, version) is not None]
    return listed[-1] if listed else None


# -- libraries and toolkits a program gets -----------------------------------------------------

HOME_VARS = ("CUDA_HOME", "CUDA_PATH")
# Library (facts.libraries name) -> the pip distributions a CUDA torch wheel takes it from
# (cu12 wheels: nvidia-*-cu12; CUDA 13 wheels drop the suffix or use -cu13).
_WHEEL_LIBS = {
    "cudart": (
        "nvidia-cuda-runtime-cu12",
        "nvidia-cuda-runtime-cu13",
        "nvidia-cuda-runtime",
        "nvidia-cuda-runtime-cu11",
    ),
    "cublas": ("nvidia-cublas-cu12", "nvidia-cublas-cu13", "nvidia-cublas", "nvidia-cublas-cu11"),
    "cudnn": ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cudnn", "nvidia-cudnn-cu11"),
    "nccl": ("nvidia-nccl-cu12", "nvidia-nccl-cu13", "nvidia-nccl", "nvidia-nccl-cu11"),
}
_LIB_LABEL = {"cudart": "CUDA runtime", "cublas": "cuBLAS", "cudnn": "cuDNN", "nccl": "NCCL"}


def shadowed_wheel_libraries(facts: Facts) -> list[str]:
    """Libraries on LD_LIBRARY_PATH with the soname (same major) of one the torch wheel takes
    from its nvidia-* package, at another major.minor: the system copy is the one loaded."""
    packages = facts.python.packages if facts.python else {}
    out = []
    for lib in facts.libraries or ():
        if lib.source != "ld_library_path" or lib.name not in _WHEEL_LIBS or not lib.version:
            continue
        for dist in _WHEEL_LIBS[lib.name]:
            wheel = packages.get(dist)
            if not wheel:
                continue
            ours, theirs = inv.version_tuple(lib.version), inv.version_tuple(wheel)
            if ours[:1] == theirs[:1] and len(ours) >= 2 and ours[:2] != theirs[:2]:
                out.append(
                    f"{lib.path} ({_LIB_LABEL[lib.name]} {lib.version}) shadows the {_LIB_LABEL[lib.name]} {wheel} "
                    f"that torch takes from {dist}"
                )
            break
    return out


def wanted_toolkit(facts: Facts, target: Target, stack: str) -> tuple[str, str] | None:
    """(version, why) of the toolkit that should come first for ``stack``."""
    if target.stack == stack and target.version and target.explicit:
        return target.version, "the --target"
    env = facts.environment or {}
    if stack == "cuda":
        for var in HOME_VARS:
            tk = toolkitpaths.toolkit_of_path(facts, env.get(var) or "") if env.get(var) else None
            if tk and tk[0] == "cuda":
                return tk[1], f"{var}"
        torch = facts.python.torch if facts.python else None
        if torch is not None and torch.cuda:
            return torch.cuda, f"PyTorch {torch.version}'s CUDA"
        versions = inv.installed_cuda(facts)
        return (versions[0], "the newest installed toolkit") if versions else None
    for var in ("ROCM_PATH", "HIP_PATH"):
        tk = toolkitpaths.toolkit_of_path(facts, env.get(var) or "") if env.get(var) else None
        if tk and tk[0] == "rocm":
            return tk[1], var
    rocm = inv.installed_rocm(facts)
    return (rocm, "the ROCm /opt/rocm points at") if rocm else None
