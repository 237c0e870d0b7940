"""The running kernel, its headers, DKMS builds, Secure Boot, reboots and the IOMMU."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import facts_view, gpuinfo
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import basis, rocm_release

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.facts import Gpu
    from gpuenv.matrices import Matrices, OsSupport

MOK_REF = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/install-faq.html"
IOMMU_REF = "https://rocm.docs.amd.com/projects/amdgpu-docs/en/latest/conceptual/iommu.html"


def _driver_planned(facts: Facts, matrices: Matrices | None, target: Target) -> str | None:
    """The install that will build a DKMS GPU driver ("the ROCm 7.2.4 install (auto target)"), or
    None: an explicit or auto target builds one on a machine that owns its kernel and has no vendor
    DKMS driver yet, except a release of ROCm's new stream, whose plans leave the kernel driver as
    it is (plan/therock.py)."""
    if inv.hosted(facts) or not target.stack or basis(target) not in ("explicit", "auto"):
        return None
    if _module(target) in inv.gpu_dkms_modules(facts):
        return None
    release = rocm_release(matrices, target)
    if release is not None and release.stream == "therock":
        return None
    name = f"{'ROCm' if target.stack == 'rocm' else 'CUDA'} {target.version}" if target.version else target.stack
    return f"the {name} install ({basis(target)} target)"


def _module(target: Target) -> str:
    return "amdgpu" if target.stack == "rocm" else "nvidia"


def _headers_fix(facts: Facts, release: str) -> str:
    pkgs = f"linux-headers-{release}"
    if inv.os_id(facts) == "ubuntu":
        pkgs += f" linux-modules-extra-{release}"
    return f"sudo apt-get install {pkgs}"


def _kernel_fix(facts: Facts, entry: OsSupport, running: str | None) -> str:
    """Ubuntu: a kernel older than the listed HWE series moves up with the HWE meta-package (the
    newest kernel boots by default); one newer than every listed series needs the GA kernel back,
    and GRUB keeps booting the newest installed kernel until the newer one is removed."""
    if inv.os_id(facts) != "ubuntu":
        return "Boot a listed kernel series (install it with the distribution's kernel meta-package), then reboot."
    listed = sorted(entry.kernels, key=inv.version_tuple)
    ga = entry.ga_kernels[0] if entry.ga_kernels else listed[0]
    hwe = f"linux-generic-hwe-{entry.version}"
    if running and inv.older(running, listed[-1]):
        return f"sudo apt-get install {hwe}  # the HWE kernel series ({listed[-1]})\nsudo reboot"
    return (
        f"sudo apt-get install linux-generic  # the GA kernel series ({ga})\n"
        f"sudo apt-get remove {hwe}  # stop following newer HWE kernels\n"
        f'sudo reboot  # pick the {ga} kernel under "Advanced options for Ubuntu" in GRUB (it boots the newest by default),\n'
        f"then remove the {running} kernel packages"
    )


@check(code="kernel.unsupported", area="platform", needs=("matrices",), noted=True)
def unsupported(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    release = rocm_release(matrices, target)
    if release is None or inv.hosted(facts):
        return
    entry = release.os_support(inv.os_id(facts) or "", inv.os_version(facts))
    if entry is None or not entry.kernels or not entry.confirmed:
        return
    running = inv.series(facts.kernel.release)
    if running is None:
        return  # the running kernel is not known
    listed = [inv.series(k) or k for k in entry.kernels]
    if running in listed:
        return
    yield Finding(
        severity=Severity.WARNING,
        title=f"Kernel {running} is not a series ROCm {release.version} lists for {entry.id} {entry.version}",
        detail=f"running {facts.kernel.release}; ROCm {release.version} lists {', '.join(entry.kernels)} "
        "(GA/HWE). amdgpu-dkms often fails to build on unlisted kernels.",
        fix=_kernel_fix(facts, entry, running),
        refs=(release.source,),
    )


@check(code="kernel.headers-missing", area="platform", needs=("kernel.headers_installed",), noted=True)
def headers_missing(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if facts.kernel.headers_installed or inv.hosted(facts):
        return
    installed = inv.gpu_dkms_modules(facts)
    # An NVIDIA driver NVML says is installed and not loaded is one DKMS builds, even where the
    # facts list no packages.
    unloaded = not installed and facts_view.nvml_unloaded(facts)
    planned = None if unloaded else _driver_planned(facts, matrices, target)
    if not installed and not unloaded and not planned:
        return
    release = _running(facts)
    if installed:
        why = "installed DKMS drivers: " + ", ".join(installed.values()) + ", which cannot build without it"
    elif unloaded:
        why = "the installed NVIDIA driver's kernel module is not loaded (NVML: driver not loaded), and DKMS cannot build it without them"
    else:
        why = f"{planned} builds the {_module(target)} DKMS driver, which cannot build without it"
    dkms = ("sudo dkms autoinstall",) if installed or unloaded else ()
    commands: tuple[str, ...] = ()
    if inv.distribution_kernel(facts) is False:
        # No linux-headers package of this release exists anywhere: naming one would send the
        # user after a package apt cannot find.
        detail = f"{inv.custom_kernel_words(release)}; {why}."
        fix = (
            "Boot a distribution kernel (its headers are a package), then install the headers of that kernel; "
            f"or put kernel {release}'s build tree, from whoever built it, at /lib/modules/{release}/build"
        )
    else:
        detail = f"/lib/modules/{release}/build is missing; {why}."
        if planned and release != _UNAME:
            detail += f" gpuenv's install plan installs them first (linux-headers-{release})."
        fix = _headers_fix(facts, release)
        commands = (fix, *dkms)
    # An error where something fails for it: an installed driver cannot be built (for this kernel
    # or the next), or no package carries this kernel's headers, so a planned DKMS build cannot
    # succeed. A driver only planned on a distribution kernel gets its headers from the plan itself
    # (planner._headers): nothing fails, and a fresh box is not told so in red (#43). Where the
    # release is not known the plan can name no package, so that stays an error too.
    severe = not planned or inv.distribution_kernel(facts) is False or release == _UNAME
    yield Finding(
        severity=Severity.ERROR if severe else Severity.WARNING,
        title="No kernel headers for the running kernel" + (f" {release}" if release != _UNAME else ""),
        detail=detail,
        fix="\n".join((fix, *dkms)),
        commands=commands,
    )


# The running kernel where the facts do not name it (the probe's "unknown": uname failed): a
# shell word that names it on the machine, so a fix never sends the user after linux-headers-unknown.
_UNAME = "$(uname -r)"


def _running(facts: Facts) -> str:
    return inv.kernel_release(facts) or _UNAME


@check(code="kernel.next-boot-no-module", area="platform", needs=("packages", "kernel.dkms"))
def next_boot_no_module(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if inv.hosted(facts):
        return
    running = inv.kernel_key(facts.kernel.release)
    newer = [k for k in inv.installed_kernels(facts) if inv.kernel_key(k) > running]
    if not newer:
        return
    nxt = max(newer, key=inv.kernel_key)
    for module, package in inv.gpu_dkms_modules(facts).items():
        built = [
            e for e in inv.gpu_dkms_entries(facts, module) if e.kernel == nxt and e.status == "installed"
        ]
        if built:
            continue
        yield Finding(
            severity=Severity.ERROR,
            title=f"The next boot (kernel {nxt}) has no {module} module built",
            detail=f"running {facts.kernel.release}; kernel {nxt} is installed and boots next, but DKMS has not built "
            f"{module} ({package}) for it: after the reboot the GPU driver will be missing.",
            fix=f"{_headers_fix(facts, nxt)}\nsudo dkms autoinstall -k {nxt}\n"
            f"dkms status  # expect {module}/…, {nxt}, …: installed — reboot only after that",
            commands=(_headers_fix(facts, nxt), f"sudo dkms autoinstall -k {nxt}", "dkms status"),
        )


@check(code="kernel.dkms-not-built", area="platform")
def dkms_not_built(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if inv.hosted(facts):
        return
    if facts.kernel.dkms is not None:
        yield from _dkms_unbuilt(facts)
    if facts.kernel.akmods_failed:
        yield from _akmods_failed(facts)


def _dkms_unbuilt(facts: Facts) -> Iterator[Finding]:
    release = facts.kernel.release
    for module, package in inv.gpu_dkms_modules(facts).items():
        entries = inv.gpu_dkms_entries(facts, module)
        if any(e.kernel == release and e.status == "installed" for e in entries):
            continue
        if package.startswith("akmod-") and not entries:
            continue  # akmods builds it, not DKMS: its own failure log says (_akmods_failed)
        seen = (
            "; ".join(
                f"{e.module}/{e.version}: {e.status or '?'}" + (f" for {e.kernel}" if e.kernel else " (no kernel)")
                for e in entries
            )
            or "no DKMS entry"
        )
        vendor = "amd" if module == "amdgpu" else "nvidia"
        if not facts.gpus_of(vendor) and facts.bus_read:
            # The driver of a GPU that is not here: building it helps nothing, removing it does.
            yield Finding(
                severity=Severity.ERROR,
                title=f"{package} is installed but its {module} module is not built for kernel {release}",
                detail=f"dkms status: {seen}. There is no {'AMD' if vendor == 'amd' else 'NVIDIA'} GPU here: "
                "this is a leftover driver, and its unfinished DKMS build keeps failing on every kernel update.",
                fix=f"sudo apt-get purge {package}\nsudo dkms status  # expect no {module} entry",
                commands=(f"sudo apt-get purge {package}", "sudo dkms status"),
            )
            continue
        yield Finding(
            severity=Severity.ERROR,
            title=f"{package} is installed but its {module} module is not built for kernel {release}",
            detail=f"dkms status: {seen}. The vendor module is not what runs on this kernel "
            "(kernel API drift, missing headers or a custom kernel).",
            fix=f"{_headers_fix(facts, release)}\nsudo dkms autoinstall -k {release}\n"
            f"If the build fails, boot a kernel series the driver supports, or reinstall: sudo apt-get install --reinstall {package}",
            commands=(_headers_fix(facts, release), f"sudo dkms autoinstall -k {release}"),
            # Its GPUs: what a consequence nested under it (nouveau on them) must share.
            gpus=gpuinfo.slots(facts.gpus_of(vendor)),
        )


def _akmods_failed(facts: Facts) -> Iterator[Finding]:
    """akmods (Fedora, RPM Fusion) failed to build a GPU driver's module for the running kernel,
    and the module is not loaded: its failure log says so, as `dkms status` would for DKMS."""
    release = facts.kernel.release
    for failure in facts.kernel.akmods_failed or ():
        vendor = "amd" if failure.module.startswith("amdgpu") else "nvidia" if failure.module.startswith("nvidia") else None
        if vendor is None or failure.kernel != release:
            continue
        module = "amdgpu" if vendor == "amd" else "nvidia"
        if facts.module_loaded(module) or (facts.bus_read and not facts.gpus_of(vendor)):
            continue  # built after all (loaded), or a leftover on a box without that GPU
        log = f"/var/cache/akmods/{failure.module}/{failure.version}-for-{release}.failed.log"
        yield Finding(
            severity=Severity.ERROR,
            title=f"akmods could not build the {failure.module} module {failure.version} for kernel {release}",
            detail=f"{log}: the build for the running kernel failed, so the {'AMD' if vendor == 'amd' else 'NVIDIA'} "
            "driver does not run on it (a kernel newer than the driver supports, a custom kernel, or a missing "
            "kernel-devel).",
            fix=f"sudo dnf install kernel-devel-{release}\nsudo akmods --force --kernels {release}\n"
            f"If it fails again, read {log}: boot a kernel the driver supports, or update to a driver that "
            "supports this kernel.",
            commands=(f"sudo dnf install kernel-devel-{release}", f"sudo akmods --force --kernels {release}"),
            gpus=gpuinfo.slots(facts.gpus_of(vendor)),
        )


@check(code="kernel.secure-boot", area="platform", needs=("kernel.secure_boot",), blocking=True, noted=True)
def secure_boot(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if not facts.kernel.secure_boot or inv.hosted(facts):
        return
    modules = inv.gpu_dkms_modules(facts)
    loaded = facts.kernel.modules_loaded
    # Refused by Secure Boot: installed (built for this kernel, or built where DKMS does not say:
    # akmods, a report without `dkms status`), its GPU present, yet not loaded. A module DKMS shows
    # unbuilt for this kernel (kernel.dkms-not-built) or one whose GPU is gone (stack.leftovers) is
    # not loaded for other reasons.
    not_loaded = [
        m
        for m in modules
        if loaded is not None
        and m not in loaded
        and facts.gpus_of("amd" if m == "amdgpu" else "nvidia")
        and not _unbuilt(facts, m)
    ]
    # NVML's own "driver not loaded": its user-space driver is installed and the nvidia module is
    # not in the kernel, whatever built it (akmods, a runfile): refused, under Secure Boot.
    if facts_view.nvml_unloaded(facts) and facts.gpus_of("nvidia") and "nvidia" not in not_loaded:
        not_loaded.append("nvidia")
        modules = {**modules, "nvidia": modules.get("nvidia", "the NVIDIA driver (NVML: driver not loaded)")}
    planned = _driver_planned(facts, matrices, target)
    # A module the kernel loaded under Secure Boot is signed with an enrolled key: nothing to say.
    # Leftover modules whose GPU is gone are not Secure Boot's business either.
    unproven = [
        m
        for m in modules
        if facts.gpus_of("amd" if m == "amdgpu" else "nvidia") and (loaded is None or m not in loaded)
    ]
    if not unproven and not planned:
        return
    # Ubuntu's DKMS signs with /var/lib/shim-signed/mok/MOK.der (made by --new-key when missing);
    # elsewhere dkms makes /var/lib/dkms/mok.pub on its first build (installers.md pitfall 1).
    enroll = (
        "sudo update-secureboot-policy --new-key  # only if /var/lib/shim-signed/mok/MOK.der is missing\n"
        "sudo update-secureboot-policy --enroll-key"
        if inv.os_id(facts) == "ubuntu"
        else "sudo mokutil --import /var/lib/dkms/mok.pub"
    )
    if not_loaded:
        yield Finding(
            severity=Severity.ERROR,
            title=f"Secure Boot is on and the DKMS module {', '.join(not_loaded)} is not loaded",
            detail=f"DKMS packages: {', '.join(modules.values())}; not in /proc/modules: {', '.join(not_loaded)}. "
            "An unsigned module, or one signed with a key not enrolled in the MOK list, is refused by the kernel.",
            fix=f"{enroll}\nreboot and accept the key in the blue MOK manager screen (console access needed), "
            "or disable Secure Boot in the firmware setup.",
            refs=(MOK_REF,),
        )
        return
    what = ", ".join(modules[m] for m in unproven) if unproven else f"the {_module(target)} driver {planned} builds"
    yield Finding(
        severity=Severity.WARNING,
        title="Secure Boot is on: DKMS modules must be signed with an enrolled key",
        detail=f"DKMS GPU driver: {what}. A kernel or driver update that rebuilds it unsigned stops it loading.",
        fix=f"Keep the DKMS signing key enrolled:\n{enroll}\nthen accept it in the MOK manager at the next boot (console access needed).",
        refs=(MOK_REF,),
    )


def _unbuilt(facts: Facts, module: str) -> bool:
    """DKMS lists the module and has not installed it for the running kernel."""
    entries = inv.gpu_dkms_entries(facts, module)
    return bool(entries) and not any(
        e.kernel == facts.kernel.release and e.status == "installed" for e in entries
    )


@check(code="kernel.reboot-required", area="platform")
def reboot_required(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    nv = facts.nvidia
    loaded = nv.module_version if nv else None
    package = inv.nvidia_package_version(facts)
    if nv and nv.nvml == "version_mismatch" and not inv.hosted(facts):
        # NVML's own word: the loaded module is older than the user-space driver (an upgrade,
        # often unattended, replaced the libraries under a running kernel module).
        yield Finding(
            severity=Severity.WARNING,
            title="The NVIDIA driver was upgraded under the loaded module: reboot",
            detail="NVML: Driver/library version mismatch"
            + (f"; loaded module {loaded}" if loaded else "")
            + (f"; installed driver {package or nv.driver_version}" if package or nv.driver_version else "")
            + ".",
            fix="sudo reboot",
            commands=("sudo reboot",),
        )
        return
    if loaded and package and inv.version_tuple(loaded) != inv.version_tuple(package):
        yield Finding(
            severity=Severity.WARNING,
            title="The loaded NVIDIA module is not the installed driver: reboot",
            detail=f"loaded nvidia module {loaded}; installed driver packages {package}.",
            fix="sudo reboot",
            commands=("sudo reboot",),
        )
    amd = facts.amd.driver_version if facts.amd else None
    built = [
        e.version
        for e in inv.gpu_dkms_entries(facts, "amdgpu")
        if e.kernel == facts.kernel.release and e.status == "installed"
    ]
    if amd and built and not any(v.startswith(amd) or amd.startswith(v) for v in built):
        yield Finding(
            severity=Severity.WARNING,
            title="The loaded amdgpu module is not the installed amdgpu-dkms build: reboot",
            detail=f"loaded amdgpu {amd}; DKMS built {', '.join(built)} for {facts.kernel.release}.",
            fix="sudo reboot",
            commands=("sudo reboot",),
        )


def _instinct(facts: Facts, matrices: Matrices | None) -> list[Gpu]:
    out = []
    for g in gpuinfo.amd_discrete(facts, matrices):
        gfx = gpuinfo.gfx_target(g, matrices) or ""
        if "instinct" in gpuinfo.gpu_name(g, matrices).lower() or gfx in (
            "gfx908",
            "gfx90a",
            "gfx940",
            "gfx941",
            "gfx942",
            "gfx950",
        ):
            out.append(g)
    return out


@check(code="kernel.iommu", area="platform", needs=("kernel.cmdline",))
def iommu(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    gpus = _instinct(facts, matrices)
    if len(gpus) < 2 or "iommu=pt" in (facts.kernel.cmdline or "").split():
        return
    intel = "intel" in (facts.host.cpu_model or "").lower()
    params = "intel_iommu=on iommu=pt" if intel else "iommu=pt"
    yield Finding(
        severity=Severity.INFO,
        title=f"{len(gpus)} Instinct GPUs without iommu=pt on the kernel command line",
        detail=f"GPUs: {gpuinfo.describe(gpus, matrices)}; /proc/cmdline: {facts.kernel.cmdline}. "
        'RCCL peer-to-peer traffic is slower (and may warn "Missing iommu=pt").',
        fix=f'Add "{params}" to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then:\nsudo update-grub\nsudo reboot',
        gpus=gpuinfo.slots(gpus),
        refs=(IOMMU_REF,),
    )
