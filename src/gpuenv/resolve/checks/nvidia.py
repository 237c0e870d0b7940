"""The NVIDIA driver: nouveau, missing or unloaded driver, version mismatches, too old a driver,
the kernel-module flavour, GPUs a branch dropped, persistence mode."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.osreleases import initramfs_then_reboot
from gpuenv.resolve import gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.facts_view import nvidia_driver_absent, nvidia_driver_unloaded, nvml_unloaded
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import basis, cuda_toolkit

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.facts import Gpu
    from gpuenv.matrices import CudaToolkit, Matrices

MODULES_REF = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html"
TABLE3_REF = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
ARCH_REF = "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"


def judged_toolkits(facts: Facts, matrices: Matrices, target: Target) -> list[tuple[str, CudaToolkit, bool]]:
    """(why, toolkit, installed) for every installed toolkit and an explicitly targeted one."""
    out: list[tuple[str, CudaToolkit, bool]] = []
    for version in inv.installed_cuda(facts):
        tk = toolkitpaths.toolkit_for(matrices, version)
        if tk is not None:
            out.append((f"installed CUDA {version}", tk, True))
    tk = cuda_toolkit(matrices, target)
    if tk is not None and basis(target) == "explicit" and all(t.version != tk.version for _, t, _ in out):
        out.append((f"target CUDA {target.version}", tk, False))
    return out


def branch_number(version: str | None) -> int | None:
    nums = inv.version_tuple(version)
    return nums[0] if nums else None


# nouveau takes the GPU when the nvidia module is refused (Secure Boot), has dropped it, was never
# built for this kernel, or is not installed at all (the kernel's own driver binds it by default:
# installing the NVIDIA driver, whose plan blacklists nouveau, is the one fix).
@check(
    code="nvidia.nouveau-loaded",
    area="nvidia",
    follows=("kernel.secure_boot", "nvidia.gpu_dropped", "kernel.dkms_not_built", "nvidia.driver_missing"),
)
def nouveau_loaded(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    gpus = facts.gpus_of("nvidia")
    bound = [g for g in gpus if g.kernel_driver == "nouveau"]
    loaded = facts.module_loaded("nouveau")
    if not bound and not (loaded and (gpus or target.stack == "cuda")):
        return
    yield Finding(
        severity=Severity.ERROR,
        title="The nouveau driver holds the NVIDIA GPU",
        detail=(
            f"nouveau bound to {gpuinfo.describe(bound, matrices)}" if bound else "nouveau is in /proc/modules"
        )
        + ". The NVIDIA driver cannot load while nouveau is loaded.",
        fix="printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf\n"
        + initramfs_then_reboot(facts.os),
        gpus=gpuinfo.slots(bound or gpus),
        refs=("https://docs.nvidia.com/cuda/cuda-installation-guide-linux/",),
    )


# nova-core, the in-kernel Rust driver for GSP-based NVIDIA GPUs (Linux 7.0 builds it as a module,
# CONFIG_NOVA_CORE=m), registers a PCI driver for NVIDIA display devices and claims the GPU at boot:
# nvidia.ko then probes no device ("NVRM: GPU 0000:01:00.0 is already bound to NovaCore."). The
# sysfs driver link names the PCI driver: "NovaCore" in that log; module-style spellings too.
NOVA_DRIVERS = frozenset({"novacore", "nova_core", "nova-core"})
NOVA_REF = "https://docs.kernel.org/gpu/nova/index.html"


@check(code="nvidia.nova-core-bound", area="nvidia", blocking=True)
def nova_core_bound(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    bound = [g for g in facts.gpus_of("nvidia") if (g.kernel_driver or "").lower() in NOVA_DRIVERS]
    if not bound:
        return
    yield Finding(
        severity=Severity.ERROR,
        title="The in-kernel nova_core driver holds the NVIDIA GPU",
        detail=f"{gpuinfo.describe(bound, matrices)} is bound to {bound[0].kernel_driver} (sysfs driver link). "
        "nova_core is not a CUDA driver: while it holds the GPU, nvidia.ko probes no device "
        "(\"NVRM: ... is already bound to NovaCore\") and CUDA sees no GPU.",
        fix="printf 'blacklist nova_core\\nblacklist nova_drm\\n' | sudo tee /etc/modprobe.d/blacklist-nova.conf\n"
        + initramfs_then_reboot(facts.os),
        gpus=gpuinfo.slots(bound),
        refs=(NOVA_REF,),
    )


@check(code="nvidia.driver-missing", area="nvidia")
def driver_missing(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    gpus = facts.gpus_of("nvidia")
    if not gpus or facts.platform.wsl or not nvidia_driver_absent(facts):
        return  # (NVML's library answering "not loaded" is an installed driver: nvidia.driver-not-loaded)
    hosted = bool(facts.platform.container)
    yield Finding(
        severity=Severity.ERROR,
        title="NVIDIA GPU without an NVIDIA driver",
        detail=f"{gpuinfo.describe(gpus, matrices)}; no NVIDIA driver package installed and no nvidia module loaded.",
        fix=(
            "Install the NVIDIA driver on the container's host, then run the container with --gpus all "
            "(nvidia-container-toolkit)."
            if hosted
            else "gpuenv install cuda --dry-run  # shows the driver it installs (open or proprietary for this GPU)"
        ),
        gpus=gpuinfo.slots(gpus),
    )


@check(
    code="nvidia.driver-not-loaded",
    area="nvidia",
    follows=(
        "nvidia.gpu_dropped",
        "nvidia.module_flavor",
        "kernel.secure_boot",
        "kernel.dkms_not_built",
        "kernel.headers_missing",
    ),
)
def driver_not_loaded(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    """The user-space driver is there and the kernel module is not: NVML's own driver_not_loaded
    says so on any distribution (akmods, Arch, a custom kernel), and so do installed driver
    packages with nvidia absent from /proc/modules."""
    gpus = facts.gpus_of("nvidia")
    if not gpus or inv.hosted(facts) or not nvidia_driver_unloaded(facts):
        return
    causes = []
    if "nvidia" in (facts.kernel.modules_blacklisted or ()):
        causes.append("nvidia is blacklisted in /etc/modprobe.d")
    entries = inv.gpu_dkms_entries(facts, "nvidia")
    built = any(e.kernel == facts.kernel.release and e.status == "installed" for e in entries)
    if (inv.nvidia_dkms_packages(facts) or entries) and not built:
        causes.append(f"DKMS has not built it for {inv.kernel_release(facts) or 'the running kernel'}")
    if facts.kernel.headers_installed is False:
        causes.append(f"no kernel headers for {inv.kernel_release(facts) or 'the running kernel'} (DKMS cannot build)")
    if facts.kernel.secure_boot:
        causes.append("Secure Boot is on (an unsigned module is refused)")
    if facts.module_loaded("nouveau") or any(g.kernel_driver == "nouveau" for g in gpus):
        causes.append("nouveau is loaded")
    packages = ", ".join(f"{n} {v}" for n, v in inv.nvidia_driver_packages(facts).items())
    seen = [f"installed: {packages}"] if packages else []
    if nvml_unloaded(facts):
        seen.append("NVML: driver not loaded")
    if facts.module_loaded("nvidia") is False:
        seen.append("nvidia not in /proc/modules")
    yield Finding(
        severity=Severity.ERROR,
        title="NVIDIA driver installed but its kernel module is not loaded",
        detail="; ".join(seen) + (f"; likely: {'; '.join(causes)}" if causes else "; no reboot since the install?"),
        fix="sudo modprobe nvidia  # the error names the cause\nsudo dmesg | grep -i nvidia\n"
        "If it was just installed: sudo reboot",
        commands=("sudo modprobe nvidia",),
        gpus=gpuinfo.slots(gpus),
    )


@check(code="nvidia.version-mismatch", area="nvidia", needs=("nvidia",))
def version_mismatch(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    nv = facts.nvidia
    assert nv is not None  # run_checks skips the check while its needs are unknown
    mismatch = nv.nvml == "version_mismatch"
    seen = "NVML: Driver/library version mismatch"
    if not mismatch and nv.module_version and nv.driver_version:
        mismatch = inv.version_tuple(nv.module_version) != inv.version_tuple(nv.driver_version)
        seen = f"loaded module {nv.module_version}, user-space driver {nv.driver_version}"
    if not mismatch:
        return
    package = inv.nvidia_package_version(facts)
    yield Finding(
        severity=Severity.ERROR,
        title="NVIDIA kernel module and user-space driver differ",
        detail=seen
        + (f"; installed packages {package}" if package else "")
        + ". nvidia-smi and CUDA fail until they match.",
        fix="sudo reboot  # after a driver upgrade the old module stays loaded until then\n"
        "If it persists: sudo apt-get install --reinstall the driver packages so that one version owns both.",
        gpus=gpuinfo.slots(facts.gpus_of("nvidia")),
    )


@check(code="nvidia.driver-too-old", area="nvidia", needs=("matrices",))
def driver_too_old(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    driver = inv.nvidia_driver_version(facts)
    if not driver:
        yield from _cuda_version_only(facts, matrices, target)
        return
    if not facts.gpus_of("nvidia"):
        return
    for why, tk, installed in judged_toolkits(facts, matrices, target):
        if not tk.min_driver or not inv.older(driver, tk.min_driver):
            continue
        compat = tk.minor_compat_driver
        # An installed toolkit whose major release this driver serves under minor-version compatibility
        # runs its programs (without PTX JIT or the newer APIs): GPU work does not fail, so a warning.
        # A targeted release stays an error: installing it is what needs the newer driver.
        runs = installed and compat is not None and not inv.older(driver, compat)
        yield Finding(
            severity=Severity.WARNING if runs else Severity.ERROR,
            title=f"NVIDIA driver {driver} is older than CUDA {tk.series} requires ({tk.min_driver})",
            detail=f"{why} needs driver >= {tk.min_driver} (Table 3); running {driver}"
            + (
                f". Minor-version compatibility (>= {compat}) runs some applications, without PTX JIT or newer APIs."
                if compat and not inv.older(driver, compat)
                else ""
            ),
            fix=f"Upgrade the driver to a branch >= {branch_number(tk.min_driver)}: gpuenv install cuda@{tk.series} --dry-run",
            gpus=gpuinfo.slots(facts.gpus_of("nvidia")),
            refs=(TABLE3_REF,),
        )


def _cuda_version_only(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    """A driver known only by the highest CUDA version it supports (nvidia-smi's "CUDA Version",
    NVML's cuda_driver_version: what a container sees of the host's driver, or what a report
    quotes). A toolkit of a newer CUDA release needs a newer driver than Table 3's minimum this one
    meets; minor-version compatibility (CUDA 11 on) runs some of its programs, which is said."""
    supports = facts.nvidia.cuda_driver_version if facts.nvidia else None
    have = inv.version_tuple(supports)[:2]
    if len(have) < 2:
        return
    for why, tk, _ in judged_toolkits(facts, matrices, target):
        need = inv.version_tuple(tk.series)[:2]
        if len(need) < 2 or have >= need:
            continue
        minor = have[0] == need[0] and need[0] >= 11
        yield Finding(
            severity=Severity.ERROR,
            title=f"The NVIDIA driver supports CUDA {supports}, older than CUDA {tk.series} requires"
            + (f" ({tk.min_driver})" if tk.min_driver else ""),
            detail=f"{why} needs a driver that supports CUDA {tk.series}"
            + (f" (>= {tk.min_driver}, Table 3)" if tk.min_driver else "")
            + f"; the driver's own version is not in the facts, and it supports CUDA {supports}"
            + (
                ". Minor-version compatibility runs some of its programs, without PTX JIT or newer APIs; the "
                f"NVIDIA container toolkit refuses an image that requires cuda>={tk.series}."
                if minor
                else "."
            ),
            fix="Upgrade the driver (on the host, for a container)"
            + (f" to a branch >= {branch_number(tk.min_driver)}" if tk.min_driver else "")
            + f": gpuenv install cuda@{tk.series} --dry-run",
            gpus=gpuinfo.slots(facts.gpus_of("nvidia")),
            refs=(TABLE3_REF,),
        )


@check(code="nvidia.module-flavor", area="nvidia", needs=("matrices",), blocking=True)
def module_flavor(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    gpus = facts.gpus_of("nvidia")
    need = [(g, gpuinfo.module_flavour(g, matrices)) for g in gpus]
    flavour = facts.nvidia.kernel_module if facts.nvidia else None
    if flavour in ("open", "proprietary"):
        wrong = [g for g, f in need if f not in ("either", flavour)]
        if wrong:
            yield _wrong_flavour(wrong, flavour, matrices)
            return
    # Installing CUDA here: one driver, one flavour, for every GPU.
    if target.stack == "cuda" and not inv.hosted(facts) and {"open", "proprietary"} <= {f for _, f in need}:
        both = {want: [g for g, f in need if f == want] for want in ("open", "proprietary")}
        yield Finding(
            severity=Severity.ERROR,
            title="No NVIDIA kernel-module flavour drives all of these GPUs",
            detail=f"{gpuinfo.describe(both['open'], matrices)} need the open modules; "
            f"{gpuinfo.describe(both['proprietary'], matrices)} need the proprietary ones. One driver "
            "loads one flavour.",
            fix="Move the Maxwell/Pascal/Volta GPUs (or the Blackwell ones) to another machine.",
            gpus=gpuinfo.slots(gpus),
            refs=(MODULES_REF,),
        )


def _wrong_flavour(wrong: list[Gpu], flavour: str, matrices: Matrices) -> Finding:
    need = gpuinfo.module_flavour(wrong[0], matrices)
    archs = ", ".join(sorted({gpuinfo.nvidia_architecture(g, matrices) or "these" for g in wrong}))
    pkg = "nvidia-open" if need == "open" else "cuda-drivers"
    return Finding(
        severity=Severity.ERROR,
        title=f"{archs} GPUs need the {need} NVIDIA kernel modules, not the {flavour} ones",
        detail=f"{gpuinfo.describe(wrong, matrices)}; loaded flavour: {flavour}. "
        + (
            "Blackwell and Grace Hopper are supported only by the open modules."
            if need == "open"
            else "Maxwell, Pascal and Volta are not supported by the open modules."
        ),
        fix=f"Switch flavour (NVIDIA CUDA repository): sudo apt-get install {pkg}\n"
        + (
            "(Ubuntu archive: the nvidia-driver-NNN-open packages)"
            if need == "open"
            else "(Ubuntu archive: nvidia-driver-NNN without -open; driver branch <= 580)"
        )
        + "\nsudo reboot",
        gpus=gpuinfo.slots(wrong),
        refs=(MODULES_REF,),
    )


@check(code="nvidia.gpu-dropped", area="nvidia", needs=("matrices",), blocking=True)
def gpu_dropped(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    if not facts.gpus_of("nvidia"):
        return  # nothing to judge: the toolkits' list (cuda.json) is not read
    branch = inv.nvidia_branch(facts)
    driver = inv.nvidia_driver_version(facts) or (str(branch) if branch else None)
    toolkits = judged_toolkits(facts, matrices, target)
    for g in facts.gpus_of("nvidia"):
        arch_name = gpuinfo.nvidia_architecture(g, matrices)
        arch = matrices.nvidia_arch(arch_name) if arch_name else None
        cc = gpuinfo.compute_capability(g, matrices)
        reasons = []
        last = branch_number(arch.last_driver) if arch and arch.last_driver else None
        if arch and branch and last and branch > last:
            reasons.append(
                f"driver {driver} (branch R{branch}); {arch.architecture} ends with {arch.last_driver}"
            )
        for why, tk, _ in toolkits:
            caps = [inv.version_tuple(c) for c in tk.compute_capabilities]
            if cc and caps and inv.version_tuple(cc) < min(caps):
                reasons.append(
                    f"{why} supports compute capability {min(tk.compute_capabilities, key=inv.version_tuple)} and newer"
                )
        if not reasons:
            continue
        name = arch.architecture if arch else arch_name or "this"
        ok = [t.series for t in matrices.cuda_toolkits() if t.confirmed and cc in t.compute_capabilities]
        branch_hint = (
            f"a driver branch up to {arch.last_driver}"
            if arch and arch.last_driver
            else "an older driver branch"
        )
        yield Finding(
            severity=Severity.ERROR,
            title=f"{gpuinfo.gpu_name(g, matrices)} ({name}, compute capability {cc or '?'}) is no longer supported",
            detail="; ".join(reasons) + ".",
            fix=(
                f"Stay on {branch_hint} and CUDA {ok[-1]} or older: gpuenv install cuda@{ok[-1]} --dry-run"
                if ok
                else f"Stay on {branch_hint} and a CUDA toolkit that still supports {name} (`gpuenv matrix show cuda`)."
            ),
            gpus=gpuinfo.slots([g]),
            refs=(ARCH_REF,),
        )


@check(code="nvidia.persistence-off", area="nvidia", needs=("nvidia.persistence_mode", "packages"))
def persistence_off(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    gpus = facts.gpus_of("nvidia")
    assert facts.nvidia is not None  # run_checks skips the check while its needs are unknown
    if facts.nvidia.persistence_mode or not gpus or inv.display_packages(facts) or inv.hosted(facts):
        return
    yield Finding(
        severity=Severity.INFO,
        title="Headless NVIDIA node without persistence mode",
        detail=f"{gpuinfo.describe(gpus, matrices)}; no display server installed, persistence mode off: every CUDA "
        "start pays the driver initialisation (seconds on multi-GPU nodes).",
        # Ubuntu's nvidia-persistenced unit runs the daemon with --no-persistence-mode, so enabling
        # it is not enough: override ExecStart (installers.md B4, NVIDIA's ansible role).
        fix="sudo mkdir -p /etc/systemd/system/nvidia-persistenced.service.d\n"
        "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/nvidia-persistenced --user root --persistence-mode --verbose\\n' "
        "| sudo tee /etc/systemd/system/nvidia-persistenced.service.d/override.conf\n"
        "sudo systemctl daemon-reload\n"
        "sudo systemctl enable nvidia-persistenced && sudo systemctl restart nvidia-persistenced\n"
        "nvidia-smi -q | grep -i 'persistence mode'  # expect Enabled",
        gpus=gpuinfo.slots(gpus),
    )
