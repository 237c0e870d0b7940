"""What a machine has of each GPU stack, derived from its facts (pure functions, no I/O).

The checks, the target choice and the planner all ask the same questions ("which NVIDIA driver
packages are installed?", "which ROCm release is this?", "which kernels can it boot?"); they are
answered here once so that a check and the plan that fixes it agree on what they see. What each
GPU is lives in ``gpuinfo``, where a toolkit path leads in ``toolkitpaths``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gpuenv.facts import Facts, Torch
from gpuenv.osreleases import UBUNTU_DERIVED, base_release, label
from gpuenv.resolve.memo import LastAsked
from gpuenv.standins import debversion
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing or collections.abc (start-up time)
if TYPE_CHECKING:
    from _typeshed import SupportsAllComparisons

    from gpuenv.facts import DkmsEntry

# -- versions ----------------------------------------------------------------------------------

_NUMS = re.compile(r"\d+(?:\.\d+)*")


@lru_cache(maxsize=8192)
def version_tuple(text: str | None) -> tuple[int, ...]:
    """'1:570.133.07-0ubuntu1' -> (570, 133, 7); '12.8' -> (12, 8); junk -> ().

    Debian epochs ("1:") are dropped; only the leading dotted number counts, so package revisions
    never make one driver look newer than another. For the numbers of a release (a driver, a
    toolkit, a kernel series); packages are ordered with ``gpuenv.standins.debversion`` (an epoch
    outranks the number)."""
    if not text:
        return ()
    text = text.split(":", 1)[1] if re.match(r"^\d+:", text) else text
    m = _NUMS.search(text)
    return tuple(int(p) for p in m.group(0).split(".")) if m else ()


def series(text: str | None, parts: int = 2) -> str | None:
    """'7.2.4' -> '7.2'; '6.8.0-51-generic' -> '6.8'."""
    nums = version_tuple(text)
    return ".".join(str(n) for n in nums[:parts]) if len(nums) >= parts else None


def older(a: str | None, b: str | None) -> bool:
    """a < b, both known (unknown versions never compare as older)."""
    ta, tb = version_tuple(a), version_tuple(b)
    return bool(ta) and bool(tb) and ta < tb


# -- packages ----------------------------------------------------------------------------------
# Names as Ubuntu, Debian, NVIDIA's CUDA repository and AMD's repositories ship them
# (AMD's ROCm and amdgpu install pages, NVIDIA's CUDA installation guide).


@record(frozen=True)
class Family:
    """The names of one kind of package: a pattern, and the prefixes every name it matches starts
    with (a C-level test first: the pattern is compiled only on a box with a candidate)."""

    pattern: str
    prefixes: tuple[str, ...]


# Debian/Ubuntu, NVIDIA's repositories, and the names other distributions give the same driver:
# Arch (nvidia, nvidia-dkms, nvidia-open-dkms, nvidia-580xx-dkms), Fedora/RPM Fusion
# (akmod-nvidia, kmod-nvidia, xorg-x11-drv-nvidia), openSUSE (nvidia-open-driver-G06-signed-kmp).
NVIDIA_DRIVER = Family(
    r"^(nvidia-driver(-\d+)?(-server)?(-open)?|nvidia-headless(-no-dkms)?-\d+(-server)?(-open)?"
    r"|nvidia-dkms-\d+(-server)?(-open)?|nvidia-kernel-(open-)?dkms|nvidia-open(-\d+)?"
    r"|nvidia-open-kernel-dkms|cuda-drivers(-\d+)?|nvidia-driver-cuda|libnvidia-compute-\d+(-server)?"
    r"|linux-modules-nvidia-.*"
    r"|nvidia(-\d+xx)?(-open)?(-dkms|-lts)?|akmod-nvidia|kmod-nvidia.*|xorg-x11-drv-nvidia(-\d+xx)?"
    r"|nvidia-open-driver-g\d+.*|nvidia-driver-g\d+.*)$",
    ("nvidia", "cuda-drivers", "libnvidia-compute-", "linux-modules-nvidia-", "akmod-nvidia", "kmod-nvidia",
     "xorg-x11-drv-nvidia"),
)  # fmt: skip
NVIDIA_DKMS = Family(
    r"^(nvidia-dkms-\d+(-server)?(-open)?|nvidia-kernel-(open-)?dkms|nvidia-open-kernel-dkms"
    r"|nvidia(-\d+xx)?(-open)?-dkms|akmod-nvidia)$",
    ("nvidia", "akmod-nvidia"),
)
CUDA_TOOLKIT = Family(
    r"^(cuda(-toolkit)?(-\d+-\d+)?|cuda-nvcc-\d+-\d+|cuda-runtime-\d+-\d+|nvidia-cuda-toolkit)$",
    ("cuda", "nvidia-cuda-toolkit"),
)
CUDA_COMPAT = Family(r"^cuda-compat-\d+-\d+$", ("cuda-compat-",))
AMD_DRIVER = Family(r"^amdgpu-dkms$", ("amdgpu-dkms",))
ROCM = Family(
    r"^(rocm(\d[\d.]*)?|rocm-core(\d[\d.]*)?|rocm-hip-runtime|rocm-dev|hip-runtime-amd|hipcc|rocminfo|libamdhip64-\d+)$",
    ("rocm", "hip", "libamdhip64-"),
)
DISPLAY = Family(
    r"^(xserver-xorg-core|xwayland|gdm3|sddm|lightdm|gnome-shell|plasma-desktop)$",
    ("xserver-xorg-core", "xwayland", "gdm3", "sddm", "lightdm", "gnome-shell", "plasma-desktop"),
)
# The kernels a machine can boot, group 1 the release (uname -r): Ubuntu's
# linux-image-6.8.0-51-generic and every flavour (-lowlatency, -aws, -azure, -gcp, -oracle,
# -nvidia, -generic-64k, ...), its linux-image-unsigned-*; Debian's linux-image-6.1.0-28-amd64,
# Debian 13's 6.12.41+deb13-amd64, backports' 6.12.12+bpo-amd64 and 6.1.0-0.deb11.17-amd64, the
# *-unsigned ones. Not meta packages (linux-image-amd64) nor debug symbols (-dbg, -dbgsym).
KERNEL_IMAGE = Family(
    r"^linux-image-(?:unsigned-)?(?!.*-dbg(?:sym)?$)(\d+\.\d+(?:\.\d+)?(?:[-+.~]\w+)*?)(?:-unsigned)?$",
    ("linux-image-",),
)
FAMILIES = (NVIDIA_DRIVER, NVIDIA_DKMS, CUDA_TOOLKIT, CUDA_COMPAT, AMD_DRIVER, ROCM, DISPLAY, KERNEL_IMAGE)


# Many checks ask the same package questions of one facts document: per packages object,
# {family pattern: its packages} and, under _RELATED, the GPU-related (name, version) pairs.
# Callers must not mutate the dicts returned.
_asked = LastAsked()
_RELATED = "gpu-related"
# One cheap pass keeps the families off the hundreds of other packages a full dpkg list holds.
_PREFIXES = tuple(dict.fromkeys(p for family in FAMILIES for p in family.prefixes))


def _matching(facts: Facts, family: Family) -> dict[str, str]:
    packages = facts.packages
    if packages is None:
        return {}
    memo = _asked.answers(packages)
    if _RELATED not in memo:
        memo[_RELATED] = sorted((n, v) for n, v in packages.installed.items() if n.startswith(_PREFIXES))
    found: dict[str, str] | None = memo.get(family.pattern)
    if found is None:
        candidates = [(n, v) for n, v in memo[_RELATED] if n.startswith(family.prefixes)]
        # Compiled on first use (re keeps it): a box without a candidate of a kind never pays for
        # that kind's pattern.
        found = {}
        if candidates:
            match = re.compile(family.pattern).match
            found = {n: v for n, v in candidates if match(n)}
        memo[family.pattern] = found
    return found


def nvidia_driver_packages(facts: Facts) -> dict[str, str]:
    return _matching(facts, NVIDIA_DRIVER)


def nvidia_dkms_packages(facts: Facts) -> dict[str, str]:
    return _matching(facts, NVIDIA_DKMS)


def cuda_toolkit_packages(facts: Facts) -> dict[str, str]:
    return _matching(facts, CUDA_TOOLKIT)


def cuda_compat_packages(facts: Facts) -> dict[str, str]:
    return _matching(facts, CUDA_COMPAT)


def amd_driver_packages(facts: Facts) -> dict[str, str]:
    return _matching(facts, AMD_DRIVER)


def rocm_packages(facts: Facts) -> dict[str, str]:
    return _matching(facts, ROCM)


def display_packages(facts: Facts) -> dict[str, str]:
    return _matching(facts, DISPLAY)


def kernel_driver_packages(facts: Facts) -> dict[str, str]:
    """Packages that bring a Linux kernel GPU driver (forbidden inside WSL, useless in containers)."""
    nvidia = {n: v for n, v in nvidia_driver_packages(facts).items() if not n.startswith("libnvidia-compute")}
    return nvidia | amd_driver_packages(facts)


def torch_build(torch: Torch) -> str | None:
    """'cuda', 'rocm' or 'cpu' for an installed torch, from what the facts say of it: its
    torch.version.cuda/hip, the build its version names (+cu128, +rocm6.3, +cpu), the
    architectures it lists; None when they do not tell (a bare "2.7.0" with cuda and hip left
    out). A build whose cuda and hip are both null (not left out) is a CPU build."""
    if torch.hip:
        return "rocm"
    if torch.cuda:
        return "cuda"
    local = (torch.version or "").partition("+")[2].lower()
    if local.startswith("cu"):
        return "cuda"
    if local.startswith("rocm"):
        return "rocm"
    if local == "cpu":
        return "cpu"
    archs = torch.arch_list or ()
    if any(a.startswith(("sm_", "compute_")) for a in archs):
        return "cuda"
    if any(a.startswith("gfx") for a in archs):
        return "rocm"
    if torch.cuda_unknown or torch.hip_unknown:
        return None
    return "cpu"


def torch_release(torch: Torch) -> str | None:
    """'2.7.0' of '2.7.0+cu128'; '2.10.0' of a '2.10.0.dev20250929+rocm7.0' nightly is None: a
    nightly is not the release its number names."""
    version = (torch.version or "").partition("+")[0]
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        return None
    return version


def has_cuda_stack(facts: Facts) -> bool:
    return bool(nvidia_driver_packages(facts) or cuda_toolkit_packages(facts) or facts.toolkits.cuda)


def has_rocm_stack(facts: Facts) -> bool:
    return bool(amd_driver_packages(facts) or rocm_packages(facts) or facts.toolkits.rocm)


# -- installed stack versions ------------------------------------------------------------------


def installed_rocm(facts: Facts) -> str | None:
    """The ROCm release in use: the toolkit /opt/rocm points at, else the newest found, else the
    rocm-core package's version."""
    tks = facts.toolkits.rocm
    for tk in tks:
        if tk.path in ("/opt/rocm", "/opt/rocm/"):
            return _release(tk.version)
    if tks:
        return _release(max(tks, key=lambda t: version_tuple(t.version)).version)
    core = (facts.packages.installed.get("rocm-core") if facts.packages else None) or None
    return _release(core) if core else None


