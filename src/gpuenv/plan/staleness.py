"""The facts a plan records and `apply` compares: what the plan depends on, and only what reads
the same whoever probes.

A plan made by a normal user is applied by root (the README's `gpuenv plan`, then
`sudo gpuenv apply`). Some facts differ by who probes, not by machine: the hypervisor's name
(its ACPI tables are readable only by root), the Python on the PATH and its packages, the
environment and what it points at, whether NVML or amd-smi answer, whether a device node opens
for this account. A digest over those calls every such plan stale. This one covers the machine
itself: its architecture, OS, kernel, platform kind, GPUs and their bound drivers, the driver
versions the kernel reports, the packages and apt's sources, and the plan's user with its
groups. The toolkits are left out too: an nvcc found on the PATH is part of them, and sudo's PATH
is not the user's.

Nothing is lost by leaving the rest out: `apply` also makes the plan again from the facts probed
now and refuses unless it is the file's to the byte (``admission.edited``), so any fact the plan
really depends on is held to it there.
"""

from __future__ import annotations

from gpuenv.facts import Facts, Gpu


def _gpu(g: Gpu) -> dict[str, object]:
    return {
        "vendor": g.vendor,
        "pci_id": g.pci_id,
        "pci_slot": g.pci_slot,
        "kernel_driver": None if g.driver_unknown else g.kernel_driver,
        "driver_unknown": g.driver_unknown,
    }


def stable_view(facts: Facts) -> dict[str, object]:
    """The part of the facts that is the same whoever probes, as plain data."""
    from gpuenv.facts import to_dict

    k, p = facts.kernel, facts.platform
    view: dict[str, object] = {
        "arch": facts.host.arch,
        "os": to_dict(facts.os),
        "kernel": {
            "release": k.release,
            "headers_installed": k.headers_installed,
            "secure_boot": k.secure_boot,
            "modules_loaded": to_dict(k.modules_loaded),
            "modules_blacklisted": to_dict(k.modules_blacklisted),
            "dkms": to_dict(k.dkms),
        },
        # The kind of place it runs in; which hypervisor it is needs root to read, and no plan
        # depends on it.
        "platform": {"container": p.container, "wsl": p.wsl, "vm": p.virtualization is not None},
        "gpus": [_gpu(g) for g in facts.gpus],
        "nvidia": None
        if facts.nvidia is None
        else {"driver_version": facts.nvidia.driver_version, "kernel_module": facts.nvidia.kernel_module,
              "module_version": facts.nvidia.module_version},
        "amd": None if facts.amd is None else {"driver_version": facts.amd.driver_version, "kfd": facts.amd.kfd},
        "packages": to_dict(facts.packages),
        "apt_sources": to_dict(facts.apt_sources),
        "user": to_dict(facts.user),
    }  # fmt: skip
    return view


def facts_digest(facts: Facts) -> str:
    """sha256 of the stable view, canonical JSON: what a plan records as facts_digest."""
    import json

    from gpuenv.standins.checksum import sha256_hex

    canonical = json.dumps(stable_view(facts), sort_keys=True, separators=(",", ":"))
    return "sha256:" + sha256_hex(canonical.encode())
