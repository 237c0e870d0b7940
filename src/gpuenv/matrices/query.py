"""``Matrices``: everything bundled, parsed once (each subject on first use for the shipped
data), and the questions the resolver, ``gpuenv torch`` and the planner ask of it."""

from __future__ import annotations

from gpuenv.matrices.parsers import _amd_gpu, _fill, _read_release, _Unread
from gpuenv.matrices.reader import _VERSION, Reader, _read
from gpuenv.matrices.records import (
    AmdGpu,
    AmdWheels,
    BundleInfo,
    CudaToolkit,
    DriverBranch,
    GfxOverride,
    HostCompilers,
    NvidiaArch,
    NvidiaGpu,
    RocmRelease,
    TorchArchNote,
    TorchVariant,
    vkey,
)
from gpuenv.standins.record import field, record

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.matrices.routes import RocmRoute


@record
class Matrices:
    """Everything bundled, parsed once. Build with ``load()``."""

    bundle: BundleInfo
    _amd: dict[str, AmdGpu | _Unread] = field(default_factory=dict)  # _Unread: shipped, not looked up yet
    # Validated at parse time; each entry becomes an NvidiaGpu on first lookup (1000+ entries).
    _nvidia: dict[str, NvidiaGpu | tuple[Any, ...]] = field(default_factory=dict)
    # Oldest first (a release still _Unread until first asked for, shipped data only), and
    # their versions in the same order, checked when the file was read.
    _rocm: list[RocmRelease | _Unread] = field(default_factory=list)
    _rocm_versions: list[str] = field(default_factory=list)
    _default_rocm: str = ""
    _cuda: list[CudaToolkit] = field(default_factory=list)
    _minor_compat: dict[str, str] = field(default_factory=dict)
    _branches: list[DriverBranch] = field(default_factory=list)
    _archs: list[NvidiaArch] = field(default_factory=list)
    # Full version -> variants (a release still _Unread until first asked for, shipped data only).
    _torch: dict[str, list[TorchVariant] | _Unread] = field(default_factory=dict)
    _torch_notes: dict[str, TorchArchNote] = field(default_factory=dict)
    _gfx_overrides: dict[str, GfxOverride] = field(default_factory=dict)
    _amd_wheels: dict[str, AmdWheels] = field(default_factory=dict)  # ROCm release -> AMD's wheels
    # Subjects still to be read from _dir: a doctor run on an NVIDIA box never pays for rocm.json.
    _dir: str | None = None
    _pending: set[str] = field(default_factory=set)

    def _need(self, subject: str) -> None:
        if subject in self._pending:
            assert self._dir is not None
            _fill(self, subject, self._dir, whole=False)
            self._pending.discard(subject)

    # -- GPUs ------------------------------------------------------------------------------
    def amd_gpu(self, pci_id: str) -> AmdGpu | None:
        self._need("amd")
        key = pci_id.lower()
        entry = self._amd.get(key)
        if type(entry) is _Unread:
            entry = self._amd[key] = _amd_gpu(*entry)
        # The checker cannot narrow "type() is" (kept over isinstance for speed): no _Unread is left.
        return entry  # type: ignore[return-value]

    def nvidia_gpu(self, pci_id: str) -> NvidiaGpu | None:
        self._need("nvidia")
        key = pci_id.lower()
        entry = self._nvidia.get(key)
        if type(entry) is tuple:
            entry = self._nvidia[key] = NvidiaGpu(*entry)
        # As in amd_gpu: no tuple is left here.
        return entry  # type: ignore[return-value]

    def amd_gpus(self) -> list[AmdGpu]:
        self._need("amd")
        return [self.amd_gpu(pci) for pci in self._amd]  # type: ignore[misc]

    def nvidia_gpus(self) -> list[NvidiaGpu]:
        self._need("nvidia")
        return [self.nvidia_gpu(pci) for pci in self._nvidia]  # type: ignore[misc]

    # -- ROCm ------------------------------------------------------------------------------
    def _rocm_at(self, index: int) -> RocmRelease:
        entry = self._rocm[index]
        if type(entry) is _Unread:
            from gpuenv.matrices.parsers_rocm import _rocm_release  # imported by the first release read

            entry = self._rocm[index] = _rocm_release(*entry)
        # As in amd_gpu: no _Unread is left.
        return entry  # type: ignore[return-value]

    def rocm_releases(self) -> list[RocmRelease]:
        """All bundled ROCm releases, oldest first."""
        self._need("rocm")
        return [self._rocm_at(i) for i in range(len(self._rocm))]

    def rocm_versions(self) -> list[str]:
        """The bundled ROCm versions, oldest first, as ``rocm_releases`` orders them, without
        building the releases (the doctor's staleness check asks only this)."""
        self._need("rocm")
        return list(self._rocm_versions)

    def rocm_release(self, version: str) -> RocmRelease | None:
        """ "7.2.4" exactly; "7.2" means the newest 7.2.x bundled."""
        self._need("rocm")
        versions = self._rocm_versions
        if version in versions:
            return self._rocm_at(versions.index(version))
        series = [i for i, v in enumerate(versions) if v.startswith(version + ".")]
        return self._rocm_at(series[-1]) if series else None

    def rocm_releases_for(
        self, gfx_targets: tuple[str, ...] | list[str], os_id: str | None = None, os_version: str | None = None
    ) -> list[RocmRelease]:
        """The bundled releases that list every gfx target (at any level), oldest first; with
        ``os_id``, only those that also list that distribution (and ``os_version``, when given)."""
        out = []
        for r in self.rocm_releases():
            if not all(r.support(g) for g in gfx_targets):
                continue
            if os_id is not None and (
                r.os_support(os_id, os_version) is None if os_version else not any(o.id == os_id for o in r.os)
            ):
                continue
            out.append(r)
        return out

    def newest_rocm_for(self, gfx: str) -> RocmRelease | None:
        """The newest bundled release that lists a gfx target, whatever the OS; None when none does."""
        found = self.rocm_releases_for((gfx,))
        return found[-1] if found else None

    def rocm_routes(self) -> tuple[RocmRoute, ...]:
        """The repository route of each release gpuenv has one for (rocm.json ``repository``, a copy
        of repos.json's): what `install auto` may plan, read without the planner's file (#42)."""
        return tuple(r.repository for r in self.rocm_releases() if r.repository is not None)

    def default_rocm(self) -> RocmRelease:
        """The default install target (7.2.4)."""
        self._need("rocm")
        release = self.rocm_release(self._default_rocm)
        assert release is not None  # checked when the bundle was parsed
        return release

    # -- CUDA ------------------------------------------------------------------------------
    def cuda_toolkits(self) -> list[CudaToolkit]:
        """All bundled CUDA toolkit releases, oldest first."""
        self._need("cuda")
        return list(self._cuda)

    def cuda_versions(self) -> list[str]:
        """The bundled CUDA toolkit versions, oldest first, as ``cuda_toolkits`` orders them.

        Until something else of cuda.json is asked for (shipped data, which the tests validate
        whole), the versions are read off cuda.index.json (or the file, where none fits it)
        without building the toolkits and driver tables: the doctor's staleness check asks only
        this, and on a box with a CUDA toolkit and no NVIDIA GPU (CUDA leftovers beside an AMD
        card, a build machine) nothing else reads cuda.json. (Its one caller keeps the answer: nothing here is kept.)"""
        if "cuda" not in self._pending:
            return [t.version for t in self._cuda]
        assert self._dir is not None
        from gpuenv.matrices.index import section

        r = Reader("cuda.json")
        index = section(self._dir, "cuda.json")  # the versions as cuda.index.json keys the toolkits
        if index is None:
            toolkits = r.items(_read(self._dir, "cuda.json"), "toolkits", "$")
        else:
            toolkits = [(f"$.toolkits[{i}]", {"version": v}) for i, (v, _) in enumerate(index.entries("toolkits"))]
        return sorted((r.text(t, "version", p, _VERSION) for p, t in toolkits), key=vkey)

    def cuda_toolkit(self, version: str) -> CudaToolkit | None:
        """ "12.8" means its GA release (12.8.0); "12.8.1" that update."""
        self._need("cuda")
        exact = [t for t in self._cuda if t.version == version]
        if exact:
            return exact[0]
        series = [t for t in self._cuda if t.series == version]
        if not series:
            return None
        ga = [t for t in series if t.name.endswith(" GA")]
        return ga[0] if ga else series[0]

    def min_driver(self, cuda: str) -> str | None:
        """Minimum Linux driver for a CUDA version (GA release for a bare series)."""
        toolkit = self.cuda_toolkit(cuda)
        return toolkit.min_driver if toolkit else None

    def minor_compat_driver(self, cuda: str) -> str | None:
        """Lowest driver that runs CUDA ``cuda`` under minor-version compatibility ("12.8" -> 525.60.13)."""
        self._need("cuda")
        return self._minor_compat.get(cuda.split(".")[0])

    def driver_runs_cuda(self, driver: str, cuda: str) -> str | None:
        """How a driver runs CUDA X.Y: "full" (at or above its minimum), "minor" (minor-version
        compatibility only: PTX JIT and some APIs need the full minimum) or None (too old)."""
        need = self.min_driver(cuda)
        if need is not None and vkey(driver) >= vkey(need):
            return "full"
        floor = self.minor_compat_driver(cuda)
        if floor is not None and vkey(driver) >= vkey(floor):
            # Within the family the floor is enough; a driver of an older family is not.
            return "minor"
        return None

    def driver_branches(self) -> list[DriverBranch]:
        self._need("cuda")
        return list(self._branches)

    def driver_branch(self, driver: str) -> DriverBranch | None:
        """The branch a driver version belongs to ("570.133.07" -> R570)."""
        self._need("cuda")
        major = vkey(driver)[0] if vkey(driver) else None
        for b in self._branches:
            if b.number == major:
                return b
        return None

    def nvidia_arch(self, architecture: str) -> NvidiaArch | None:
        self._need("cuda")
        for a in self._archs:
            if a.architecture.lower() == architecture.lower():
                return a
        return None

    def nvidia_archs(self) -> list[NvidiaArch]:
        self._need("cuda")
        return list(self._archs)

    def nvidia_arch_for(self, compute_capability: str) -> NvidiaArch | None:
        """The architecture of a compute capability ("8.9" -> Ada); None for ones not tabulated."""
        self._need("cuda")
        for a in self._archs:
            if compute_capability in a.compute_capabilities:
                return a
        return None

    # -- torch -----------------------------------------------------------------------------
    def torch_versions(self) -> list[str]:
        """Every bundled torch release ("2.4.0", "2.4.1", ..., "2.13.0"), oldest first."""
        self._need("torch")
        return sorted(self._torch, key=vkey)

    def torch_variants(self, version: str) -> list[TorchVariant]:
        """Official wheels of one torch release; "2.7" means its newest patch release."""
        self._need("torch")
        if version not in self._torch:
            series = [v for v in self.torch_versions() if v.startswith(version + ".")]
            if not series:
                return []
            version = series[-1]
        variants = self._torch[version]
        if type(variants) is _Unread:
            _read_release(self._torch, variants)
            variants = self._torch[version]
        return list(variants)

    def torch_arch_note(self, arch: str) -> TorchArchNote | None:
        """What the data says about wheels for one target ("gfx906", "sm_35"), e.g. the last that ran."""
        self._need("torch")
        return self._torch_notes.get(arch)

    def gfx_override(self, gfx: str) -> GfxOverride | None:
        """The unofficial HSA_OVERRIDE_GFX_VERSION route for a gfx target, where one is recorded."""
        self._need("torch")
        return self._gfx_overrides.get(gfx)

    def amd_wheels(self, rocm: str) -> AmdWheels | None:
        """AMD's own PyTorch wheels for a release of ROCm's new stream ("10.0.0"; "10.0" also
        matches), where torch.json records them."""
        self._need("torch")
        if rocm in self._amd_wheels:
            return self._amd_wheels[rocm]
        return next((w for v, w in self._amd_wheels.items() if v.startswith(rocm + ".")), None)

    def host_compilers(self, cuda_series: str) -> HostCompilers | None:
        """The GCC and Clang majors nvcc of a CUDA release ("12.8", or "12.8.1") accepts; None for
        a release host_compilers.json does not cover (13.1 and newer: no source read)."""
        from gpuenv.matrices.bundles import _host_compilers  # bundles builds Matrices: imported here

        return _host_compilers(self._dir).get(".".join(cuda_series.split(".")[:2]))