def _release(text: str) -> str:
    # rocm-core is versioned "7.2.4.70204-..." and .info/version "7.2.4-70204": keep X.Y.Z.
    nums = version_tuple(text)[:3]
    return ".".join(str(n) for n in nums) if nums else text


def installed_cuda(facts: Facts) -> list[str]:
    """CUDA toolkit versions found, newest first."""
    versions = {tk.version for tk in facts.toolkits.cuda}
    return sorted(versions, key=version_tuple, reverse=True)


def nvidia_driver_version(facts: Facts) -> str | None:
    """The driver: NVML's or the library's version if known, else the loaded module's (a kernel
    log or /sys/module/nvidia/version), else the installed driver package's version."""
    nv = facts.nvidia
    if nv and nv.driver_version:
        return nv.driver_version
    if nv and nv.module_version:
        return nv.module_version
    return nvidia_package_version(facts)


def nvidia_branch(facts: Facts) -> int | None:
    """The driver branch (570 of 570.133.07) from the best source, including a package whose
    version names the branch alone."""
    version = nvidia_driver_version(facts)
    if not version:
        versions = [v for n, v in nvidia_driver_packages(facts).items() if not n.startswith("linux-modules-")]
        version = max(versions, key=debversion.key, default=None)
    nums = version_tuple(version)
    return nums[0] if nums else None


