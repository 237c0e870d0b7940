"""AMD GPUs under ROCm: the amdgpu driver, /dev/kfd, device permissions, gfx support, overrides."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.osreleases import initramfs_then_reboot
from gpuenv.resolve import facts_view, gpuinfo
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.facts_view import newest_supporting, rocm_gpus
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import basis, rocm_release

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.facts import Gpu
    from gpuenv.matrices import Matrices
    from gpuenv.matrices.records import RocmRelease

PREREQ_REF = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html"
OVERRIDE_REF = "https://github.com/ROCm/TheRock/issues/1719"
# The 6.0-6.3 system requirements, where gfx906 is listed as deprecated (matrices/rocm.json notes).
DEPRECATED_REF = "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.4/reference/system-requirements.html"


def _relevant(facts: Facts, matrices: Matrices | None, target: Target) -> bool:
    """ROCm matters here: an AMD discrete GPU, or a ROCm target/stack on AMD hardware."""
    return bool(gpuinfo.amd_discrete(facts, matrices)) or (target.stack == "rocm" and bool(facts.gpus_of("amd")))


def _amdgpu_loaded(facts: Facts) -> bool:
    return bool(facts.module_loaded("amdgpu")) or any(
        g.kernel_driver == "amdgpu" for g in facts.gpus_of("amd")
    )


@check(code="amd.driver-missing", area="amd")
def driver_missing(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    # A GPU whose driver the facts leave out is not known to have none: judged only when
    # /proc/modules says amdgpu is not loaded at all.
    bare = [
        g
        for g in gpuinfo.amd_discrete(facts, matrices)
        if g.kernel_driver != "amdgpu" and (not g.driver_unknown or facts.module_loaded("amdgpu") is False)
    ]
    if target.stack != "rocm":
        # An old Radeon on the legacy radeon driver as the display card of a CUDA box: no ROCm GPU,
        # nothing to fix. Judged only when ROCm is the target.
        bare = [g for g in bare if g.kernel_driver != "radeon"]
    if not bare:
        return
    others = sorted({g.kernel_driver for g in bare if g.kernel_driver})
    blacklisted = "amdgpu" in (facts.kernel.modules_blacklisted or ())
    hosted = inv.hosted(facts)
    yield Finding(
        severity=Severity.ERROR,
        title="AMD discrete GPU without the amdgpu driver",
        detail=f"{gpuinfo.describe(bare, matrices)}: "
        + (f"bound to {', '.join(others)}" if others else "no driver bound")
        + ("; amdgpu is blacklisted in /etc/modprobe.d" if blacklisted else ""),
        fix=(
            "Load amdgpu on the host (the container shares the host's kernel)."
            if hosted
            else "The GPU is reserved for a virtual machine (vfio-pci). To use it here, remove its PCI id from "
            "vfio-pci.ids (kernel command line or /etc/modprobe.d), then: " + initramfs_then_reboot(facts.os, " && ")
            if "vfio-pci" in others
            else (
                "Remove the amdgpu blacklist entry from /etc/modprobe.d, then: " + initramfs_then_reboot(facts.os, " && ")
                if blacklisted
                else "sudo modprobe amdgpu && sudo dmesg | grep -i amdgpu  # why it did not bind\n"
                "Install the driver ROCm pairs with: gpuenv install rocm --dry-run"
            )
        ),
        gpus=gpuinfo.slots(bare),
    )


# In a container, the unmapped /dev/kfd is the container check's error (its fix maps it): one cause.
@check(code="amd.kfd-missing", area="amd", follows=("platform.in_container",))
def kfd_missing(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    # In a container the host's driver is out of sight: an AMD GPU there is reason enough.
    driver = _amdgpu_loaded(facts) or (bool(facts.platform.container) and bool(facts.gpus_of("amd")))
    if facts.platform.wsl or not driver or not _relevant(facts, matrices, target):
        return
    node = (facts.device_nodes or {}).get("/dev/kfd")
    kfd = facts.amd.kfd if facts.amd and facts.amd.kfd is not None else (node.exists if node else None)
    if kfd is not False:
        return
    container = facts.platform.container
    yield Finding(
        severity=Severity.ERROR,
        title="amdgpu is loaded but /dev/kfd is missing" + (" in this container" if container else ""),
        detail="ROCm reaches the GPU through /dev/kfd (the compute interface); without it rocminfo finds no agent."
        + (
            f" Inside a {container} container the host must map it in."
            if container
            else " The kernel was built without HSA_AMD/KFD, or amdgpu failed to initialise compute."
        ),
        fix=(
            "docker run --device /dev/kfd --device /dev/dri --group-add video --group-add render …"
            if container
            else "sudo dmesg | grep -i kfd\nUse a distribution kernel (CONFIG_HSA_AMD=y) or install amdgpu-dkms: gpuenv install rocm --dry-run"
        ),
        gpus=gpuinfo.slots(rocm_gpus(facts, matrices)),
        refs=(PREREQ_REF,),
    )


# Where ROCm's packages and current udev rules put the compute nodes: group render, 0660
# (/dev/kfd and /dev/dri/renderD*; video is the older group some distributions still use).
_NODE_GROUPS = ("render", "video")


@check(code="amd.no-device-access", area="amd")
def no_device_access(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    user = facts.user
    if (user is not None and user.uid == 0) or facts.platform.wsl or not _relevant(facts, matrices, target):
        return
    nodes = {
        p: n
        for p, n in (facts.device_nodes or {}).items()
        if n.exists and (p == "/dev/kfd" or p.startswith("/dev/dri/renderD"))
    }
    groups = user.groups if user is not None and (user.groups or user.name) else None
    name = (user.name if user else None) or "$USER"
    denied, why = [], ""
    if nodes:
        for path, n in sorted(nodes.items()):
            if n.accessible is not None:
                if not n.accessible:
                    denied.append(path)
                continue
            world_rw = bool(n.mode and n.mode[-1] in "67")
            if world_rw or not n.mode:
                continue
            group_rw = n.mode[-2] in "67"
            if groups is None:
                # Unknown user: only a node that its owner alone may open (0600 root) shuts
                # every other account out; 0660 render depends on who the user is.
                if not group_rw:
                    denied.append(path)
            elif not group_rw or (n.group and n.group not in groups):
                denied.append(path)
        if not denied:
            return
        why = "cannot open " + ", ".join(
            f"{p} (group {nodes[p].group or '?'}, mode {nodes[p].mode or '?'})" for p in denied
        )
    elif groups is not None and not set(_NODE_GROUPS) & set(groups) and _amdgpu_loaded(facts):
        # No device nodes in the facts: the standard rules (group render, mode 0660) decide.
        why = "the device nodes are not in the facts; with the standard udev rules /dev/kfd and /dev/dri/renderD* are 0660, group render"
    else:
        return
    missing = [g for g in _NODE_GROUPS if groups is None or g not in groups]
    who = f"{name} is in groups: {', '.join(groups) or 'none'}" if groups is not None else "the user is not known"
    yield Finding(
        severity=Severity.ERROR,
        title=f"User {name} cannot open the AMD GPU device nodes"
        if groups is not None
        else "The AMD GPU device nodes can be opened by their owner (root) only",
        detail=f"{why}; {who}.",
        fix=f"sudo usermod -aG {','.join(missing) or 'render,video'} {name}\n"
        "then log out and in again (group membership applies at login)",
        commands=(f"sudo usermod -aG {','.join(missing) or 'render,video'} {name}",),
        refs=(PREREQ_REF,),
    )


@check(code="amd.gpu-unsupported", area="amd", needs=("matrices",), blocking=True)
def gpu_unsupported(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    release = rocm_release(matrices, target)
    if release is None:
        if basis(target) == "none":
            yield from _only_gpu_unsupported(facts, matrices)
        elif target.stack == "rocm":
            yield from _unsupported_by_every_release(facts, matrices, target)
        return
    bad, doubtful = [], []
    for g in rocm_gpus(facts, matrices):
        gfx = gpuinfo.gfx_target(g, matrices)
        if gfx and release.support(gfx) is None:
            bad.append((g, gfx))
        elif gfx in release.gpus_unconfirmed:
            doubtful.append((g, gfx))
    if not bad:
        if doubtful:
            yield _support_unconfirmed(release, doubtful, matrices, target)
        return
    supported = ", ".join(sorted(release.gpus))
    targets = sorted({gfx for _, gfx in bad})
    elsewhere = [line for gfx in targets if (line := newest_supporting(matrices, gfx))]
    # Severity by consequence: judged against what `install auto` would pick, with nothing of
    # ROCm installed and no install asked for, nothing fails for it yet (a torch wheel's or an
    # application's own ROCm is judged by its own checks): said, as what would not be supported.
    auto = basis(target) == "auto"
    yield Finding(
        severity=Severity.WARNING if auto else Severity.ERROR,
        title=f"ROCm {release.version} does not support {', '.join(targets)}"
        + (" (from AMD's repository, what `gpuenv install auto` would pick)" if auto else ""),
        detail=f"{gpuinfo.describe([g for g, _ in bad], matrices)}; ROCm {release.version} ({basis(target)} target) "
        f"supports {supported}. " + " ".join(elsewhere) + release.unconfirmed("list of gfx targets")
        + gpuinfo.unconfirmed_targets([g for g, _ in bad], matrices),
        fix=_other_release_fix(matrices, targets)
        + "HSA_OVERRIDE_GFX_VERSION is an unsupported same-family workaround, not a fix.",
        gpus=gpuinfo.slots(g for g, _ in bad),
        refs=(release.source,),
    )


def _support_unconfirmed(release: RocmRelease, doubtful: list[tuple[Gpu, str]], matrices: Matrices,
                         target: Target) -> Finding:  # fmt: skip
    """The release lists the GPU's target, but only secondary sources say so (#42): not an error,
    and not silence either, since the listing is what says the GPU is supported. A warning where
    the release is installed or asked for, said as information where it is only `install auto`'s
    pick."""
    targets = sorted({gfx for _, gfx in doubtful})
    return Finding(
        severity=Severity.INFO if basis(target) == "auto" else Severity.WARNING,
        title=f"ROCm {release.version}'s support for {', '.join(targets)} is not confirmed by AMD",
        detail=f"{gpuinfo.describe([g for g, _ in doubtful], matrices)}; ROCm {release.version} "
        f"({basis(target)} target) lists {', '.join(targets)}, read from secondary sources, not confirmed by "
        "AMD: AMD's main compatibility matrix names no such target for it (the release's notes say where it was "
        "read: gpuenv matrix show rocm).",
        fix=f"Check AMD's compatibility pages for ROCm {release.version} (for Radeon and Ryzen GPUs: 'Use ROCm on "
        "Radeon and Ryzen') before relying on it.",
        gpus=gpuinfo.slots(g for g, _ in doubtful),
        refs=(release.source,),
    )


def _other_release_fix(matrices: Matrices, targets: list[str]) -> str:
    newest = [r for gfx in targets if (r := matrices.newest_rocm_for(gfx))]
    if len(newest) != len(targets):
        return "Use a GPU a ROCm release lists (`gpuenv matrix show rocm`). "
    oldest_newest = min(newest, key=lambda r: inv.version_tuple(r.version))
    route = oldest_newest.repository
    flag = route.trust_flag() if route is not None else None
    if flag is None:
        return f"Install a release that lists it: gpuenv install rocm --version {oldest_newest.version} --dry-run. "
    # Its key is pinned only when the user repeats it (#42): the command says so, not a refusal later.
    return (
        f"Install a release that lists it: gpuenv install rocm --version {oldest_newest.version} "
        f"--trust-unconfirmed-key {flag} --dry-run (its repository key's fingerprint is not "
        "confirmed by AMD: check it first). "
    )


def _unsupported_by_every_release(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    """The installed ROCm is one the matrices do not know (rocm.release-unknown says so): a GPU that
    no bundled release lists is still said to be one, as a warning, since whether that release
    served it is not known."""
    bad = [
        (g, gfx)
        for g in rocm_gpus(facts, matrices)
        if (gfx := gpuinfo.gfx_target(g, matrices)) and matrices.newest_rocm_for(gfx) is None
    ]
    if not bad:
        return
    releases = matrices.rocm_releases()
    targets = sorted({gfx for _, gfx in bad})
    installed = target.extra.get("installed") or target.version
    yield Finding(
        severity=Severity.WARNING,
        title=f"No ROCm release the matrices know supports {', '.join(targets)}",
        detail=f"{gpuinfo.describe([g for g, _ in bad], matrices)}: no release from {releases[0].version} to "
        f"{releases[-1].version} lists {', '.join(targets)}. The installed ROCm"
        + (f" {installed}" if installed else "")
        + " is not one the matrices know, so whether it serves the GPU is not judged.",
        fix="Use a GPU a ROCm release lists (`gpuenv matrix show rocm`). HSA_OVERRIDE_GFX_VERSION is an "
        "unsupported same-family workaround, not a fix.",
        gpus=gpuinfo.slots(g for g, _ in bad),
        refs=(releases[-1].source,),
    )


def _only_gpu_unsupported(facts: Facts, matrices: Matrices) -> Iterator[Finding]:
    """A box whose only GPU is an AMD iGPU that no bundled ROCm release lists (a Phoenix 780M,
    gfx1103): nothing is installed to judge, but ROCm applications built for the listed targets
    (ollama, llama.cpp's HIP build) fall back to the CPU here, which is what such reports are
    about. An error, as the catalog has it for this code: ROCm cannot serve the only GPU here."""
    if facts.gpus_of("nvidia") or facts.gpus_of("intel") or gpuinfo.amd_discrete(facts, matrices) or not facts.bus_read:
        return  # another GPU, or a bus not read whole: "the only GPU" is not known
    bad = []
    for g in gpuinfo.amd_integrated(facts, matrices):
        gfx = gpuinfo.gfx_target(g, matrices)
        if gfx and not any(r.support(gfx) for r in matrices.rocm_releases()):
            bad.append((g, gfx))
    if not bad:
        return
    default = matrices.default_rocm()
    targets = sorted({gfx for _, gfx in bad})
    wheels = [f"PyTorch {v} ROCm wheels are built for {gfx}" for gfx in targets if (v := _first_wheel(matrices, gfx))]
    yield Finding(
        severity=Severity.ERROR,
        title=f"No ROCm release lists {', '.join(targets)}, this machine's only GPU",
        detail=f"{gpuinfo.describe([g for g, _ in bad], matrices)}: no bundled ROCm release (up to {default.version}, "
        "the default) lists it, so ROCm applications built for the listed targets (ollama, llama.cpp's HIP "
        "build) do not use it and run on the CPU."
        + (f" {'; '.join(wheels)} and later (`gpuenv torch`)." if wheels else ""),
        fix="Run GPU work on a GPU a ROCm release lists (`gpuenv matrix show rocm`). "
        "HSA_OVERRIDE_GFX_VERSION makes ROCm treat it as a supported target of its family: an unsupported "
        "workaround, not a fix.",
        gpus=gpuinfo.slots(g for g, _ in bad),
        refs=(default.source,),
    )


@check(code="amd.gpu-deprecated", area="amd", needs=("matrices",), noted=True)
def gpu_deprecated(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    release = rocm_release(matrices, target)
    if release is None:
        return
    old = [(g, gfx) for g in rocm_gpus(facts, matrices) if (gfx := gpuinfo.gfx_target(g, matrices))
           and release.support(gfx) == "deprecated"]  # fmt: skip
    if not old:
        return
    targets = sorted({gfx for _, gfx in old})
    yield Finding(
        severity=Severity.WARNING,
        title=f"ROCm {release.version} supports {', '.join(targets)} as deprecated",
        detail=f"{gpuinfo.describe([g for g, _ in old], matrices)}: AMD's system requirements for ROCm "
        f"{release.version} mark it Deprecated (existing features and capabilities are maintained; no new "
        "features or optimizations; a future release removes support); AMD's compatibility matrix leaves it out."
        + " "
        + " ".join(newest_supporting(matrices, gfx) for gfx in targets),
        fix="Keep to a release that lists the GPU: later ROCm releases drop it. "
        "Pick a PyTorch wheel whose libraries still carry its kernels (`gpuenv torch`).",
        gpus=gpuinfo.slots(g for g, _ in old),
        refs=(DEPRECATED_REF,),
    )


def _first_wheel(matrices: Matrices, gfx: str) -> str | None:
    """The first bundled PyTorch release with a ROCm wheel built for gfx."""
    for version in matrices.torch_versions():
        if any(v.stack == "rocm" and gfx in v.archs for v in matrices.torch_variants(version)):
            return version
    return None


@check(code="amd.gpu-preview", area="amd", needs=("matrices",), noted=True)
def gpu_preview(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    release = rocm_release(matrices, target)
    if release is None:
        return
    for g in rocm_gpus(facts, matrices):
        gfx = gpuinfo.gfx_target(g, matrices)
        level = release.support(gfx) if gfx else None
        if level == "preview":
            terms = "as a technology preview"
        elif gfx and facts_view.off_radeon_terms(release, gfx, inv.os_id(facts) or ""):
            terms = f"on Radeon terms: Ubuntu and RHEL only, not {inv.os_label(facts)}"
        else:
            continue
        yield Finding(
            severity=Severity.WARNING,
            title=f"ROCm {release.version} supports {gfx} only {terms.split(':')[0]}",
            detail=f"{gpuinfo.describe([g], matrices)} ({gfx}): supported {terms}. Expect gaps and less testing.",
            fix="Run it on a distribution the release lists for this GPU (Ubuntu 24.04 / 22.04)."
            if level == "radeon"
            else "Fine for experiments; for production use a GPU the release fully supports.",
            gpus=gpuinfo.slots([g]),
            refs=(release.source,),
        )


def override_target(value: str) -> str | None:
    """HSA_OVERRIDE_GFX_VERSION '10.3.0' -> 'gfx1030', '9.0.10' -> 'gfx90a'; None if malformed."""
    parts = value.strip().split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    major, minor, step = (int(p) for p in parts)
    if minor > 15 or step > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


@check(code="amd.hsa-override", area="amd")
def hsa_override(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    value = (facts.environment or {}).get("HSA_OVERRIDE_GFX_VERSION")
    if not value:
        return
    release = rocm_release(matrices, target)
    gpus = rocm_gpus(facts, matrices)
    posing = override_target(value)
    unset = "unset HSA_OVERRIDE_GFX_VERSION  # and remove it from ~/.profile, ~/.bashrc or /etc/environment"
    known = [(g, gfx) for g in gpus if (gfx := gpuinfo.gfx_target(g, matrices))]
    supported = [g for g, gfx in known if release is not None and release.support(gfx)]
    unsupported = [(g, gfx) for g, gfx in known if release is not None and not release.support(gfx)]
    # A same-family override (gfx1031 posing as gfx1030) is the known unsupported workaround;
    # another family's ISA runs the wrong machine code.
    family = [gfx for _, gfx in unsupported if posing and gfx[:-1] == posing[:-1]]
    detail = f"HSA_OVERRIDE_GFX_VERSION={value} makes ROCm treat every GPU as {posing or 'another ISA'}"
    if release is not None and supported:
        detail += (
            f"; {gpuinfo.describe(supported, matrices)} is supported natively by ROCm {release.version}: "
            "the override can only break it"
        )
        fix = unset
    elif release is not None and unsupported and family and len(family) == len(unsupported):
        detail += (
            f"; {', '.join(sorted(set(family)))} is not supported by ROCm {release.version}, and {posing} is the "
            "same family: this is the known unofficial workaround (unsupported, results are yours to verify)"
        )
        fix = (
            f"Keep it only for experiments with the GPU ROCm {release.version} does not list; "
            "for a supported setup use a GPU the release lists (`gpuenv matrix show rocm`)."
        )
    elif release is not None and unsupported:
        detail += (
            f"; {', '.join(sorted({gfx for _, gfx in unsupported}))} is not supported by ROCm {release.version} and "
            f"{posing or value} is not its family: kernels of another ISA crash or compute wrong results"
        )
        fix = unset
    else:
        detail += "; which GPUs the installed ROCm supports is not known here"
        fix = unset + "\nUse it only as a same-family workaround for a GPU ROCm does not list, never for a supported one."
    yield Finding(
        severity=Severity.WARNING,
        title="HSA_OVERRIDE_GFX_VERSION is set",
        detail=detail + ".",
        fix=fix,
        gpus=gpuinfo.slots(gpus),
        refs=(OVERRIDE_REF,),
    )
