"""AMD KFD topology (/sys/class/kfd/kfd/topology/nodes/N): the gfx target of each GPU node,
matched to its PCI function through the node's ``domain`` and ``location_id``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuenv.probe.host import Host

TOPOLOGY = "/sys/class/kfd/kfd/topology/nodes"
_INT = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
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
        if len(fields) == 2 and _INT.fullmatch(fields[1]):
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
        slot = pci_slot(props.get("domain", 0) & 0xFFFF, props["location_id"])
    pci_id = None
    vendor, device = props.get("vendor_id"), props.get("device_id")
    if vendor and device and 0 < vendor <= 0xFFFF and 0 < device <= 0xFFFF:
        pci_id = f"{vendor:04x}:{device:04x}"
    return KfdNode(node, target, slot, pci_id, memory_mib)


def _memory(host: Host, node: str) -> tuple[int | None, bool | None]:
    """(VRAM in MiB, integrated): heap_type 1/2 are the GPU's own frame buffer (public/private),
    0 is system memory, which is all an APU's banks hold."""
    total, banks = 0, 0
    for bank in host.listdir(f"{TOPOLOGY}/{node}/mem_banks"):
        props = parse_properties(host.read_optional(f"{TOPOLOGY}/{node}/mem_banks/{bank}/properties") or "")
        if "heap_type" not in props:
            continue
        banks += 1
        if props["heap_type"] in (1, 2):
            total += props.get("size_in_bytes", 0)
    if not banks:
        return None, None
    return (total // (1 << 20) or None), total == 0


def scan(host: Host, errors: list) -> list[KfdNode] | None:
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
