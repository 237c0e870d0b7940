"""AMD GPUs under ROCm: the amdgpu driver, /dev/kfd, device permissions, gfx support, overrides."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import basis, rocm_release

PREREQ_REF = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html"
OVERRIDE_REF = "https://github.com/ROCm/TheRock/issues/1719"
# Radeon (consumer and workstation) GPUs are supported on fewer distributions than Instinct
# (ROCm system requirements footnote: Ubuntu 24.04 / 22.04.5 and RHEL 9.6 only).
RADEON_OS = ("ubuntu", "rhel")


def rocm_gpus(facts: Facts, matrices) -> tuple:
    """The AMD GPUs ROCm would run on: the discrete ones, else integrated ones (APU-only boxes)."""
    return inv.amd_discrete(facts, matrices) or inv.amd_integrated(facts, matrices)


def _relevant(facts: Facts, matrices, target: Target) -> bool:
    """ROCm matters here: an AMD discrete GPU, or a ROCm target/stack on AMD hardware."""
    return bool(inv.amd_discrete(facts, matrices)) or (target.stack == "rocm" and bool(facts.gpus_of("amd")))


def _amdgpu_loaded(facts: Facts) -> bool:
    return bool(facts.module_loaded("amdgpu")) or any(
        g.kernel_driver == "amdgpu" for g in facts.gpus_of("amd")
    )


@check(code="amd.driver-missing", area="amd")
def driver_missing(facts: Facts, matrices, target: Target):
    bare = [g for g in inv.amd_discrete(facts, matrices) if g.kernel_driver != "amdgpu"]
    if not bare:
        return
    others = sorted({g.kernel_driver for g in bare if g.kernel_driver})
    blacklisted = "amdgpu" in (facts.kernel.modules_blacklisted or ())
    hosted = inv.hosted(facts)
    yield Finding(
        code="amd.driver-missing",
        severity=Severity.ERROR,
        title="AMD discrete GPU without the amdgpu driver",
        detail=f"{inv.describe(bare, matrices)}: "
        + (f"bound to {', '.join(others)}" if others else "no driver bound")
        + ("; amdgpu is blacklisted in /etc/modprobe.d" if blacklisted else ""),
        fix=(
            "Load amdgpu on the host (the container shares the host's kernel)."
            if hosted
            else (
                "Remove the amdgpu blacklist entry from /etc/modprobe.d, then: sudo update-initramfs -u && sudo reboot"
                if blacklisted
                else "sudo modprobe amdgpu && sudo dmesg | grep -i amdgpu  # why it did not bind\n"
                "Install the driver ROCm pairs with: gpuenv install rocm --dry-run"
            )
        ),
        gpus=inv.slots(bare),
    )


@check(code="amd.kfd-missing", area="amd")
def kfd_missing(facts: Facts, matrices, target: Target):
    if facts.platform.wsl or not _amdgpu_loaded(facts) or not _relevant(facts, matrices, target):
        return
    node = (facts.device_nodes or {}).get("/dev/kfd")
    kfd = facts.amd.kfd if facts.amd and facts.amd.kfd is not None else (node.exists if node else None)
    if kfd is not False:
        return
    container = facts.platform.container
    yield Finding(
        code="amd.kfd-missing",
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
        gpus=inv.slots(rocm_gpus(facts, matrices)),
        refs=(PREREQ_REF,),
    )


@check(code="amd.no-device-access", area="amd", needs=("user", "device_nodes"))
def no_device_access(facts: Facts, matrices, target: Target):
    user = facts.user
    if user.uid == 0 or facts.platform.wsl or not _relevant(facts, matrices, target):
        return
    nodes = {
        p: n
        for p, n in facts.device_nodes.items()
        if n.exists and (p == "/dev/kfd" or p.startswith("/dev/dri/renderD"))
    }
    if not nodes:
        return
    denied = []
    for path, n in sorted(nodes.items()):
        if n.accessible is not None:
            if not n.accessible:
                denied.append(path)
            continue
        world_rw = bool(n.mode) and n.mode[-1] in "67"
        if not world_rw and n.group and n.group not in user.groups:
            denied.append(path)
    missing_groups = [g for g in ("render", "video") if g not in user.groups]
    if not denied:
        return
    name = user.name or "$USER"
    groups = ",".join(missing_groups) or "render,video"
    yield Finding(
        code="amd.no-device-access",
        severity=Severity.ERROR,
        title=f"User {name} cannot open the AMD GPU device nodes",
        detail=f"cannot open {', '.join(denied)} ("
        + ", ".join(f"{p} group {nodes[p].group or '?'} mode {nodes[p].mode or '?'}" for p in denied)
        + f"); {name} is in groups: {', '.join(user.groups) or 'none'}.",
        fix=f"sudo usermod -aG {groups} {name}\nthen log out and in again (group membership applies at login)",
        refs=(PREREQ_REF,),
    )


@check(code="amd.gpu-unsupported", area="amd", needs=("matrices",))
def gpu_unsupported(facts: Facts, matrices, target: Target):
    release = rocm_release(matrices, target)
    if release is None:
        return
    bad = []
    for g in rocm_gpus(facts, matrices):
        gfx = inv.gfx_target(g, matrices)
        if gfx and release.support(gfx) is None:
            bad.append((g, gfx))
    if not bad:
        return
    supported = ", ".join(sorted(release.gpus))
    yield Finding(
        code="amd.gpu-unsupported",
        severity=Severity.ERROR,
        title=f"ROCm {release.version} does not support {', '.join(sorted({gfx for _, gfx in bad}))}",
        detail=f"{inv.describe([g for g, _ in bad], matrices)}; ROCm {release.version} ({basis(target)} target) "
        f"supports {supported}.",
        fix="Use a ROCm release that lists this GPU (`gpuenv matrix show rocm`), or a supported GPU. "
        "HSA_OVERRIDE_GFX_VERSION is an unsupported same-family workaround, not a fix.",
        gpus=inv.slots(g for g, _ in bad),
        refs=(release.source,),
    )


@check(code="amd.gpu-preview", area="amd", needs=("matrices",))
def gpu_preview(facts: Facts, matrices, target: Target):
    release = rocm_release(matrices, target)
    if release is None:
        return
    for g in rocm_gpus(facts, matrices):
        gfx = inv.gfx_target(g, matrices)
        level = release.support(gfx) if gfx else None
        if level == "preview":
            terms = "as a technology preview"
        elif level == "radeon" and facts.os.id not in RADEON_OS:
            terms = f"on Radeon terms: Ubuntu and RHEL only, not {facts.os.pretty_name or facts.os.id}"
        else:
            continue
        yield Finding(
            code="amd.gpu-preview",
            severity=Severity.WARNING,
            title=f"ROCm {release.version} supports {gfx} only {terms.split(':')[0]}",
            detail=f"{inv.describe([g], matrices)} ({gfx}): supported {terms}. Expect gaps and less testing.",
            fix="Run it on a distribution the release lists for this GPU (Ubuntu 24.04 / 22.04)."
            if level == "radeon"
            else "Fine for experiments; for production use a GPU the release fully supports.",
            gpus=inv.slots([g]),
            refs=(release.source,),
        )


@check(code="amd.hsa-override", area="amd")
def hsa_override(facts: Facts, matrices, target: Target):
    value = (facts.environment or {}).get("HSA_OVERRIDE_GFX_VERSION")
    if not value:
        return
    release = rocm_release(matrices, target)
    gpus = rocm_gpus(facts, matrices)
    supported = [
        g
        for g in gpus
        if release is not None and (gfx := inv.gfx_target(g, matrices)) and release.support(gfx)
    ]
    detail = f"HSA_OVERRIDE_GFX_VERSION={value} makes ROCm treat every GPU as another ISA"
    if supported:
        detail += f"; {inv.describe(supported, matrices)} is supported natively by ROCm {release.version}: the override only breaks it"
    else:
        detail += "; it masks a GPU ROCm does not support (crashes or wrong results are yours to debug)"
    yield Finding(
        code="amd.hsa-override",
        severity=Severity.WARNING,
        title="HSA_OVERRIDE_GFX_VERSION is set",
        detail=detail + ".",
        fix="unset HSA_OVERRIDE_GFX_VERSION  # and remove it from ~/.profile, ~/.bashrc or /etc/environment",
        gpus=inv.slots(gpus),
        refs=(OVERRIDE_REF,),
    )
