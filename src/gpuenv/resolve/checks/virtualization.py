"""Virtual machines: which hypervisor and cloud, and what that means for a GPU in the guest."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import gpuinfo
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

VFIO_REF = "https://docs.kernel.org/driver-api/vfio.html"
VGPU_REF = "https://docs.nvidia.com/vgpu/latest/grid-vgpu-user-guide/index.html"

HYPERVISORS = {
    "kvm": "KVM",
    "firecracker": "Firecracker",
    "hyperv": "Hyper-V",
    "microsoft": "Hyper-V",  # what gpuenv 0.1 probes wrote
    "vmware": "VMware",
    "xen": "Xen",
    "virtualbox": "VirtualBox",
    "parallels": "Parallels",
    "bhyve": "bhyve",
    "bochs": "Bochs",
    "apple": "Apple Virtualization",
    "amazon": "Amazon EC2 (Nitro)",
    "google": "Google Compute Engine",
}
CLOUDS = {
    "aws": "AWS", "gcp": "Google Cloud", "azure": "Azure", "oracle": "Oracle Cloud", "alibaba": "Alibaba Cloud",
    "digitalocean": "DigitalOcean", "hetzner": "Hetzner", "openstack": "OpenStack", "akamai": "Akamai (Linode)",
    "upcloud": "UpCloud", "scaleway": "Scaleway", "vultr": "Vultr", "exoscale": "Exoscale",
}  # fmt: skip


def _title(kind: str) -> str:
    if kind == "vm":  # the CPU says a hypervisor is there; nothing readable named it
        return "Running in a virtual machine (the hypervisor could not be identified)"
    name = HYPERVISORS.get(kind, kind)
    return f"Running in {'an' if name[:1] in 'AEIOU' else 'a'} {name} virtual machine"


@check(code="platform.virtual-machine", area="platform")
def virtual_machine(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    p = facts.platform
    if not p.virtualization or p.wsl:
        return
    cloud = CLOUDS.get(p.cloud, p.cloud) if p.cloud else None
    gpus = [g for g in facts.gpus if g.vendor in ("nvidia", "amd")]
    seen = (
        f"GPUs in the guest: {gpuinfo.describe(gpus, matrices)}"
        if gpus
        else "no NVIDIA or AMD GPU is on the guest's PCI bus: none is passed through to this VM"
    )
    yield Finding(
        severity=Severity.INFO,
        title=_title(p.virtualization) + (f" on {cloud}" if cloud else ""),
        detail=f"{seen} (evidence: {p.virtualization_evidence or 'the platform facts'}). A GPU reaches a VM either "
        "whole, by PCI passthrough (the host binds it to vfio-pci with the IOMMU on, and the guest runs the normal "
        "NVIDIA or AMD driver), or as a virtual GPU (NVIDIA vGPU: the guest runs NVIDIA's vGPU guest driver, which "
        "must match the host's vGPU manager, and needs a license for full capability).",
        fix="Nothing to change inside the guest while the GPU works: install the GPU driver here as on bare metal"
        + (
            "."
            if gpus
            else "; to get a GPU, ask the host or cloud for a GPU instance or a passthrough device (host side: "
            "IOMMU on, the GPU bound to vfio-pci)."
        )
        + " On an NVIDIA vGPU, take the guest driver from the vGPU release that matches the host.",
        gpus=gpuinfo.slots(gpus),
        refs=(VFIO_REF, VGPU_REF),
    )