def nvidia_package_version(facts: Facts) -> str | None:
    """Upstream version of the installed user-space driver packages ('570.133.07'): of the
    newest package as dpkg orders them (an epoch outranks the number)."""
    versions = [v for n, v in nvidia_driver_packages(facts).items() if not n.startswith("linux-modules-")]
    best = max(versions, key=debversion.key, default=None)
    if not best or len(version_tuple(best)) < 2:
        return None
    # As NVIDIA writes it ("570.133.07", leading zeros kept): the dotted number after any epoch.
    text = best.split(":", 1)[1] if re.match(r"^\d+:", best) else best
    m = _NUMS.search(text)
    return m.group(0) if m else None


# -- machine -----------------------------------------------------------------------------------

_PRETTY_VERSION = r"\b(\d+(?:\.\d+){0,2})\b"


# os-release's default when a system sets no ID (os-release(5)): it names no distribution.
_UNNAMED = ("", "unknown", "linux")


# What the OS is, read once per facts document's os record (#43): the checks, the target choice
# and the planner ask its base and point release dozens of times a run.
_os_read = LastAsked()


def os_base(facts: Facts) -> tuple[str, str | None] | None:
    """(id, version) of the Ubuntu or Debian release a derivative is built on: the facts' os.base,
    else what os-release's codename and ID_LIKE say (a facts file written without os.base);
    None for Ubuntu and Debian themselves and anything not known to be a derivative."""
    memo = _os_read.answers(facts.os)
    if "base" not in memo:
        memo["base"] = base_release(facts.os)
    found: tuple[str, str | None] | None = memo["base"]
    return found


