"""What a machine has of each GPU stack, derived from its facts (pure functions, no I/O).

The checks, the target choice and the planner all ask the same questions ("which NVIDIA driver
packages are installed?", "which ROCm release is this?", "what gfx target is that GPU?"); they are
answered here once so that a check and the plan that fixes it agree on what they see.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gpuenv.facts import Facts, Gpu, Torch
from gpuenv.standins import debversion
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing or collections.abc (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from _typeshed import SupportsAllComparisons

    from gpuenv.facts import DkmsEntry
    from gpuenv.matrices import CudaToolkit, Matrices

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


# Many checks ask the same package questions of one facts document; answers are kept for the
# packages object last asked about (facts are frozen, so the answers cannot go stale). Callers
# must not mutate the dicts returned.
_asked: list[Any] = [None, {}, ()]  # [packages, {pattern: answer}, GPU-related (name, version)]
# One cheap pass keeps the families off the hundreds of other packages a full dpkg list holds.
_PREFIXES = tuple(dict.fromkeys(p for family in FAMILIES for p in family.prefixes))


def _matching(facts: Facts, family: Family) -> dict[str, str]:
    packages = facts.packages
    if packages is None:
        return {}
    if _asked[0] is not packages:
        gpu_related = sorted((n, v) for n, v in packages.installed.items() if n.startswith(_PREFIXES))
        _asked[0], _asked[1], _asked[2] = packages, {}, gpu_related
    found: dict[str, str] | None = _asked[1].get(family.pattern)
    if found is None:
        candidates = [(n, v) for n, v in _asked[2] if n.startswith(family.prefixes)]
        # Compiled on first use (re keeps it): a box without a candidate of a kind never pays for
        # that kind's pattern.
        found = {}
        if candidates:
            match = re.compile(family.pattern).match
            found = {n: v for n, v in candidates if match(n)}
        _asked[1][family.pattern] = found
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


# -- GPUs --------------------------------------------------------------------------------------


def gfx_target(gpu: Gpu, matrices: Matrices | None) -> str | None:
    if gpu.gfx_target:
        return gpu.gfx_target
    known = matrices.amd_gpu(gpu.pci_id) if matrices is not None else None
    return known.gfx_target if known else None


def is_integrated(gpu: Gpu, matrices: Matrices | None) -> bool:
    if gpu.integrated is not None:
        return gpu.integrated
    known = matrices.amd_gpu(gpu.pci_id) if matrices is not None and gpu.vendor == "amd" else None
    return bool(known and known.integrated)


_PRETTY_VERSION = r"\b(\d+(?:\.\d+){0,2})\b"


def os_version(facts: Facts) -> str | None:
    """The distribution release the checks judge: VERSION_ID, else the version PRETTY_NAME
    carries ("Debian GNU/Linux 13 (trixie)": 13), as reports often give only that line. The
    planner keeps to VERSION_ID: it picks repositories, which a guess must not do."""
    if facts.os.version_id:
        return facts.os.version_id
    m = re.search(_PRETTY_VERSION, facts.os.pretty_name or "")
    return m.group(1) if m else None


def amd_discrete(facts: Facts, matrices: Matrices | None) -> tuple[Gpu, ...]:
    return tuple(g for g in facts.gpus_of("amd") if not is_integrated(g, matrices))


def amd_integrated(facts: Facts, matrices: Matrices | None) -> tuple[Gpu, ...]:
    return tuple(g for g in facts.gpus_of("amd") if is_integrated(g, matrices))


def amd_compute(facts: Facts, matrices: Matrices | None) -> tuple[Gpu, ...]:
    """AMD GPUs that GPU computing could use: the discrete ones, and integrated ones that the
    default ROCm release supports or a bundled ROCm PyTorch wheel is built for (Strix Halo). The
    Raphael iGPU of a Ryzen desktop is none of these: it makes no machine "two-vendor"."""
    discrete = amd_discrete(facts, matrices)
    integrated = amd_integrated(facts, matrices)
    if not integrated or matrices is None:
        return discrete
    if _compute_memo[0] is not matrices:
        known = set(matrices.default_rocm().gpus)
        for version in matrices.torch_versions():
            known.update(a for v in matrices.torch_variants(version) if v.stack == "rocm" for a in v.archs)
        _compute_memo[0], _compute_memo[1] = matrices, frozenset(known)
    return discrete + tuple(g for g in integrated if gfx_target(g, matrices) in _compute_memo[1])


_compute_memo: list[Any] = [None, frozenset()]  # [matrices, gfx targets]


def nvidia_architecture(gpu: Gpu, matrices: Matrices | None) -> str | None:
    if gpu.architecture:
        return gpu.architecture
    known = matrices.nvidia_gpu(gpu.pci_id) if matrices is not None else None
    return known.architecture if known else None


def compute_capability(gpu: Gpu, matrices: Matrices | None) -> str | None:
    if gpu.compute_capability:
        return gpu.compute_capability
    known = matrices.nvidia_gpu(gpu.pci_id) if matrices is not None else None
    return known.compute_capability if known else None


_LEGACY_CC_MAX = (7, 2)  # Maxwell, Pascal, Volta (and Xavier 7.2): proprietary modules only
_OPEN_ONLY_CC_MIN = (10, 0)  # Blackwell and newer: open modules only


def module_flavour(gpu: Gpu, matrices: Matrices | None) -> str:
    """The NVIDIA kernel-module flavour a GPU needs: 'open', 'proprietary' or 'either'. The
    architecture table decides; a GPU it does not know is judged by compute capability (the
    open modules support Turing and newer; Blackwell and newer have only them)."""
    arch_name = nvidia_architecture(gpu, matrices)
    arch = matrices.nvidia_arch(arch_name) if arch_name and matrices is not None else None
    if arch is not None:
        return arch.module
    cc = version_tuple(compute_capability(gpu, matrices))
    if not cc:
        return "either"
    if cc <= _LEGACY_CC_MAX:
        return "proprietary"
    if cc >= _OPEN_ONLY_CC_MIN:
        return "open"
    return "either"


def gpu_name(gpu: Gpu, matrices: Matrices | None) -> str:
    if gpu.name:
        return gpu.name
    known = None
    if matrices is not None:
        known = matrices.nvidia_gpu(gpu.pci_id) if gpu.vendor == "nvidia" else matrices.amd_gpu(gpu.pci_id)
    return known.name if known else f"{gpu.vendor.upper()} GPU {gpu.pci_id}"


def describe(gpus: Iterable[Gpu], matrices: Matrices | None) -> str:
    """'AMD Radeon RX 9070 XT (0000:03:00.0), ...' for a finding's detail."""
    return ", ".join(f"{gpu_name(g, matrices)} ({g.pci_slot or g.pci_id})" for g in gpus)


