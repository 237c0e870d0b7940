"""What a machine has, as verify and the fleet report describe it: its GPUs, driver and stack.

``machine_of(facts, matrices)`` distils the probe's facts into a ``Machine`` (pure). Verify
compares it with what torch sees ("each GPU is visible"); the fleet report groups hosts by its
three labels (``model``, ``driver``, ``stack``). Both ask the resolve layer's inventory the same
questions the doctor asks (which AMD GPUs can compute, which driver and toolkit releases are
installed), so a GPU the doctor leaves out (a Raphael iGPU) is left out here too.

A verify result carries its ``Machine`` (``to_dict``/``from_dict``), so a fleet report of verify
files alone still groups hosts the way it would with their facts.
"""

from __future__ import annotations

from gpuenv.facts import Facts, Gpu
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.matrices import AmdGpu, Matrices, NvidiaGpu


@record(frozen=True)
class MachineGpu:
    vendor: str  # nvidia | amd | intel | other
    name: str  # "NVIDIA GeForce RTX 5090": the matrices' name, else pci.ids', else the PCI id
    pci_slot: str | None
    driver: str | None  # the kernel driver bound (nvidia, amdgpu, nouveau); None: none
    compute: bool  # one PyTorch can use: NVIDIA, AMD discrete, an AMD iGPU ROCm supports

    def to_dict(self) -> dict[str, object]:
        return {
            "vendor": self.vendor,
            "name": self.name,
            "pci_slot": self.pci_slot,
            "driver": self.driver,
            "compute": self.compute,
        }


@record(frozen=True)
class Machine:
    gpus: tuple[MachineGpu, ...]
    nvidia_driver: str | None = None  # "570.133.07"
    amd_driver: str | None = None  # the amdgpu DKMS module's version; None: in-kernel or absent
    cuda: tuple[str, ...] = ()  # CUDA toolkit releases installed, newest first
    rocm: str | None = None  # the ROCm release in use
    downloads: dict[str, bool] | None = None  # proxy, CA and pip index variables: set or not (no values)

    def compute_gpus(self, vendor: str) -> tuple[MachineGpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == vendor and g.compute)

    @property
    def model(self) -> str:
        """'8× AMD Instinct MI300X', '1× NVIDIA GeForce RTX 5090 + 1× NVIDIA GeForce RTX 4090'."""
        counts: dict[str, int] = {}
        for g in self.gpus:
            if g.compute:
                counts[g.name] = counts.get(g.name, 0) + 1
        return " + ".join(f"{n}× {name}" for name, n in counts.items()) or "no GPU"

    @property
    def driver(self) -> str:
        """'nvidia 570.133.07', 'amdgpu 6.12.12', 'amdgpu (in-kernel)', 'nouveau', 'no driver'."""
        labels: dict[str, None] = {}
        for g in self.gpus:
            if not g.compute:
                continue
            if g.driver == "nvidia":
                labels[
                    f"nvidia {self.nvidia_driver}" if self.nvidia_driver else "nvidia (version unknown)"
                ] = None
            elif g.driver == "amdgpu":
                labels[f"amdgpu {self.amd_driver}" if self.amd_driver else "amdgpu (in-kernel)"] = None
            else:
                labels[g.driver or "no driver"] = None
        return " + ".join(labels) or "none"

    @property
    def stack(self) -> str:
        """'CUDA 12.8', 'ROCm 7.2.0', 'CUDA 12.8 + ROCm 6.4.1', 'none'."""
        parts = [f"CUDA {v}" for v in self.cuda] + ([f"ROCm {self.rocm}"] if self.rocm else [])
        return " + ".join(parts) or "none"

    def to_dict(self) -> dict[str, object]:
        return {
            "gpus": [g.to_dict() for g in self.gpus],
            "nvidia_driver": self.nvidia_driver,
            "amd_driver": self.amd_driver,
            "cuda": list(self.cuda),
            "rocm": self.rocm,
        } | ({"downloads": dict(self.downloads)} if self.downloads is not None else {})


def machine_of(facts: Facts, matrices: Matrices | None) -> Machine:
    """The machine's GPUs, driver and stack from its facts (``matrices`` may be None: unknown
    PCI ids then keep their pci.ids names, and every AMD GPU counts as able to compute)."""
    from gpuenv.resolve import gpuinfo
    from gpuenv.resolve import inventory as inv

    amd_compute = {id(g) for g in gpuinfo.amd_compute(facts, matrices)}
    gpus = tuple(
        MachineGpu(
            vendor=g.vendor,
            name=_name(g, matrices),
            pci_slot=g.pci_slot,
            driver=g.kernel_driver,
            compute=g.vendor == "nvidia" or id(g) in amd_compute,
        )
        for g in facts.gpus
    )
    return Machine(
        gpus=gpus,
        nvidia_driver=inv.nvidia_driver_version(facts),
        amd_driver=facts.amd.driver_version if facts.amd else None,
        cuda=tuple(inv.installed_cuda(facts)),
        rocm=inv.installed_rocm(facts),
        downloads=facts.downloads,
    )


def _name(gpu: Gpu, matrices: Matrices | None) -> str:
    # The matrices' names are the marketing names fleets are bought by ("AMD Instinct MI300X");
    # pci.ids says "Aqua Vanjaram [Instinct MI300X]".
    known: NvidiaGpu | AmdGpu | None = None
    if matrices is not None and gpu.vendor in ("nvidia", "amd"):
        known = matrices.nvidia_gpu(gpu.pci_id) if gpu.vendor == "nvidia" else matrices.amd_gpu(gpu.pci_id)
    if known is not None and known.name:
        return known.name
    return gpu.name or f"{gpu.vendor.upper()} GPU {gpu.pci_id}"


def machine_from_dict(doc: object) -> Machine | None:
    """A ``Machine`` from its ``to_dict`` form in a verify file; None for anything else (a file
    from elsewhere is judged, never trusted to be well-formed)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("gpus"), list):
        return None
    gpus: list[MachineGpu] = []
    for g in doc["gpus"]:
        if (
            not isinstance(g, dict)
            or not isinstance(g.get("name"), str)
            or not isinstance(g.get("vendor"), str)
        ):
            continue
        gpus.append(
            MachineGpu(
                vendor=g["vendor"],
                name=g["name"],
                pci_slot=_str(g.get("pci_slot")),
                driver=_str(g.get("driver")),
                compute=g.get("compute") is True,
            )
        )
    cuda = doc.get("cuda")
    return Machine(
        gpus=tuple(gpus),
        nvidia_driver=_str(doc.get("nvidia_driver")),
        amd_driver=_str(doc.get("amd_driver")),
        cuda=tuple(v for v in cuda if isinstance(v, str)) if isinstance(cuda, list) else (),
        rocm=_str(doc.get("rocm")),
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
