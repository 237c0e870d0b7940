"""AMD KFD topology (/sys/class/kfd/kfd/topology/nodes/N): the gfx target of each GPU node,
matched to its PCI function through the node's ``domain`` and ``location_id``."""

from __future__ import annotations

import re

from gpuenv.probe.host import Sysroot
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import ProbeError

TOPOLOGY = "/sys/class/kfd/kfd/topology/nodes"
_INT = r"-?[0-9]+"


@record(frozen=True)
class KfdNode:
    node: str
    gfx_target: str
    pci_slot: str | None
    pci_id: str | None
    memory_mib: int | None = None
    integrated: bool | None = None


def parse_properties(text: str) -> dict[str, int]:
    """``key value`` lines of a KFD properties file; lines that are not ``name int`` are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2 and re.fullmatch(_INT, fields[1]):
            out[fields[0]] = int(fields[1])
    return out


def gfx_target(version: int) -> str | None:
    """KFD ``gfx_target_version`` (major*10000 + minor*100 + stepping) -> ``gfxNNNN``.

    Minor and stepping print as hex digits, as LLVM names them: 90010 -> gfx90a, 90402 -> gfx942.
    """
    if version <= 0:
        return None
    major, minor, step = version // 10000, (version // 100) % 100, version % 100
    if minor > 15 or step > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


def pci_slot(domain: int, location_id: int) -> str:
    bus, dev, fn = (location_id >> 8) & 0xFF, (location_id >> 3) & 0x1F, location_id & 0x7
    return f"{domain:04x}:{bus:02x}:{dev:02x}.{fn:x}"


def node_from_properties(node: str, props: dict[str, int], memory_mib: int | None = None) -> KfdNode | None:
    """A GPU node, or None for CPU nodes (no gfx target)."""
    target = gfx_target(props.get("gfx_target_version", 0))
    if target is None:
        return None
    slot = None
    if "location_id" in props:
        slot = pci_slot(props.get("domain", 0), props["location_id"])
    pci_id = None
    vendor, device = props.get("vendor_id"), props.get("device_id")
    if vendor and device and 0 < vendor <= 0xFFFF and 0 < device <= 0xFFFF:
        pci_id = f"{vendor:04x}:{device:04x}"
    return KfdNode(node, target, slot, pci_id, memory_mib)


# HSA heap types of a KFD memory bank (kfd_crat.h).
_HEAP_SYSTEM, _HEAP_FB_PUBLIC, _HEAP_FB_PRIVATE = 0, 1, 2


def memory_from_banks(banks: list[dict[str, int]]) -> tuple[int | None, bool | None]:
    """(frame buffer in MiB, integrated) from the properties of a GPU node's memory banks.

    KFD reports a GPU's memory as one frame-buffer heap: FB_PRIVATE when part of it is not
    CPU-visible (only a discrete card's VRAM behind a small BAR is), FB_PUBLIC otherwise. An APU
    reports FB_PUBLIC too (its carve-out, or on newer kernels a share of system memory), so
    FB_PUBLIC alone cannot tell a discrete card with resizable BAR from an iGPU: ``integrated``
    is then None (unknown), and the resolver's GPU table decides. Only system-memory banks (the
    old CPU+GPU nodes of Kaveri/Carrizo) mean integrated.
    """
    total, fb, private = 0, 0, False
    typed = [b for b in banks if "heap_type" in b]
    for props in typed:
        if props["heap_type"] in (_HEAP_FB_PUBLIC, _HEAP_FB_PRIVATE):
            fb += 1
            total += max(props.get("size_in_bytes", 0), 0)
            private = private or props["heap_type"] == _HEAP_FB_PRIVATE
    if not typed:
        return None, None
    if private:
        integrated: bool | None = False
    elif not fb:
        integrated = True
    else:
        integrated = None
    return (total // (1 << 20) or None), integrated


def _memory(host: Sysroot, node: str) -> tuple[int | None, bool | None]:
    banks = [
        parse_properties(host.read_optional(f"{TOPOLOGY}/{node}/mem_banks/{bank}/properties") or "")
        for bank in host.listdir(f"{TOPOLOGY}/{node}/mem_banks")
    ]
    return memory_from_banks(banks)


def scan(host: Sysroot, errors: list[ProbeError]) -> list[KfdNode] | None:
    """GPU nodes, or None when there is no KFD topology (no amdgpu, or not mapped in)."""
    from gpuenv.facts import ProbeError

    if not host.is_dir(TOPOLOGY):
        return None
    out = []
    for node in sorted(host.listdir(TOPOLOGY), key=lambda n: (len(n), n)):
        try:
            props = parse_properties(host.read_text(f"{TOPOLOGY}/{node}/properties"))
            kfd_node = node_from_properties(node, props)
            if kfd_node is not None:
                mem, integrated = _memory(host, node)
                out.append(
                    KfdNode(node, kfd_node.gfx_target, kfd_node.pci_slot, kfd_node.pci_id, mem, integrated)
                )
        except Exception as exc:
            errors.append(ProbeError("kfd", f"node {node}: {exc}"))
    return out