def slots(gpus: Iterable[Gpu]) -> tuple[str, ...]:
    return tuple(g.pci_slot or g.pci_id for g in gpus)


def sm(cc: str) -> str:
    """'12.0' -> 'sm_120'."""
    major, _, minor = cc.partition(".")
    return f"sm_{major}{minor or '0'}"


# -- machine -----------------------------------------------------------------------------------

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


def path_entries(facts: Facts, variable: str) -> list[str] | None:
    """Entries of a colon-separated variable ([] when unset), or None when the probe did not read
    the environment. (The probe keeps only PATH's toolkit entries: no PATH means none.)"""
    env = facts.environment
    if env is None:
        return None
    return [p.rstrip("/") for p in env.get(variable, "").split(":") if p]


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


_toolkits_memo: list[Any] = [None, {}]  # [matrices, {version: toolkit}]


def toolkit_for(matrices: Matrices, version: str) -> CudaToolkit | None:
    """The bundled CUDA toolkit entry for a version ('12.8.1', or a series '12.8' = its GA);
    remembered per matrices object (fleet runs ask the same few versions thousands of times)."""
    if _toolkits_memo[0] is not matrices:
        _toolkits_memo[0], _toolkits_memo[1] = matrices, {}
    memo: dict[str, CudaToolkit | None] = _toolkits_memo[1]
    if version not in memo:
        memo[version] = matrices.cuda_toolkit(version) or matrices.cuda_toolkit(series(version) or version)
    return memo[version]


# -- toolkit paths (loader libraries, PATH, CUDA_HOME) -------------------------------------------

_CUDA_TREE = r"^/usr/local/cuda(?:-(\d+(?:\.\d+)*))?(?:/|$)"
_ROCM_TREE = r"^/opt/rocm(?:-(\d+(?:\.\d+)*))?(?:/|$)"


def real_path(facts: Facts, path: str) -> str:
    """Where ``path`` leads as far as the facts know (``path_targets``: the longest recorded
    prefix, e.g. /usr/local/cuda -> /usr/local/cuda-12.8), else the path itself."""
    norm = path.rstrip("/") or "/"
    targets = facts.path_targets or {}
    probe = norm
    while probe and probe != "/":
        target = targets.get(probe)
        if target:
            return target + norm[len(probe):]
        parent = probe.rsplit("/", 1)[0]
        if parent == probe:
            break  # a relative entry ("bin", "." in PATH) has no parent to try
        probe = parent
    return norm


def path_exists(facts: Facts, path: str) -> bool | None:
    """False when the probe saw that ``path`` leads nowhere, True when it or a toolkit tree
    is there, None when the facts do not say."""
    norm = path.rstrip("/") or "/"
    targets = facts.path_targets
    if targets is not None and norm in targets:
        return targets[norm] is not None
    trees = [t.path for t in (*facts.toolkits.cuda, *facts.toolkits.rocm) if t.path]
    if real_path(facts, norm) in trees:
        return True
    return None


def toolkit_of_path(facts: Facts, path: str) -> tuple[str, str] | None:
    """('cuda', '12.8.1') or ('rocm', '7.2.0') for a path inside a toolkit tree (links followed as
    the facts recorded them); the installed toolkit's full version where the tree is one of them,
    else the version the directory name carries; None for other paths or unknown versions."""
    real = real_path(facts, path)
    for stack, pattern, tks in (("cuda", _CUDA_TREE, facts.toolkits.cuda), ("rocm", _ROCM_TREE, facts.toolkits.rocm)):
        m = re.match(pattern, real)
        if not m:
            continue
        for tk in tks:
            if tk.path and (real == tk.path or real.startswith(tk.path.rstrip("/") + "/")):
                return stack, tk.version
        if m.group(1):
            return stack, m.group(1)
        if facts.path_targets is None and len(tks) == 1:
            return stack, tks[0].version  # /usr/local/cuda, not resolved by the probe, one toolkit
        return None
    return None


def nvcc_on_path(facts: Facts) -> tuple[str, str] | None:
    """(version, path) of the nvcc a shell runs: what `nvcc --version` said on the live machine,
    else the first PATH entry inside a CUDA tree; None when not known."""
    for tool in facts.toolchain or ():
        if tool.name == "nvcc" and tool.source == "command" and tool.version:
            return tool.version, tool.path or "nvcc"
    for entry in path_entries(facts, "PATH") or ():
        found = toolkit_of_path(facts, entry)
        if found and found[0] == "cuda":
            return found[1], f"{entry}/nvcc"
    return None
