"""DKMS state of kernel modules, as ``dkms status`` would list it, read from /var/lib/dkms."""

from __future__ import annotations

from gpuenv.facts import AkmodsFailure, DkmsEntry
from gpuenv.probe.host import Sysroot

DKMS = "/var/lib/dkms"
# akmods (RPM Fusion's kmod builder on Fedora and its kin) keeps one directory per akmod, and a
# build that failed leaves VERSION-RELEASE-for-KERNEL.failed.log there (what image builders such
# as Universal Blue's print when the module is missing after `akmods --force`).
AKMODS = "/var/cache/akmods"
_FAILED = ".failed.log"
# Entries of the DKMS tree that are neither versions nor kernels: a module's saved in-tree copy
# (MODULE/original_module/KERNEL/ARCH), and a version's build directory (VERSION/build, left
# behind with its make.log when a build fails) and source link.
_NOT_VERSIONS = ("original_module",)
_NOT_KERNELS = ("source", "build", "tarball")


def scan(host: Sysroot) -> tuple[DkmsEntry, ...] | None:
    """One entry per module, version and kernel; None when DKMS is not installed."""
    if not host.is_dir(DKMS):
        return None
    out: list[DkmsEntry] = []
    for module in host.listdir(DKMS):
        mdir = f"{DKMS}/{module}"
        if not host.is_dir(mdir) or host.is_link(mdir):
            continue
        entries = host.listdir(mdir)
        installed = _installed_links(host, mdir, entries)
        for version in entries:
            vdir = f"{mdir}/{version}"
            if (
                version.startswith("kernel-")
                or version in _NOT_VERSIONS
                or not host.is_dir(vdir)
                or host.is_link(vdir)
            ):
                continue
            # `dkms status` calls a version whose source tree is gone "broken".
            broken = host.is_link(f"{vdir}/source") and not host.exists(f"{vdir}/source")
            kernels = [k for k in host.listdir(vdir) if k not in _NOT_KERNELS and host.is_dir(f"{vdir}/{k}")]
            if not kernels:
                out.append(DkmsEntry(module, version, None, "broken" if broken else "added"))
                continue
            for kernel in kernels:
                archs = host.listdir(f"{vdir}/{kernel}")
                built = any(host.is_dir(f"{vdir}/{kernel}/{a}/module") for a in archs)
                if broken:
                    status = "broken"
                elif (version, kernel) in installed:
                    status = "installed"
                else:
                    status = "built" if built else "added"
                out.append(DkmsEntry(module, version, kernel, status))
    return tuple(out)


def _installed_links(host: Sysroot, mdir: str, entries: list[str]) -> set[tuple[str, str]]:
    """(version, kernel) pairs DKMS marks installed: kernel-KREL-ARCH -> VERSION/KREL/ARCH."""
    out = set()
    for name in entries:
        if not name.startswith("kernel-"):
            continue
        target = host.readlink(f"{mdir}/{name}")
        if not target:
            continue
        parts = [p for p in target.split("/") if p and p != "."]
        if len(parts) >= 3:
            out.add((parts[-3], parts[-2]))
    return out


def akmods_failed(host: Sysroot) -> tuple[AkmodsFailure, ...] | None:
    """The builds akmods left a failure log for; None when there is no akmods cache."""
    if not host.is_dir(AKMODS):
        return None
    out: list[AkmodsFailure] = []
    for module in sorted(host.listdir(AKMODS)):
        mdir = f"{AKMODS}/{module}"
        if not host.is_dir(mdir) or host.is_link(mdir):
            continue
        for name in sorted(host.listdir(mdir)):
            version, sep, kernel = name.removesuffix(_FAILED).partition("-for-")
            if name.endswith(_FAILED) and sep and version and kernel:
                out.append(AkmodsFailure(module, version, kernel))
    return tuple(out)
