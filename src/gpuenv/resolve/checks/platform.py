"""Where gpuenv runs: WSL, containers, CPU architecture and the distribution release."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import facts_view, gpuinfo
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.facts_view import CUDA_DISTROS, CUDA_DISTROS_SOURCE, DISTRIBUTION, VENDOR
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import admits, basis, limited_out, rocm_release
from gpuenv.standins.record import replace

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.facts import Gpu
    from gpuenv.matrices import Matrices, OsSupport, RocmRelease

WSL_REF = "https://docs.nvidia.com/cuda/wsl-user-guide/index.html"
CONTAINER_REFS = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html",
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
)

# CPU architectures each stack ships for (ROCm: x86_64 only; CUDA: x86_64 and arm64 server/SBSA).
STACK_ARCHES = {"rocm": ("x86_64",), "cuda": ("x86_64", "aarch64")}


def _target_vendor_nodes(facts: Facts, target: Target) -> list[tuple[str, list[str]]]:
    """(vendor, missing device nodes) for each GPU vendor this container needs mapped in."""
    nodes = facts.device_nodes or {}
    out = []
    vendors = {g.vendor for g in facts.gpus} & {"amd", "nvidia"}
    if target.stack == "rocm":
        vendors.add("amd")
    if target.stack == "cuda":
        vendors.add("nvidia")
    for vendor in sorted(vendors):
        if vendor == "amd":
            missing = [] if nodes.get("/dev/kfd", _ABSENT).exists else ["/dev/kfd"]
            if not any(p.startswith("/dev/dri/renderD") and n.exists for p, n in nodes.items()):
                missing.append("/dev/dri/renderD*")
        else:
            # `--gpus device=1` maps /dev/nvidia1 only: any numbered node will do.
            missing = [] if nodes.get("/dev/nvidiactl", _ABSENT).exists else ["/dev/nvidiactl"]
            if not any(_numbered_nvidia(p) and n.exists for p, n in nodes.items()):
                missing.append("/dev/nvidia[0-9]*")
        out.append((vendor, missing))
    return out


class _Absent:
    exists = False


_ABSENT = _Absent()


def _numbered_nvidia(path: str) -> bool:
    """/dev/nvidia0, /dev/nvidia1, ... (not nvidiactl or nvidia-uvm)."""
    prefix = "/dev/nvidia"
    number = path[len(prefix) :]
    return path.startswith(prefix) and number.isascii() and number.isdigit()


@check(code="platform.wsl", area="platform", blocking=True)
def wsl(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if not facts.platform.wsl:
        return
    drivers = inv.kernel_driver_packages(facts)
    if drivers:
        listed = ", ".join(f"{n} {v}" for n, v in drivers.items())
        yield Finding(
            severity=Severity.ERROR,
            title="A Linux kernel GPU driver is installed inside WSL 2",
            detail=f"running under WSL 2 (kernel {facts.kernel.release}); installed: {listed}. The GPU driver "
            "comes from Windows; a Linux driver inside WSL overwrites the libcuda stub or never loads.",
            fix=f"sudo apt-get purge {' '.join(drivers)}\n"
            "Install the GPU driver on Windows; inside WSL install only the toolkit "
            "(NVIDIA: the WSL-Ubuntu CUDA repository; AMD: ROCm user space with librocdxg, no amdgpu-dkms).",
            refs=(WSL_REF,),
        )
        return
    yield Finding(
        severity=Severity.INFO,
        title="Running under WSL 2",
        detail=f"kernel {facts.kernel.release}; /dev/dxg "
        + ("present" if (facts.device_nodes or {}).get("/dev/dxg", _ABSENT).exists else "not seen")
        + ". The GPU driver comes from Windows.",
        fix="Never install a Linux GPU driver (cuda-drivers, nvidia-open, amdgpu-dkms) inside WSL; "
        "gpuenv installs only user space here.",
        refs=(WSL_REF,),
    )


_LABEL = {"amd": "AMD", "nvidia": "NVIDIA"}
# How a vendor's GPU is mapped into a container.
_MAP_IN = {
    "amd": "docker run --device /dev/kfd --device /dev/dri --group-add video --group-add render …",
    "nvidia": "on the host: sudo apt-get install nvidia-container-toolkit && "
    "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker\n"
    "then: docker run --gpus all …",
}


def _unmapped(missing: list[tuple[str, list[str]]]) -> str:
    return "; ".join(f"{_LABEL[v]}: {', '.join(m)} missing" for v, m in missing)


@check(code="platform.container", area="platform", blocking=True)
def in_container(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    kind = facts.platform.container
    if not kind:
        return
    missing = (
        [(v, m) for v, m in _target_vendor_nodes(facts, target) if m]
        if facts.device_nodes is not None
        else []
    )
    # A container sees the host's PCI bus. A vendor named only by what is installed here (a CUDA
    # image on a CPU-only CI runner), with no GPU of its own on that bus, has nothing on the host
    # to map in, as far as the facts tell: said, but no error. Not so for an explicit target,
    # nor when the bus could not be read.
    bus_judged = basis(target) != "explicit" and facts.bus_read
    hostless = [(v, m) for v, m in missing if bus_judged and not facts.gpus_of(v)]
    missing = [vm for vm in missing if vm not in hostless]
    if hostless and not missing:
        named = " or ".join(_LABEL[v] for v, _ in hostless)
        yield Finding(
            severity=Severity.INFO,
            title=f"Inside a {kind} container, with no {named} GPU to map in",
            detail=f"{_unmapped(hostless)}, and no {named} GPU is on the PCI bus this container sees (the "
            f"host's): the installed {target.stack} stack has nothing to run on. Kernel drivers belong to the host.",
            fix="Nothing to change on a host without a GPU. On one with a GPU the container does not see, "
            "map it in:\n" + "\n".join(_MAP_IN[v] for v, _ in hostless),
            refs=CONTAINER_REFS,
        )
        return
    if missing:
        yield Finding(
            severity=Severity.ERROR,
            title=f"Inside a {kind} container without the GPU device nodes mapped in",
            detail=_unmapped(missing) + ". Kernel drivers belong to the host; the container only sees mapped devices.",
            fix="Restart the container with the GPU devices mapped:\n" + "\n".join(_MAP_IN[v] for v, _ in missing),
            refs=CONTAINER_REFS,
        )
        return
    yield Finding(
        severity=Severity.INFO,
        title=f"Running inside a {kind} container",
        detail="Kernel drivers (amdgpu-dkms, the NVIDIA kernel modules) belong to the host; only user space is "
        "installed here.",
        fix="Install or upgrade the GPU driver on the host, not in the container.",
        refs=CONTAINER_REFS,
    )


@check(code="platform.arch-unsupported", area="platform", blocking=True)
def arch_unsupported(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    if not target.stack:
        return
    arches = STACK_ARCHES[target.stack]
    arch = inv.cpu_arch(facts)
    if arch is None or arch in arches:
        return  # unknown is not unsupported
    name = "ROCm" if target.stack == "rocm" else "CUDA"
    yield Finding(
        severity=Severity.ERROR,
        title=f"{name} does not support the {arch} CPU architecture",
        detail=f"CPU architecture {arch}; {name} ships for {', '.join(arches)} only "
        f"(target {target.stack}{'@' + target.version if target.version else ''}, {basis(target)}).",
        fix=f"Use a {'/'.join(arches)} machine for {name}.",
    )


def _os_name(facts: Facts) -> str:
    return inv.os_label(facts)


def _consequence(facts: Facts, matrices: Matrices, target: Target) -> tuple[Severity, str | None]:
    """How much an OS the judged release does not list matters, and where the stack came from.
    An error where it makes something fail: an install asked for (--target, a plan), or the
    installed release's packages came from the vendor's repository, which does not serve this
    OS. Otherwise (what `install auto` would pick, or a stack from the distribution's own
    packages, or of unknown origin) a warning: GPU work does not fail because of the OS."""
    if basis(target) not in ("installed", "auto"):
        return Severity.ERROR, None  # asked for (--target, a plan's judgement): an install
    origin = (
        facts_view.stack_origin(facts, matrices, target.stack or "") if basis(target) == "installed" else None
    )
    # NVIDIA's list is today's: an installed CUDA release may well have listed this OS.
    if origin == VENDOR and target.stack == "rocm":
        return Severity.ERROR, origin
    return Severity.WARNING, origin


@check(code="os.unsupported", area="platform", needs=("matrices",), blocking=True, noted=True)
def os_unsupported(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    os_id = inv.os_id(facts)
    if os_id is None:
        return  # the facts do not say which distribution: os.unknown says so
    version_id = inv.os_version(facts)
    if target.stack == "cuda":
        versions = CUDA_DISTROS.get(os_id)
        if versions is not None and not version_id:
            return  # a distribution NVIDIA supports, release not known
        major = version_id or ""
        if versions is not None and any(major == v or major.startswith(v + ".") for v in versions):
            return
        yield _cuda_unlisted(facts, matrices, target, os_id, version_id)
        return
    release = rocm_release(matrices, target)
    if release is None:
        return
    if not version_id and any(o.id == os_id for o in release.os):
        return  # a distribution the release lists, release not known
    entry = release.os_support(os_id, version_id)
    point = inv.os_point(facts, entry.version) if entry is not None else None
    out = limited_out(entry, facts_view.rocm_gpus(facts, matrices), matrices, point)[0]
    if entry is not None and out:
        yield _for_other_gpus(facts, release, entry, point, out, matrices, target)
        return
    if entry is None:
        finding = _rocm_unlisted(facts, matrices, target, release, os_id, version_id)
        # A table for this distribution no AMD page confirms (derived or copied entries:
        # matrices/README.md) may lack this release of it: said, and never more than a warning.
        # Before, such a table made the check pass in silence ("All good" on a --target).
        doubt = next((o for o in release.os if o.id == os_id and not o.confirmed), None)
        if doubt is not None:
            finding = replace(
                finding,
                severity=max(finding.severity, Severity.WARNING, key=lambda sev: sev.rank),
                detail=f"{finding.detail} ROCm {release.version}'s table for {os_id} is not fully confirmed by "
                f"AMD ({doubt.source}), so it may lack this release.",
            )
        yield finding
        return
    if point and entry.point_releases and all(inv.older(p, point) for p in entry.point_releases):
        yield Finding(
            severity=Severity.WARNING,
            title=f"{_os_name(facts)} is newer than the point releases ROCm {release.version} lists",
            detail=f"running {point}; ROCm {release.version} lists {', '.join(entry.point_releases)} for "
            f"{os_id} {entry.version}. Newer point releases usually work but are not validated.",
            fix="Nothing to do unless GPU work fails; then check for a newer ROCm release (`gpuenv matrix update`).",
            refs=(release.source,),
        )


def _seen(facts: Facts, os_id: str, version_id: str | None) -> str:
    """What os-release said, and the base a derivative was judged as."""
    if os_id == facts.os.id:
        return f"os-release ID={os_id} VERSION_ID={version_id}"
    return f"os-release ID={facts.os.id} VERSION_ID={facts.os.version_id}, judged as its base {os_id} {version_id or '?'}"


_COMMUNITY = "not on {vendor}'s support list; community-supported"


def _cuda_unlisted(
    facts: Facts, matrices: Matrices, target: Target, os_id: str, version_id: str | None
) -> Finding:
    severity, origin = _consequence(facts, matrices, target)
    listed = ", ".join(f"{k} {'/'.join(v)}" for k, v in CUDA_DISTROS.items())
    seen = _seen(facts, os_id, version_id)
    if severity is Severity.ERROR:
        return Finding(
            severity=severity,
            title=f"{_os_name(facts)} is not a distribution NVIDIA's CUDA repositories support",
            detail=f"{seen}; supported: {listed}",
            fix="Install on a supported release (e.g. Ubuntu 24.04 LTS), or use a container image of one.",
            refs=(CUDA_DISTROS_SOURCE,),
        )
    if origin == DISTRIBUTION:
        title = f"The NVIDIA driver on {_os_name(facts)} is the distribution's: {_COMMUNITY.format(vendor='NVIDIA')}"
        what = "the driver installed here comes from the distribution's own packages, which it supports"
    else:
        title = f"CUDA from NVIDIA's repository would not install on {_os_name(facts)}"
        what = (
            "nothing here fails for it: an installed driver, and a PyTorch wheel's own CUDA, run on any distribution; "
            "an older CUDA release may have listed it"
        )
    return Finding(
        severity=severity,
        title=title,
        detail=f"{seen}; NVIDIA's repositories serve: {listed}. {what[0].upper() + what[1:]}.",
        fix="Nothing to do while GPU work runs. To install CUDA from NVIDIA's repository, use a listed release "
        "(e.g. Ubuntu 24.04 LTS) or a container image of one; `gpuenv doctor --target cuda` judges an install.",
        refs=(CUDA_DISTROS_SOURCE,),
    )


def _rocm_unlisted(
    facts: Facts, matrices: Matrices, target: Target, release: RocmRelease, os_id: str, version_id: str | None
) -> Finding:
    severity, origin = _consequence(facts, matrices, target)
    listed = ", ".join(
        f"{o.id} {'/'.join(o.point_releases) if o.point_releases else o.version}" for o in release.os
    )
    seen = _seen(facts, os_id, version_id)
    newest = facts_view.newest_rocm_listing(facts, matrices)
    judged = f"{os_id} {version_id}" if version_id else os_id
    newest_line = (
        f"the newest ROCm release that lists {judged} is {newest.version}"
        if newest is not None
        else f"no ROCm release the matrices know ({matrices.rocm_releases()[0].version} to "
        f"{matrices.rocm_releases()[-1].version}) lists {judged}"
    )
    if severity is Severity.ERROR:
        installed = basis(target) == "installed"
        return Finding(
            severity=severity,
            title=f"{_os_name(facts)} is not supported by ROCm {release.version}"
            + (" (installed from AMD's repository)" if installed else ""),
            detail=f"{seen}; ROCm {release.version} supports: {listed}; {newest_line}.",
            fix=f"Install ROCm {release.version} on a supported release (e.g. Ubuntu 24.04 or 22.04), "
            "or target a ROCm release that lists this one (`gpuenv matrix show rocm`).",
            refs=(release.source,),
        )
    if origin == DISTRIBUTION:
        return Finding(
            severity=severity,
            title=f"ROCm {release.version} on {_os_name(facts)} is the distribution's: {_COMMUNITY.format(vendor='AMD')}",
            detail=f"{seen}; ROCm {release.version} here comes from the distribution's own packages, which it "
            f"supports; AMD's repository serves: {listed}; {newest_line}.",
            fix="Nothing to do while GPU work runs; report ROCm problems to the distribution's packagers. AMD's "
            "own packages need a release it lists (`gpuenv doctor --target rocm` judges an install).",
            refs=(release.source,),
        )
    return Finding(
        severity=severity,
        title=f"ROCm {release.version} from AMD's repository would not install here; {newest_line}",
        detail=f"{seen}; ROCm {release.version} supports: {listed}. Nothing is installed from AMD's repository "
        "that this makes fail.",
        fix="To install ROCm from AMD's repository, use a release it lists (`gpuenv matrix show rocm`), or "
        + (
            f"target ROCm {newest.version} (gpuenv doctor --target rocm@{newest.version})."
            if newest
            else "a container image of a listed distribution."
        ),
        refs=(release.source,),
    )


def _for_other_gpus(
    facts: Facts,
    release: RocmRelease,
    entry: OsSupport,
    point: str | None,
    out: tuple[Gpu, ...],
    matrices: Matrices,
    target: Target,
) -> Finding:
    """The release lists this OS, or this point release of it, for other GPUs only (10.0 on Debian
    12: named Instinct models; 7.14 on RHEL 9.4: Instinct GPUs except the MI350P). An error where
    AMD's table is confirmed, a warning where the table itself is not (10.0's)."""
    narrower = entry.point_limit(point)
    limit = narrower or entry.gpus_only
    assert limit is not None  # limited_out left GPUs out
    where = _os_name(facts)
    if narrower is not None and point is not None and point not in where:
        where += f" ({entry.id} {point})"  # the point release is what the limit is about
    whole = (
        f" (point release {point}; {entry.id} {entry.version} as a whole: {entry.gpus_only.describe()})"
        if narrower is not None and entry.gpus_only is not None
        else ""
    )
    these = "; ".join(f"{gpuinfo.describe([g], matrices)}: {_what(g, matrices)}" for g in out)
    return Finding(
        severity=_consequence(facts, matrices, target)[0] if entry.confirmed else Severity.WARNING,
        title=f"ROCm {release.version} supports {where} only for {limit.describe()}",
        detail=f"AMD's table lists {where} for these GPUs only{whole}, and this machine's is not one of them "
        f"({these})."
        + ("" if entry.confirmed else f" ROCm {release.version}'s OS table is not confirmed by AMD ({entry.source})."),
        fix=f"Install ROCm {release.version} on a distribution it supports for this GPU, or target a ROCm "
        "release that supports it on this one (`gpuenv matrix show rocm`).",
        gpus=gpuinfo.slots(out),
        refs=(entry.source,),
    )


def _what(gpu: Gpu, matrices: Matrices) -> str:
    """'a Radeon GPU', 'Instinct MI325X' (what the limit judged it by)."""
    models = sorted(gpuinfo.instinct_models(gpu, matrices))
    if models:
        return "Instinct " + "/".join(models)
    gpu_class = gpuinfo.gpu_class(gpu, matrices)
    return "a Ryzen APU" if gpu_class == "ryzen" else f"a {(gpu_class or '?').capitalize()} GPU"


@check(code="os.unknown", area="platform", needs=("matrices",), not_judged=True)
def os_unknown(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    """What os.unsupported passes over for want of facts: said, since unknown is not supported."""
    why = _os_not_judged(facts, matrices, target)
    if why is None:
        return
    name = "ROCm " + (target.version or "") if target.stack == "rocm" else "CUDA"
    yield Finding(
        severity=Severity.WARNING,
        title=f"Whether {name.strip()} supports this OS was not judged",
        detail=f"{why} (os-release ID={facts.os.id or '?'}, VERSION_ID={facts.os.version_id or '?'}, "
        f"PRETTY_NAME={facts.os.pretty_name or '?'}).",
        fix="Give gpuenv the machine's /etc/os-release (run it on the machine, or `gpuenv probe --json` there), "
        "and compare with `gpuenv matrix show rocm` / NVIDIA's supported distributions.",
    )


def _os_not_judged(facts: Facts, matrices: Matrices, target: Target) -> str | None:
    """Why the OS could not be judged against the target, or None when it was (or there is no
    target, or its release is unknown: rocm.release-unknown says so)."""
    if target.stack not in ("rocm", "cuda"):
        return None
    os_id = inv.os_id(facts)
    if os_id is None:
        return "the facts do not say which distribution this is"
    version_id = inv.os_version(facts)
    if target.stack == "cuda":
        return "its release is not known" if os_id in CUDA_DISTROS and not version_id else None
    release = rocm_release(matrices, target)
    if release is None:
        return None
    listed = [o for o in release.os if o.id == os_id]
    if listed and not version_id:
        return f"ROCm {release.version} lists {os_id}, and this machine's release of it is not known"
    entry = release.os_support(os_id, version_id)
    if entry is None:
        return None
    point = inv.os_point(facts, entry.version)
    out, unknown = limited_out(entry, facts_view.rocm_gpus(facts, matrices), matrices, point)
    if out or not unknown:
        return None
    limit = entry.point_limit(point) or entry.gpus_only
    vague = [g for g in unknown if limit is not None and admits(limit, g, matrices) is None]
    if limit is not None and vague:
        return (
            f"ROCm {release.version} supports {os_id} {point if entry.point_limit(point) else entry.version} "
            f"only for {limit.describe()}, and whether {gpuinfo.describe(vague, matrices)} is one is not known "
            "(the bundled GPU tables do not name its class or model)"
        )
    # The rest are GPUs some point release leaves out, on a machine whose point release is not known.
    narrower = "; ".join(f"{p}: {x.describe()}" for p, x in (entry.gpus_only_by_point or {}).items())
    return (
        f"ROCm {release.version} lists some point releases of {os_id} {entry.version} for fewer GPUs "
        f"({narrower}), and this machine's point release is not known"
    )


@check(code="os.point-release", area="platform", needs=("matrices",), noted=True)
def os_point_release(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    release = rocm_release(matrices, target)
    if release is None:
        return
    entry = release.os_support(inv.os_id(facts) or "", inv.os_version(facts))
    point = inv.os_point(facts, entry.version) if entry is not None else None
    if entry is None or not point or not entry.point_releases:
        return
    oldest = min(entry.point_releases, key=inv.version_tuple)
    if not inv.older(point, oldest):
        return
    # The RDNA-OS footnote of AMD's system requirements: RDNA4 needs the point release's newer
    # kernel and firmware. Other GPUs run the same GA kernel on any point release: apt upgrades
    # it, and no warning is worth its noise.
    rdna4 = [g for g in facts.gpus_of("amd") if (gpuinfo.gfx_target(g, matrices) or "").startswith("gfx12")]
    if not rdna4:
        return
    needs = gpuinfo.describe(rdna4, matrices)
    yield Finding(
        severity=Severity.WARNING,
        title=f"RDNA4 GPUs need {entry.id} {oldest} or newer for ROCm {release.version}",
        detail=f"{needs}; running {point}; ROCm {release.version} lists {', '.join(entry.point_releases)} for "
        f"{entry.id} {entry.version}, and RDNA4 needs the newer point release's kernel and firmware.",
        fix="sudo apt-get update && sudo apt-get dist-upgrade  # brings the point release\nsudo reboot",
        gpus=gpuinfo.slots(rdna4),
        refs=(release.source,),
    )
