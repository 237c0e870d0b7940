"""The bundled compatibility matrices: loaded once per process, validated, and asked questions.

CONTRACT (written first so that the resolver, `gpuenv torch` and the planner can be built
against it while the data is filled in): the dataclasses and the public methods of ``Matrices``
below are the interface. Bodies marked NotImplementedError are to be written.

Versions are strings as the vendors print them ("7.2.4", "12.8", "570.133.07", "2.7.0");
compare them with ``packaging.version.Version`` (imported lazily).
"""

from __future__ import annotations

from dataclasses import dataclass, field


class MatrixError(ValueError):
    """A matrices file that is missing, malformed or fails its schema."""


@dataclass(frozen=True)
class BundleInfo:
    version: str  # the bundle's own version/date, e.g. "2026.12.02"
    path: str  # directory the files were read from
    origin: str  # "bundled" (inside the wheel) or "installed" (gpuenv matrix update)


@dataclass(frozen=True)
class AmdGpu:
    pci_id: str  # "1002:7550"
    name: str  # "AMD Radeon RX 9070 XT"
    gfx_target: str | None  # "gfx1201"; None when no source names it
    architecture: str | None  # "RDNA4", "CDNA3", ...
    integrated: bool
    source: str


@dataclass(frozen=True)
class NvidiaGpu:
    pci_id: str  # "10de:2335"
    name: str  # "NVIDIA H200"
    chip: str | None  # "GH100"
    architecture: str  # "Hopper"
    compute_capability: str  # "9.0"
    source: str


@dataclass(frozen=True)
class OsSupport:
    id: str  # os-release ID: "ubuntu", "debian", "rhel"
    version: str  # major version as VERSION_ID prints it: "24.04", "22.04", "12"
    point_releases: tuple[str, ...] = ()  # "24.04.3", ... ; empty when the source names none
    kernels: tuple[str, ...] = ()  # kernel series "6.8", "6.14" (GA and HWE)


@dataclass(frozen=True)
class RocmRelease:
    version: str  # "7.2.4"
    os: tuple[OsSupport, ...]
    gpus: dict[str, str]  # gfx target -> "full" | "preview" | "radeon"
    amdgpu_driver: str | None  # the amdgpu driver release it pairs with, e.g. "30.30.4"
    torch: tuple[str, ...]  # PyTorch versions AMD lists for it
    source: str
    confirmed: bool = True
    notes: tuple[str, ...] = ()

    def support(self, gfx: str) -> str | None:
        """Support level of a gfx target in this release, or None when unsupported."""
        return self.gpus.get(gfx)

    def os_support(self, os_id: str, version_id: str | None) -> OsSupport | None:
        """The entry for an OS major version ("24.04" also matches "24.04.3")."""
        raise NotImplementedError


@dataclass(frozen=True)
class CudaToolkit:
    version: str  # full release "12.8.0", "12.8.1"
    min_driver: str  # Linux x86_64 minimum driver for full compatibility, "570.26"
    minor_compat_driver: str | None  # floor of minor-version compatibility, e.g. "525.60.13"
    compute_capabilities: tuple[str, ...]  # supported, e.g. ("5.0", ..., "12.0")
    source: str
    confirmed: bool = True

    @property
    def series(self) -> str:
        """"12.8" for "12.8.1"."""
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True)
class DriverBranch:
    branch: str  # "R570"
    max_cuda: str | None  # newest CUDA series it supports without forward compatibility
    legacy_gpus: bool  # still supports Maxwell/Pascal/Volta (proprietary modules)
    open_default: bool  # the open kernel modules are the default flavour
    source: str


@dataclass(frozen=True)
class NvidiaArch:
    architecture: str  # "Blackwell"
    compute_capabilities: tuple[str, ...]
    first_cuda: str | None
    last_cuda: str | None  # None: still supported
    last_driver: str | None  # last driver branch supporting it, None: still supported
    module: str  # "open" (required), "proprietary" (required) or "either"
    source: str


@dataclass(frozen=True)
class TorchVariant:
    torch: str  # "2.7.0"
    variant: str  # "cu128", "rocm6.3", "cpu"
    stack: str  # "cuda" | "rocm" | "cpu"
    stack_version: str | None  # "12.8", "6.3"; None for cpu
    index_url: str  # "https://download.pytorch.org/whl/cu128"
    archs: tuple[str, ...]  # "sm_50", ..., "sm_120" or "gfx900", ..., "gfx1201"; () for cpu
    python: tuple[str, ...]  # "3.9", ..., "3.13"
    source: str
    confirmed: bool = True


@dataclass
class Matrices:
    """Everything bundled, parsed once. Build with ``load()``."""

    bundle: BundleInfo
    _amd: dict[str, AmdGpu] = field(default_factory=dict)
    _nvidia: dict[str, NvidiaGpu] = field(default_factory=dict)

    def amd_gpu(self, pci_id: str) -> AmdGpu | None:
        raise NotImplementedError

    def nvidia_gpu(self, pci_id: str) -> NvidiaGpu | None:
        raise NotImplementedError

    def rocm_releases(self) -> list[RocmRelease]:
        """All bundled ROCm releases, oldest first."""
        raise NotImplementedError

    def rocm_release(self, version: str) -> RocmRelease | None:
        raise NotImplementedError

    def default_rocm(self) -> RocmRelease:
        """The default install target (7.2.4)."""
        raise NotImplementedError

    def cuda_toolkits(self) -> list[CudaToolkit]:
        """All bundled CUDA toolkit releases, oldest first."""
        raise NotImplementedError

    def cuda_toolkit(self, version: str) -> CudaToolkit | None:
        """"12.8" means its GA release (12.8.0); "12.8.1" that update."""
        raise NotImplementedError

    def min_driver(self, cuda: str) -> str | None:
        """Minimum Linux driver for a CUDA version (GA release for a bare series)."""
        raise NotImplementedError

    def driver_branches(self) -> list[DriverBranch]:
        raise NotImplementedError

    def nvidia_arch(self, architecture: str) -> NvidiaArch | None:
        raise NotImplementedError

    def torch_versions(self) -> list[str]:
        """Every bundled torch release ("2.4.0", "2.4.1", ..., "2.13.0"), oldest first."""
        raise NotImplementedError

    def torch_variants(self, version: str) -> list[TorchVariant]:
        """Official wheels of one torch release; "2.7" means its newest patch release."""
        raise NotImplementedError


def load(path: str | None = None) -> Matrices:
    """Load (once per process and path) the installed bundle if any, else the bundled one."""
    raise NotImplementedError
