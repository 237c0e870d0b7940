"""The probe layer: reads one machine (or a sysroot) into ``gpuenv.facts.Facts``.

Each source is a small module; ``collect`` runs them all. A failing probe is recorded in
``Facts.errors`` and the others go on: ``collect`` never raises for what it finds on a machine.
"""

from __future__ import annotations

from gpuenv.facts import OS, Amd, Facts, Gpu, Kernel, Nvidia, Platform, ProbeError, ProbeNote, Toolkits
from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol, TypeVar

    from gpuenv.facts import DeviceNode

    _T = TypeVar("_T")
    _D = TypeVar("_D")

    class Guard(Protocol):
        """``collect``'s guard: ``fn()``, or ``default`` with the failure recorded."""

        def __call__(self, name: str, fn: Callable[[], _T], default: _D) -> _T | _D: ...

__all__ = ["collect", "Sysroot", "RootError"]


class RootError(ValueError):
    """``--root`` is not a directory."""


def collect(root: str | None = None, user: str | None = None, python: str | None = None) -> Facts:
    """Facts of the live machine, or of the sysroot ``root`` (live sources off).

    ``user`` names the user whose groups and device access are judged (read from the machine's
    /etc/passwd and /etc/group); ``python`` is another interpreter whose environment is probed.
    Raises RootError only for a ``root`` that is not a directory; everything found on the
    machine, however broken, comes back as facts and ``errors``.
    """
    import os

    if root is not None and not os.path.isdir(root):
        raise RootError(f"--root {root}: not a directory")
    host = Sysroot.at(root)
    errors: list[ProbeError] = []
    notes: list[ProbeNote] = []

    def guard(name: str, fn: Callable[[], _T], default: _D) -> _T | _D:  # fn() or default, with the failure recorded
        try:
            return fn()
        except Exception as exc:  # a probe failure is a result, never an abort
            errors.append(ProbeError(name, f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)))
            return default

    from gpuenv.probe import (
        apt_prefs,
        apt_sources,
        devices,
        dpkg,
        libraries,
        osinfo,
        platform,
        python_env,
        toolchain,
        toolkits,
        users,
    )
    from gpuenv.probe import environment as env_probe

    host_facts = osinfo.probe_host(host, errors)
    os_facts = guard("os", lambda: osinfo.probe_os(host), OS(id="unknown", version_id=None))
    kernel_facts = _kernel(host, guard)
    platform_facts = guard(
        "platform", lambda: platform.probe(host, kernel_facts.release), Platform(container=None, wsl=False)
    )
    packages = guard("dpkg", lambda: dpkg.probe(host), None)
    installed = packages.installed if packages else {}
    user_facts = guard("users", lambda: users.probe(host, user), None)
    nodes = guard("devices", lambda: devices.probe(host, user_facts, host.live and user is None), None)
    gpus, nvidia, amd = _gpus(host, guard, errors, nodes, notes)
    toolkit_facts = guard("toolkits", lambda: toolkits.probe(host, installed, errors), Toolkits())
    environment = _environment(host)
    python_facts = guard("python", lambda: python_env.probe(host, python, errors, installed), None)
    toolkit_facts = toolkits.with_pip(toolkit_facts, python_facts)
    sources = guard("apt_sources", lambda: apt_sources.probe(host, errors), None)
    toolkit_facts = toolkits.with_origin(toolkit_facts, packages, sources)
    return Facts(
        host=host_facts,
        os=os_facts,
        kernel=kernel_facts,
        platform=platform_facts,
        gpus=gpus,
        collected_at=_now(),
        gpuenv_version=_version(),
        nvidia=nvidia,
        amd=amd,
        toolkits=toolkit_facts,
        packages=packages,
        apt_sources=sources,
        user=user_facts,
        device_nodes=nodes,
        python=python_facts,
        environment=environment,
        libraries=guard(
            "libraries", lambda: libraries.scan(host, _ld_library_path() if host.live else None, errors), None
        ),
        toolchain=guard("toolchain", lambda: toolchain.probe(host, installed, toolkit_facts), None),
        path_targets=guard("path_targets", lambda: env_probe.path_targets(host, environment), None),
        apt_pins=guard("apt_pins", lambda: apt_prefs.probe(host, errors), None),
        errors=tuple(errors),
        notes=tuple(notes) or None,
        downloads=_downloads(host),
    )


def _kernel(host: Sysroot, guard: Guard) -> Kernel:
    from gpuenv.probe import dkms, kernel

    release = guard("kernel.release", lambda: kernel.release(host), "unknown")
    cmdline = guard("kernel.cmdline", lambda: _stripped(host.read_optional("/proc/cmdline")), None)

    def modules() -> tuple[str, ...] | None:
        text = host.read_optional("/proc/modules")
        return None if text is None else kernel.parse_proc_modules(text)

    def tainted() -> int | None:
        text = host.read_optional("/proc/sys/kernel/tainted")
        return None if text is None else kernel.parse_tainted(text)

    return Kernel(
        release=release,
        cmdline=cmdline,
        headers_installed=guard("kernel.headers", lambda: kernel.headers_installed(host, release), None)
        if release != "unknown"
        else None,
        secure_boot=guard("kernel.secure_boot", lambda: kernel.secure_boot(host), None),
        modules_loaded=guard("kernel.modules", modules, None),
        modules_blacklisted=guard("kernel.blacklist", lambda: kernel.blacklisted(host, cmdline), None),
        tainted=guard("kernel.tainted", tainted, None),
        dkms=guard("dkms", lambda: dkms.scan(host), None),
        akmods_failed=guard("akmods", lambda: dkms.akmods_failed(host), None),
    )