def os_id(facts: Facts) -> str | None:
    """The distribution the checks judge the OS as: a derivative's base (Linux Mint, Pop!_OS, KDE
    neon: ubuntu), else os-release's ID; None when the facts name none (unknown, or ID=linux)."""
    base = os_base(facts)
    if base is not None:
        return base[0]
    if facts.os.id in _UNNAMED:
        return None
    return "ubuntu" if facts.os.id in UBUNTU_DERIVED else facts.os.id


def os_label(facts: Facts) -> str:
    """How a finding names the OS: "Linux Mint 22 (Ubuntu 24.04 base)", "Ubuntu 24.04.2 LTS"."""
    return label(facts.os)


def repo_os(facts: Facts) -> tuple[str, str | None]:
    """(id, version) a repository is picked for: a derivative's base, as the checks judge it (Linux
    Mint 22: ubuntu 24.04, so `install` and `doctor --target` agree), else os-release's ID and
    VERSION_ID; never the version a PRETTY_NAME suggests, which a repository choice must not guess."""
    base = os_base(facts)
    return base if base is not None else (facts.os.id, facts.os.version_id)


def os_version(facts: Facts) -> str | None:
    """The distribution release the checks judge: a derivative's base release, else VERSION_ID,
    else the version PRETTY_NAME carries ("Debian GNU/Linux 13 (trixie)": 13), as reports often
    give only that line. The planner keeps to VERSION_ID and the base the probe read: it picks
    repositories, which a guess must not do."""
    base = os_base(facts)
    if base is not None:
        return base[1]
    if facts.os.id in UBUNTU_DERIVED:
        return None  # a derivative's own number is not its base's
    if facts.os.version_id:
        return facts.os.version_id
    m = re.search(_PRETTY_VERSION, facts.os.pretty_name or "")
    return m.group(1) if m else None


_DOTTED = r"\b\d+(?:\.\d+)+\b"


def os_point(facts: Facts, major: str) -> str | None:
    """The point release of OS release ``major`` ("9", "24.04") this machine runs: VERSION_ID where
    it names one ("9.4" on RHEL), else the one PRETTY_NAME carries ("Red Hat Enterprise Linux 9.4
    (Plow)", "Ubuntu 24.04.3 LTS"); None when neither does (VERSION_ID "9", or no os-release)."""
    memo = _os_read.answers(facts.os)
    if ("point", major) not in memo:
        dotted: list[str] = re.findall(_DOTTED, facts.os.pretty_name or "")
        memo["point", major] = next((t for t in (facts.os.version_id or "", *dotted) if t.startswith(major + ".")), None)
    found: str | None = memo["point", major]
    return found


_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "ppc64el": "ppc64le"}


def cpu_arch(facts: Facts) -> str | None:
    """uname -m of the machine, or None when the facts do not know it ('unknown', empty). The
    names dpkg and users write (amd64, arm64) mean the same machines."""
    arch = (facts.host.arch or "").strip().lower()
    if arch in ("", "unknown", "none", "null"):
        return None
    return _ARCH_ALIASES.get(arch, arch)


# -- kernel ------------------------------------------------------------------------------------

def installed_kernels(facts: Facts) -> list[str]:
    """Kernel releases with an installed linux-image package, oldest first."""
    found = {m.group(1) for n in _matching(facts, KERNEL_IMAGE) if (m := re.match(KERNEL_IMAGE.pattern, n))}
    return sorted(found, key=kernel_key)


def distribution_kernel(facts: Facts) -> bool | None:
    """Whether the running kernel came from a distribution package: a linux-image package of its
    release is installed. False: a self-built or vendor kernel (a cloud VM's, Firecracker's),
    whose headers no package carries. None: dpkg's whole list of packages is not known (not
    read, or a facts file that lists a few packages: dpkg's database always holds dpkg)."""
    packages = facts.packages
    if packages is None or packages.manager != "dpkg" or "dpkg" not in packages.installed:
        return None
    return facts.kernel.release in installed_kernels(facts)


def custom_kernel_words(release: str) -> str:
    """What a kernel that is not a distribution kernel means for a DKMS driver, in one sentence
    (the doctor's finding and the planner's note say the same)."""
    return (
        f"the running kernel {release} is not a distribution kernel (no linux-image-{release} package "
        "is installed), so no package carries its headers: DKMS can build a GPU driver for it only "
        f"against the kernel's own build tree at /lib/modules/{release}/build"
    )


def gpu_dkms_entries(facts: Facts, module_prefix: str) -> tuple[DkmsEntry, ...]:
    """DKMS entries of GPU driver modules ('amdgpu', 'nvidia' also matches 'nvidia-srv')."""
    return tuple(e for e in (facts.kernel.dkms or ()) if e.module.startswith(module_prefix))


def kernel_release(facts: Facts) -> str | None:
    """uname -r as the facts give it; None where the probe could not read it (its "unknown")."""
    release = facts.kernel.release
    return None if release in ("", "unknown") else release


@lru_cache(maxsize=1024)
def kernel_key(release: str) -> SupportsAllComparisons:
    """A sort key of kernel releases in the order GRUB boots them on Debian and Ubuntu (the
    newest by ``dpkg --compare-versions``): 6.8.0-51-generic < 6.8.0-100-generic,
    6.12.38+deb13-amd64 < 6.12.41+deb13-amd64, 6.1.0-0.deb11.17-amd64 < 6.1.0-0.deb11.21-amd64."""
    return debversion.key(release)


def gpu_dkms_modules(facts: Facts) -> dict[str, str]:
    """DKMS GPU driver modules this machine should have built: module prefix -> the package that
    brings it ('amdgpu' -> 'amdgpu-dkms', 'nvidia' -> 'nvidia-dkms-570-open')."""
    out: dict[str, str] = {}
    for name in amd_driver_packages(facts):
        out["amdgpu"] = name
    for name in nvidia_dkms_packages(facts):
        out["nvidia"] = name
    # A DKMS registration is evidence of its own where no package list names the driver (a
    # report without one, a failed install, another distribution): its source was added to DKMS.
    for entry in facts.kernel.dkms or ():
        module = "amdgpu" if entry.module.startswith("amdgpu") else "nvidia" if entry.module.startswith("nvidia") else None
        if module and module not in out:
            unconfigured = [p for p in (facts.packages.unconfigured if facts.packages else ()) if module in p]
            out[module] = unconfigured[0] if unconfigured else f"{module}-dkms"
    return out


def hosted(facts: Facts) -> bool:
    """Kernel and drivers belong to someone else (WSL's Windows host, a container's host)."""
    return facts.platform.wsl or bool(facts.platform.container)