def _gpus(
    host: Sysroot, guard: Guard, errors: list[ProbeError], nodes: dict[str, DeviceNode] | None,
    notes: list[ProbeNote],
) -> tuple[tuple[Gpu, ...], Nvidia, Amd]:
    from gpuenv.probe import amdsmi, kfd, nvidia, nvml, pci
    from gpuenv.standins import record as records

    devs = guard("pci", lambda: pci.scan(host, errors), [])
    names = guard("pci.ids", lambda: pci.pci_names(host, devs), {})
    gpus: list[Gpu] = [
        Gpu(
            vendor=pci.VENDORS[d.vendor],
            pci_id=f"{d.vendor}:{d.device}",
            subsystem_id=d.subsystem,
            pci_slot=d.slot,
            revision=d.revision,
            pci_class=d.pci_class,
            name=names.get((d.vendor, d.device)),
            kernel_driver=d.driver,
            sources=("sysfs",),
        )
        for d in devs
    ]

    # values: Gpu fields by keyword (name, memory_mib, gfx_target, ...), each of its own type.
    def merge(slot: str | None, pci_id: str | None, vendor: str, source: str, **values: Any) -> None:
        values = {k: v for k, v in values.items() if v is not None}
        for i, g in enumerate(gpus):
            if slot is not None and g.pci_slot == slot:
                # One PCI function can be several KFD nodes (MI300X compute partitions): list a
                # source once.
                sources = g.sources if source in g.sources else (*g.sources, source)
                gpus[i] = records.replace(g, **values, sources=sources)
                return
        if pci_id is not None:
            gpus.append(Gpu(vendor=vendor, pci_id=pci_id, pci_slot=slot, sources=(source,), **values))

    for node in guard("kfd", lambda: kfd.scan(host, errors), None) or ():
        merge(
            node.pci_slot, node.pci_id, "amd", "kfd",
            gfx_target=node.gfx_target, memory_mib=node.memory_mib, integrated=node.integrated,
        )  # fmt: skip

    # NVIDIA: files first, NVML (live only, and only when there is something NVIDIA to ask).
    module_version, flavour = guard(
        "nvidia.proc",
        lambda: nvidia.parse_proc_version(host.read_optional("/proc/driver/nvidia/version") or ""),
        (None, None),
    )
    sys_version = guard(
        "nvidia.module", lambda: _stripped(host.read_optional("/sys/module/nvidia/version")), None
    )
    lib_version = guard("nvidia.library", lambda: nvidia.library_version(host), None)
    if not host.live:
        nvml_result = nvml.NvmlResult("not_queried" if nvidia.library_present(host) else "not_installed")
    elif any(g.vendor == "nvidia" for g in gpus) or nvidia.library_present(host, _ld_library_path()):
        nvml_result = guard("nvml", nvml.query, None) or nvml.NvmlResult(f"error: {errors[-1].message}")
    else:
        nvml_result = nvml.NvmlResult("not_installed")
    for g in nvml_result.gpus:
        merge(
            g.pci_slot, g.pci_id, "nvidia", "nvml",
            name=g.name, compute_capability=g.compute_capability, memory_mib=g.memory_mib, uuid=g.uuid,
        )  # fmt: skip
    nvidia_facts = Nvidia(
        driver_version=nvml_result.driver_version or lib_version,
        cuda_driver_version=nvml_result.cuda_driver_version,
        kernel_module=flavour,
        module_version=sys_version or module_version,
        nvml=nvml_result.state,
        persistence_mode=nvml_result.persistence_mode,
    )

    # AMD: the amdgpu module's version exists only for the DKMS (out-of-tree) driver.
    amd_version = guard(
        "amd.module", lambda: _stripped(host.read_optional("/sys/module/amdgpu/version")), None
    )
    if not host.live:
        smi = amdsmi.SmiResult("not_queried" if host.is_dir(amdsmi.ROCM_COPY) else "not_installed")
    elif any(g.vendor == "amd" for g in gpus):
        smi = guard("amdsmi", amdsmi.query, None) or amdsmi.SmiResult(f"error: {errors[-1].message}")
    else:
        smi = amdsmi.SmiResult("not_queried" if guard("amdsmi", amdsmi.available, False) else "not_installed")
    if smi.note:
        notes.append(ProbeNote("amdsmi", smi.note))
    for s in smi.gpus:
        merge(s.pci_slot, None, "amd", "amdsmi", name=s.name, memory_mib=s.memory_mib)
    kfd_node = (nodes or {}).get("/dev/kfd")
    amd_facts = Amd(
        driver_version=amd_version or smi.driver_version,
        kfd=kfd_node.exists if kfd_node is not None else None,
        amdsmi=smi.state,
    )
    return tuple(gpus), nvidia_facts, amd_facts


def _environment(host: Sysroot) -> dict[str, str] | None:
    if not host.live:
        return None
    import os

    from gpuenv.probe.environment import select

    return select(dict(os.environ))


def _downloads(host: Sysroot) -> dict[str, bool] | None:
    if not host.live:
        return None
    import os

    from gpuenv.probe.environment import downloads

    return downloads(dict(os.environ))


def _ld_library_path() -> list[str]:
    import os

    return [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]


def _stripped(text: str | None) -> str | None:
    return text.strip() or None if text is not None else None


def _now() -> str:
    import time  # not datetime: 3 ms of imports on every probe for one timestamp

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _version() -> str:
    from gpuenv import __version__

    return __version__
