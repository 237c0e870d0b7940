"""The bundled compatibility matrices: loaded once per process, validated, and asked questions.

CONTRACT: the records and the public methods of ``Matrices`` below are the interface the
resolver, ``gpuenv torch`` and the planner are built against. Fields were only ever added (with
defaults); ``CudaToolkit.min_driver`` may be None where NVIDIA's table was not found (13.4, 13.5);
``CudaToolkit.minor_compat_driver`` is None before CUDA 11 (no minor-version compatibility);
``NvidiaArch.first_cuda`` may be None (not stated), per-capability overrides in
``first_cuda_by_cc``/``last_cuda_by_cc``; ``TorchVariant.archs_without_kernels`` lists targets the
wheel names but cannot run (``usable_archs`` leaves them out); ``TorchVariant.python`` may be empty
(not stated by the sources). ``torch_arch_note`` and ``gfx_override`` answer what older wheels did
for a target and the unofficial HSA_OVERRIDE_GFX_VERSION route.

Versions are strings as the vendors print them ("7.2.4", "12.8", "570.133.07", "2.7.0"); compare
them with ``vkey`` (a cheap numeric key) or ``packaging.version.Version`` (imported lazily).

Where the data comes from: ``$GPUENV_STATE_DIR/matrices`` (or /var/lib/gpuenv/matrices as root,
~/.cache/gpuenv/matrices otherwise) when ``gpuenv matrix update`` installed a bundle there and it
parses; else the copy shipped inside gpuenv (``gpuenv.bundled``: the package gpuenv._matrices).
"""

from __future__ import annotations

import os
import re

from gpuenv.record import field, record

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, Literal, TypeVar, overload

    _T = TypeVar("_T")

FILES = ("bundle.json", "amd_gpus.json", "nvidia_gpus.json", "rocm.json", "cuda.json", "torch.json")
# A bundle may also carry the vendor repositories, keys and purge rules (an admin's mirror); the
# planner reads them from the bundle in effect (gpuenv.plan.repos), else the shipped ones.
OPTIONAL_FILES = ("repos.json",)
MAX_FILE = 16 << 20  # the largest shipped file is under half a megabyte


class MatrixError(ValueError):
    """A matrices file that is missing, malformed or fails its schema."""


def vkey(version: str) -> tuple[int, ...]:
    """Numeric sort key: "7.2.4" -> (7, 2, 4); "570.133.07" -> (570, 133, 7); "2.7.0" < "2.10.0"."""
    return tuple(int(x) for x in re.findall(r"\d+", version))


@record(frozen=True)
class BundleInfo:
    version: str  # the bundle's own version/date, e.g. "2026.12.02"
    path: str  # directory the files were read from
    origin: str  # "bundled" (inside the wheel) or "installed" (gpuenv matrix update)
    # Why an installed bundle was passed over, when it was (doctor can say so).
    skipped: str | None = None
    # How recent the material behind the data is (bundle.json material_dated_up_to), so that
    # `gpuenv matrix show` can make staleness visible; None where a bundle does not say.
    material: str | None = None


@record(frozen=True)
class AmdGpu:
    pci_id: str  # "1002:7550"
    name: str  # "AMD Radeon RX 9070 XT"
    gfx_target: str | None  # "gfx1201"; None when no source names it
    architecture: str | None  # "RDNA4", "CDNA3", ...
    integrated: bool
    source: str
    codename: str | None = None
    revisions: dict[str, str] | None = None  # PCI revision -> marketing name, where one id is many cards
    confirmed: bool = True
    notes: tuple[str, ...] = ()
    # Older GPUs (Southern Islands to Vega 20) carry these; None / () where the data does not say.
    chip: str | None = None  # amdgpu's chip name as dmesg prints it: "PITCAIRN"
    kernel_drivers: tuple[str, ...] = ()  # drivers that support it, the default first: ("radeon", "amdgpu")
    # What amdgpu's KFD says: "supported" | "experimental" (amdgpu.exp_hw_support=1) | "unsupported"
    kfd: str | None = None

    def product(self, revision: str | None) -> str:
        """The marketing name for a PCI revision ("c0"), falling back to the entry's name."""
        if revision and self.revisions:
            return self.revisions.get(revision.upper(), self.name)
        return self.name


@record(frozen=True)
class NvidiaGpu:
    pci_id: str  # "10de:2335"
    name: str  # "NVIDIA H200"
    chip: str | None  # "GH100"
    architecture: str  # "Hopper"
    compute_capability: str  # "9.0"
    source: str
    confirmed: bool = True


@record(frozen=True)
class OsSupport:
    id: str  # os-release ID: "ubuntu", "debian", "rhel"
    version: str  # major version as VERSION_ID prints it: "24.04", "22.04", "12"
    point_releases: tuple[str, ...] = ()  # "24.04.3", ... ; empty when the source names none
    kernels: tuple[str, ...] = ()  # kernel series "6.8", "6.14" (GA and HWE)
    ga_kernels: tuple[str, ...] = ()
    hwe_kernels: tuple[str, ...] = ()
    source: str = ""
    confirmed: bool = True
    notes: tuple[str, ...] = ()


@record(frozen=True)
class RocmRelease:
    version: str  # "7.2.4"
    os: tuple[OsSupport, ...]
    gpus: dict[str, str]  # gfx target -> "full" | "preview" | "radeon" | "deprecated"
    # The amdgpu driver line it pairs with: "6.2.x" for 6.2 (same numbering up to 6.4), the newest
    # 30.x AMD lists for the release from 7.0 on ("30.30.x" for 7.2.4).
    amdgpu_driver: str | None
    torch: tuple[str, ...]  # PyTorch versions AMD lists for it
    source: str
    confirmed: bool = True
    notes: tuple[str, ...] = ()
    amdgpu_driver_compat: tuple[str, ...] = ()  # every amdgpu driver AMD lists, newest first
    release_date: str | None = None
    # "therock" for the new release stream (7.14, Core SDK 10.0: /opt/rocm/core-X.Y, amdrocm-*);
    # None for the legacy stream (/opt/rocm-X.Y.Z, rocm-*).
    stream: str | None = None

    def support(self, gfx: str) -> str | None:
        """Support level of a gfx target in this release, or None when unsupported."""
        return self.gpus.get(gfx)

    supports = support  # the issue text spells it this way

    def os_support(self, os_id: str, version_id: str | None) -> OsSupport | None:
        """The entry for an OS major version ("24.04" also matches "24.04.3", "9.4" matches "9")."""
        if not version_id:
            return None
        for entry in self.os:
            if entry.id != os_id:
                continue
            if version_id == entry.version or version_id.startswith(entry.version + "."):
                return entry
        return None


@record(frozen=True)
class CudaToolkit:
    version: str  # full release "12.8.0", "12.8.1"
    min_driver: str | None  # Linux x86_64 minimum driver for full compatibility, "570.26"; None: not found
    minor_compat_driver: str | None  # floor of minor-version compatibility, e.g. "525.60.13"
    compute_capabilities: tuple[str, ...]  # supported, e.g. ("5.0", ..., "12.0")
    source: str
    confirmed: bool = True
    name: str = ""  # "CUDA 12.8 GA"
    notes: tuple[str, ...] = ()

    @property
    def series(self) -> str:
        """ "12.8" for "12.8.1"."""
        return ".".join(self.version.split(".")[:2])


@record(frozen=True)
class DriverBranch:
    branch: str  # "R570"
    max_cuda: str | None  # newest CUDA series it supports without forward compatibility
    legacy_gpus: bool  # still supports Maxwell/Pascal/Volta (proprietary modules)
    open_default: bool  # the open kernel modules are the default flavour
    source: str
    designation: str | None = None  # "Long Term Support Branch", ...
    end_of_life: str | None = None
    confirmed: bool = True

    @property
    def number(self) -> int:
        return int(self.branch.lstrip("R"))


@record(frozen=True)
class NvidiaArch:
    architecture: str  # "Blackwell"
    compute_capabilities: tuple[str, ...]
    first_cuda: str | None  # None: not stated by the sources read
    last_cuda: str | None  # None: still supported; "12.x" means the last 12 release
    last_driver: str | None  # last driver branch supporting it, None: still supported
    module: str  # "open" (required), "proprietary" (required) or "either"
    source: str
    module_source: str = ""
    confirmed: bool = True
    module_confirmed: bool = True
    # Capabilities that start or end apart from their architecture ("10.3" -> "12.9"; Kepler "3.0" -> "10.2").
    first_cuda_by_cc: dict[str, str] = field(default_factory=dict)
    last_cuda_by_cc: dict[str, str] = field(default_factory=dict)

    def first_cuda_for(self, compute_capability: str) -> str | None:
        return self.first_cuda_by_cc.get(compute_capability, self.first_cuda)

    def last_cuda_for(self, compute_capability: str) -> str | None:
        return self.last_cuda_by_cc.get(compute_capability, self.last_cuda)


@record(frozen=True)
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
    ptx: tuple[str, ...] = ()  # "compute_120": PTX shipped for JIT on newer GPUs (CUDA only)
    notes: tuple[str, ...] = ()
    # Targets the arch list names but the bundled libraries (rocBLAS) have no kernels for: listed, not usable.
    archs_without_kernels: tuple[str, ...] = ()
    archs_without_kernels_source: str = ""
    find_links: str | None = (
        None  # the pip -f page the release's own install instructions use (torch <= 1.10)
    )
    released: str | None = None  # the release's date as torch.json gives it: "8 Jul 2026"

    @property
    def usable_archs(self) -> tuple[str, ...]:
        """``archs`` less the targets without kernels: what the wheel really runs on."""
        if not self.archs_without_kernels:
            return self.archs
        return tuple(a for a in self.archs if a not in self.archs_without_kernels)


@record(frozen=True)
class TorchArchNote:
    """What the bundled wheels mean for one GPU target over time (the last wheel that ran on it)."""

    arch: str  # "gfx906", "sm_35"
    note: str
    last_torch: str | None  # "2.9.1"; None: not stated by the sources read / older than the bundle
    last_variant: str | None  # "rocm6.3"
    source: str
    products: str = ""
    confirmed: bool = True


@record(frozen=True)
class GfxOverride:
    """The community HSA_OVERRIDE_GFX_VERSION route for a target no official wheel is built for.
    Unofficial: AMD does not support it."""

    gfx: str  # "gfx1031"
    value: str  # "10.3.0"
    runs_as: str  # "gfx1030": the target whose code the GPU then runs
    risk: str
    source: str
    confirmed: bool = True

    @property
    def env(self) -> str:
        return f"HSA_OVERRIDE_GFX_VERSION={self.value}"


@record
class Matrices:
    """Everything bundled, parsed once. Build with ``load()``."""

    bundle: BundleInfo
    _amd: dict[str, AmdGpu | _Unread] = field(default_factory=dict)  # _Unread: shipped, not looked up yet
    # Validated at parse time; each entry becomes an NvidiaGpu on first lookup (1000+ entries).
    _nvidia: dict[str, NvidiaGpu | tuple[Any, ...]] = field(default_factory=dict)
    _rocm: list[RocmRelease] = field(default_factory=list)
    _default_rocm: str = ""
    _cuda: list[CudaToolkit] = field(default_factory=list)
    _minor_compat: dict[str, str] = field(default_factory=dict)
    _branches: list[DriverBranch] = field(default_factory=list)
    _archs: list[NvidiaArch] = field(default_factory=list)
    # Full version -> variants (a release still _Unread until first asked for, shipped data only).
    _torch: dict[str, list[TorchVariant] | _Unread] = field(default_factory=dict)
    _torch_notes: dict[str, TorchArchNote] = field(default_factory=dict)
    _gfx_overrides: dict[str, GfxOverride] = field(default_factory=dict)
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
    def rocm_releases(self) -> list[RocmRelease]:
        """All bundled ROCm releases, oldest first."""
        self._need("rocm")
        return list(self._rocm)

    def rocm_release(self, version: str) -> RocmRelease | None:
        """ "7.2.4" exactly; "7.2" means the newest 7.2.x bundled."""
        self._need("rocm")
        exact = [r for r in self._rocm if r.version == version]
        if exact:
            return exact[0]
        series = [r for r in self._rocm if r.version.startswith(version + ".")]
        return series[-1] if series else None

    def rocm_releases_for(
        self, gfx_targets: tuple[str, ...] | list[str], os_id: str | None = None, os_version: str | None = None
    ) -> list[RocmRelease]:
        """The bundled releases that list every gfx target (at any level), oldest first; with
        ``os_id``, only those that also list that distribution (and ``os_version``, when given)."""
        self._need("rocm")
        out = []
        for r in self._rocm:
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
        whole), the versions are read off the file without building the toolkits and driver
        tables: the doctor's staleness check asks only this, and on a box with a CUDA toolkit
        and no NVIDIA GPU (CUDA leftovers beside an AMD card, a build machine) nothing else
        reads cuda.json. (Its one caller keeps the answer: nothing here is kept.)"""
        if "cuda" not in self._pending:
            return [t.version for t in self._cuda]
        assert self._dir is not None
        r = Reader("cuda.json")
        toolkits = r.items(_read(self._dir, "cuda.json"), "toolkits", "$")
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

    def host_compilers(self, cuda_series: str) -> HostCompilers | None:
        """The GCC and Clang majors nvcc of a CUDA release ("12.8", or "12.8.1") accepts; None for
        a release host_compilers.json does not cover (13.1 and newer: no source read)."""
        return _host_compilers(self._dir).get(".".join(cuda_series.split(".")[:2]))


# ------------------------------------------------------------------------------------------
# Parsing. The parser is the run-time check of a bundle, with or without jsonschema installed
# (the JSON schemas in gpuenv/schemas validate the shipped data in the tests): every field it
# reads must be there with the right type, versions and targets must be well formed, and torch
# index URLs must be https://download.pytorch.org/whl/... exactly, since root later pip-installs
# from them. Any slip is one MatrixError line naming the file and the path. Patterns are kept as
# text: _fullmatch compiles each when first used and keeps it, so a run pays only for the files it
# reads.

_VERSION = r"\d+(?:\.\d+)*"  # "7.2.4", "570.133.07", "13.5"
_TORCH_VERSION = r"\d+\.\d+\.\d+"
_SERIES = r"\d+\.(?:\d+|x)"  # "12.9", "12.x"
_CC = r"\d+\.\d"
_PY = r"3\.\d+t?"
_GFX = r"gfx[0-9a-f]{3,4}"
_CUDA_CODE = r"sm_\d{2,3}[a-z]?"
_PTX_CODE = r"compute_\d{2,3}"
_VARIANT = r"cpu|cu\d{3}|rocm\d+\.\d+(?:\.\d+)?"
_BRANCH = r"R\d{3}"
_BUNDLE_VERSION = r"\d{4}\.\d{2}\.\d{2}(?:\.\d+)?"
_PCI = r"[0-9a-f]{4}:[0-9a-f]{4}"
_CHIP = r"[A-Z][A-Z0-9_]*"  # amdgpu's CHIP_* name: "PITCAIRN", "POLARIS10"
_KERNEL_DRIVERS = ("amdgpu", "radeon")
_KFD = ("supported", "experimental", "unsupported")
# The one host and scheme gpuenv hands to pip: no other host, no http, no userinfo or port, no
# query, fragment, whitespace or "." / ".." path segments. Compiled when torch.json is first
# read (re keeps them): most doctor runs never read it.
_INDEX = r"https://download\.pytorch\.org/whl/[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)*/?"
_FIND_LINKS = r"https://download\.pytorch\.org/whl/(?:[A-Za-z0-9_-][A-Za-z0-9._-]*/)*[A-Za-z0-9_-]+\.html"
_STACKS = ("cuda", "rocm", "cpu")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_FULLMATCH: dict[str, Callable[[str], re.Match[str] | None]] = {}


def _fullmatch(pattern: str) -> Callable[[str], re.Match[str] | None]:
    """The compiled ``fullmatch`` of a pattern, compiled once: a matrix file checks thousands
    of values against a dozen patterns, and ``re``'s own cache costs a look-up each time."""
    found = _FULLMATCH.get(pattern)
    if found is None:
        found = _FULLMATCH[pattern] = re.compile(pattern).fullmatch
    return found


class Reader:
    """Typed field access for one bundled data file: every malformed value is one MatrixError
    naming the file and the path (the matrices and advise.json share it)."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, msg: str) -> MatrixError:
        return MatrixError(f"{self.file}: {path}: {msg}")

    if TYPE_CHECKING:
        # What get() and text() return is the type asked for, and None only where optional.

        @overload
        def get(self, obj: object, key: str, path: str, kind: type[_T], optional: Literal[False] = False) -> _T: ...

        @overload
        def get(self, obj: object, key: str, path: str, kind: type[_T], optional: bool) -> _T | None: ...

    def get(
        self, obj: object, key: str, path: str, kind: type | tuple[type, ...], optional: bool = False
    ) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(path, "expected an object")
        if key not in obj:
            if optional:
                return None
            raise self.fail(f"{path}.{key}", "required field missing")
        value = obj[key]
        if value is None and optional:
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(f"{path}.{key}", f"expected {want}, got {type(value).__name__}")
        return value

    if TYPE_CHECKING:

        @overload
        def text(self, obj: object, key: str, path: str, pattern: str, optional: Literal[False] = False) -> str: ...

        @overload
        def text(self, obj: object, key: str, path: str, pattern: str, optional: bool) -> str | None: ...

    def text(self, obj: object, key: str, path: str, pattern: str, optional: bool = False) -> Any:
        """A string field that must match ``pattern`` in full."""
        value = self.get(obj, key, path, str, optional)
        if value is not None and not _fullmatch(pattern)(value):
            raise self.fail(f"{path}.{key}", f"{_show(value)} is not well formed")
        return value

    def strs(
        self, obj: object, key: str, path: str, optional: bool = False, pattern: str | None = None
    ) -> tuple[str, ...]:
        value = self.get(obj, key, path, list, optional)
        if value is None:
            return ()
        full = None if pattern is None else _fullmatch(pattern)
        # The common case in one C-level pass each (every bundled list is well formed); the
        # loop below runs only to name the first bad element.
        if {*map(type, value)} <= {str} and (full is None or all(map(full, value))):
            return tuple(value)
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.fail(f"{path}.{key}[{i}]", "expected a string")
            if full is not None and not full(v):
                raise self.fail(f"{path}.{key}[{i}]", f"{_show(v)} is not well formed")
        return tuple(value)

    def str_map(
        self,
        obj: object,
        key: str,
        path: str,
        optional: bool = False,
        keys: str | None = None,
        values: str | None = None,
    ) -> dict[str, str]:
        value = self.get(obj, key, path, dict, optional)
        if value is None:
            return {}
        key_ok = None if keys is None else _fullmatch(keys)
        value_ok = None if values is None else _fullmatch(values)
        for k, v in value.items():
            if not isinstance(v, str):
                raise self.fail(f"{path}.{key}.{k}", f"expected str, got {type(v).__name__}")
            if key_ok is not None and not key_ok(k):
                raise self.fail(f"{path}.{key}", f"key {_show(k)} is not well formed")
            if value_ok is not None and not value_ok(v):
                raise self.fail(f"{path}.{key}.{k}", f"{_show(v)} is not well formed")
        return dict(value)

    def items(
        self, obj: object, key: str, path: str, optional: bool = False
    ) -> list[tuple[str, dict[str, Any]]]:
        value = self.get(obj, key, path, list, optional)
        out: list[tuple[str, dict[str, Any]]] = []
        for i, v in enumerate(value or ()):
            if not isinstance(v, dict):
                raise self.fail(f"{path}.{key}[{i}]", "expected an object")
            out.append((f"{path}.{key}[{i}]", v))
        return out


def _read(directory: str, name: str) -> object:
    """One matrices file, through the one JSON reader: a regular file (an installed bundle may
    be hostile: never a FIFO or a device), at most MAX_FILE bytes, strict UTF-8, valid JSON.
    The depth is left to the Reader, which looks only where it expects a value."""
    from gpuenv.jsoninput import InputError, read

    try:
        return read(os.path.join(directory, name), "matrices file", MAX_FILE, max_depth=None)
    except InputError as exc:
        raise MatrixError(str(exc)) from None


def _parse_amd(doc: object, whole: bool = True) -> dict[str, AmdGpu | _Unread]:
    """amd_gpus.json by PCI id. With ``whole`` false (the shipped data, which the tests validate
    whole), an entry is checked and built when its id is first looked up: a doctor run asks
    about one or two GPUs of the 250."""
    r = Reader("amd_gpus.json")
    out: dict[str, AmdGpu | _Unread] = {}
    for p, g in r.items(doc, "gpus", "$"):
        pci = r.get(g, "pci_id", p, str)
        if not _fullmatch(_PCI)(pci):
            raise r.fail(f"{p}.pci_id", f"{_show(pci)} is not vendor:device in lower-case hex")
        out[pci] = _amd_gpu(r, p, g, pci) if whole else _Unread((r, p, g, pci))
    return out


def _amd_gpu(r: Reader, p: str, g: dict[str, Any], pci: str) -> AmdGpu:
    revisions = r.str_map(g, "revisions", p, optional=True)
    drivers = r.strs(g, "kernel_drivers", p, optional=True)
    for i, d in enumerate(drivers):
        if d not in _KERNEL_DRIVERS:
            raise r.fail(f"{p}.kernel_drivers[{i}]", f"{_show(d)} is not one of {_KERNEL_DRIVERS}")
    kfd = r.get(g, "kfd", p, str, optional=True)
    if kfd is not None and kfd not in _KFD:
        raise r.fail(f"{p}.kfd", f"{_show(kfd)} is not one of {_KFD}")
    return AmdGpu(
        pci_id=pci,
        name=r.get(g, "name", p, str),
        gfx_target=r.text(g, "gfx_target", p, _GFX, optional=True),
        architecture=r.get(g, "architecture", p, str, optional=True),
        integrated=r.get(g, "integrated", p, bool),
        source=r.get(g, "source", p, str),
        codename=r.get(g, "codename", p, str, optional=True),
        revisions=revisions or None,
        confirmed=r.get(g, "confirmed", p, bool),
        notes=r.strs(g, "notes", p, optional=True),
        chip=r.text(g, "chip", p, _CHIP, optional=True),
        kernel_drivers=drivers,
        kfd=kfd,
    )


def _parse_nvidia(doc: object) -> dict[str, NvidiaGpu | tuple[Any, ...]]:
    # The largest file and on every NVIDIA doctor run: one tight pass that accepts exactly what
    # _parse_nvidia_checked accepts; that one runs instead (and names the problem) on any doubt.
    gpus = doc.get("gpus") if isinstance(doc, dict) else None
    if type(gpus) is list:
        out: dict[str, NvidiaGpu | tuple[Any, ...]] = {}
        pci_ok, cc_ok = _fullmatch(_PCI), _fullmatch(_CC)
        for g in gpus:
            if type(g) is not dict:
                break
            pci, name, chip = g.get("pci_id"), g.get("name"), g.get("chip")
            arch, cc = g.get("architecture"), g.get("compute_capability")
            source, confirmed = g.get("source"), g.get("confirmed")
            if not (
                type(pci) is str
                and type(name) is str
                and (chip is None or type(chip) is str)
                and type(arch) is str
                and type(cc) is str
                and type(source) is str
                and type(confirmed) is bool
                and pci_ok(pci)
                and cc_ok(cc)
            ):
                break
            out[pci] = (pci, name, chip, arch, cc, source, confirmed)  # NvidiaGpu's fields, in order
        else:
            return out
    return _parse_nvidia_checked(doc)


def _parse_nvidia_checked(doc: object) -> dict[str, NvidiaGpu | tuple[Any, ...]]:
    r = Reader("nvidia_gpus.json")
    out: dict[str, NvidiaGpu | tuple[Any, ...]] = {}
    for p, g in r.items(doc, "gpus", "$"):
        pci = r.get(g, "pci_id", p, str)
        if not _fullmatch(_PCI)(pci):
            raise r.fail(f"{p}.pci_id", f"{_show(pci)} is not vendor:device in lower-case hex")
        out[pci] = NvidiaGpu(
            pci_id=pci,
            name=r.get(g, "name", p, str),
            chip=r.get(g, "chip", p, str, optional=True),
            architecture=r.get(g, "architecture", p, str),
            compute_capability=r.text(g, "compute_capability", p, _CC),
            source=r.get(g, "source", p, str),
            confirmed=r.get(g, "confirmed", p, bool),
        )
    return out


_LEVELS = ("full", "preview", "radeon", "deprecated")


def _parse_rocm(doc: object) -> tuple[list[RocmRelease], str]:
    r = Reader("rocm.json")
    releases = []
    for p, rel in r.items(doc, "releases", "$"):
        oses = []
        for po, o in r.items(rel, "os", p):
            oses.append(
                OsSupport(
                    id=r.get(o, "id", po, str),
                    version=r.get(o, "version", po, str),
                    point_releases=r.strs(o, "point_releases", po),
                    kernels=r.strs(o, "kernels", po),
                    ga_kernels=r.strs(o, "ga_kernels", po, optional=True),
                    hwe_kernels=r.strs(o, "hwe_kernels", po, optional=True),
                    source=r.get(o, "source", po, str),
                    confirmed=r.get(o, "confirmed", po, bool),
                    notes=r.strs(o, "notes", po, optional=True),
                )
            )
        gpus = r.str_map(rel, "gpus", p, keys=_GFX)
        for gfx, level in gpus.items():
            if level not in _LEVELS:
                raise r.fail(f"{p}.gpus.{gfx}", f"level {_show(level)} is not one of {_LEVELS}")
        releases.append(
            RocmRelease(
                version=r.text(rel, "version", p, _VERSION),
                os=tuple(oses),
                gpus=gpus,
                amdgpu_driver=r.get(rel, "amdgpu_driver", p, str, optional=True),
                torch=r.strs(rel, "torch", p, pattern=_VERSION),
                source=r.get(rel, "source", p, str),
                confirmed=r.get(rel, "confirmed", p, bool),
                notes=r.strs(rel, "notes", p, optional=True),
                amdgpu_driver_compat=r.strs(rel, "amdgpu_driver_compat", p, optional=True),
                release_date=r.get(rel, "release_date", p, str, optional=True),
                stream=r.get(rel, "stream", p, str, optional=True),
            )
        )
    releases.sort(key=lambda x: vkey(x.version))
    default = r.get(doc, "default", "$", str)
    if default not in {x.version for x in releases}:
        raise r.fail("$.default", f"{_show(default)} is not a bundled release")
    return releases, default


def _parse_cuda(doc: object) -> tuple[list[CudaToolkit], dict[str, str], list[DriverBranch], list[NvidiaArch]]:
    r = Reader("cuda.json")
    mvc = r.get(doc, "minor_version_compatibility", "$", dict)
    floors = r.str_map(
        mvc, "drivers", "$.minor_version_compatibility", keys=r"\d+", values=_VERSION
    )
    toolkits = []
    for p, t in r.items(doc, "toolkits", "$"):
        toolkits.append(
            CudaToolkit(
                version=r.text(t, "version", p, _VERSION),
                min_driver=r.text(t, "min_driver", p, _VERSION, optional=True),
                minor_compat_driver=r.text(t, "minor_compat_driver", p, _VERSION, optional=True),
                compute_capabilities=r.strs(t, "compute_capabilities", p, pattern=_CC),
                source=r.get(t, "source", p, str),
                confirmed=r.get(t, "confirmed", p, bool),
                name=r.get(t, "name", p, str),
                notes=r.strs(t, "notes", p, optional=True),
            )
        )
    toolkits.sort(key=lambda x: vkey(x.version))
    branches = []
    for p, b in r.items(doc, "driver_branches", "$"):
        branches.append(
            DriverBranch(
                branch=r.text(b, "branch", p, _BRANCH),
                max_cuda=r.text(b, "max_cuda", p, _VERSION, optional=True),
                legacy_gpus=r.get(b, "legacy_gpus", p, bool),
                open_default=r.get(b, "open_default", p, bool),
                source=r.get(b, "source", p, str),
                designation=r.get(b, "designation", p, str, optional=True),
                end_of_life=r.get(b, "end_of_life", p, str, optional=True),
                confirmed=r.get(b, "confirmed", p, bool),
            )
        )
    archs = []
    for p, a in r.items(doc, "architectures", "$"):
        module = r.get(a, "module", p, str)
        if module not in ("open", "proprietary", "either"):
            raise r.fail(f"{p}.module", f"{_show(module)} is not open, proprietary or either")
        archs.append(
            NvidiaArch(
                architecture=r.get(a, "architecture", p, str),
                compute_capabilities=r.strs(a, "compute_capabilities", p, pattern=_CC),
                first_cuda=r.text(a, "first_cuda", p, _SERIES, optional=True),
                last_cuda=r.text(a, "last_cuda", p, _SERIES, optional=True),
                last_driver=r.text(a, "last_driver", p, _BRANCH, optional=True),
                module=module,
                source=r.get(a, "source", p, str),
                module_source=r.get(a, "module_source", p, str),
                confirmed=r.get(a, "confirmed", p, bool),
                module_confirmed=r.get(a, "module_confirmed", p, bool, optional=True) is not False,
                first_cuda_by_cc=r.str_map(a, "first_cuda_by_cc", p, optional=True, keys=_CC, values=_SERIES),
                last_cuda_by_cc=r.str_map(a, "last_cuda_by_cc", p, optional=True, keys=_CC, values=_SERIES),
            )
        )
    return toolkits, floors, branches, archs


def _parse_variant(
    r: Reader, v: dict[str, Any], pv: str, python: tuple[str, ...], source: str, confirmed: bool
) -> dict[str, Any]:
    """A variant's TorchVariant fields (all but ``torch``), checked."""
    stack = r.get(v, "stack", pv, str)
    if stack not in _STACKS:
        raise r.fail(f"{pv}.stack", f"{_show(stack)} is not one of {_STACKS}")
    index_url = r.get(v, "index_url", pv, str)
    if not _fullmatch(_INDEX)(index_url):
        raise r.fail(
            f"{pv}.index_url", f"{_show(index_url)} is not an https://download.pytorch.org/whl/ index"
        )
    archs = r.strs(v, "archs", pv, pattern=_GFX if stack == "rocm" else _CUDA_CODE)
    if stack == "cpu" and archs:
        raise r.fail(f"{pv}.archs", "a cpu variant has no GPU targets")
    return dict(
        variant=r.text(v, "variant", pv, _VARIANT),
        stack=stack,
        stack_version=r.text(v, "stack_version", pv, _VERSION, optional=True),
        index_url=index_url,
        archs=archs,
        python=python,
        source=source,
        confirmed=confirmed and r.get(v, "confirmed", pv, bool),
        ptx=r.strs(v, "ptx", pv, optional=True, pattern=_PTX_CODE),
        notes=r.strs(v, "notes", pv, optional=True),
        archs_without_kernels=r.strs(v, "archs_without_kernels", pv, optional=True, pattern=_GFX),
        archs_without_kernels_source=r.get(v, "archs_without_kernels_source", pv, str, optional=True) or "",
        find_links=r.text(v, "find_links", pv, _FIND_LINKS, optional=True),
    )


class _Unread(tuple):  # type: ignore[type-arg]  # its items differ by subject (see below)
    """Shipped data not parsed yet, with what parsing it needs: a torch release (reader, path,
    release, versions; see _parse_torch) or an AMD GPU entry (reader, path, entry, PCI id)."""


def _parse_torch(
    doc: object, whole: bool = True
) -> tuple[dict[str, list[TorchVariant] | _Unread], dict[str, TorchArchNote], dict[str, GfxOverride]]:
    """torch.json's releases, notes and overrides. With ``whole`` false (the shipped data, which
    the tests validate whole), a release's variants are parsed when it is first asked for:
    `gpuenv torch` reads the newest release and stops there, a doctor run the installed one."""
    r = Reader("torch.json")
    out: dict[str, list[TorchVariant] | _Unread] = {}
    for p, rel in r.items(doc, "releases", "$"):
        versions = r.strs(rel, "versions", p)
        for i, version in enumerate(versions):
            if not _fullmatch(_TORCH_VERSION)(version):
                raise r.fail(f"{p}.versions[{i}]", f"{_show(version)} is not a torch release version")
        unread = _Unread((r, p, rel, versions))
        for version in versions:
            out[version] = unread
        if whole:
            _read_release(out, unread)
    notes: dict[str, TorchArchNote] = {}
    for p, n in r.items(doc, "arch_notes", "$", optional=True):
        arch = r.get(n, "arch", p, str)
        if not (_fullmatch(_GFX)(arch) or _fullmatch(_CUDA_CODE)(arch)):
            raise r.fail(f"{p}.arch", f"{_show(arch)} is not well formed")
        notes[arch] = TorchArchNote(
            arch=arch,
            note=r.get(n, "note", p, str),
            last_torch=r.text(n, "last_torch", p, _TORCH_VERSION, optional=True),
            last_variant=r.text(n, "last_variant", p, _VARIANT, optional=True),
            source=r.get(n, "source", p, str),
            products=r.get(n, "products", p, str, optional=True) or "",
            confirmed=r.get(n, "confirmed", p, bool),
        )
    overrides: dict[str, GfxOverride] = {}
    for p, o in r.items(doc, "gfx_overrides", "$", optional=True):
        gfx = r.text(o, "gfx", p, _GFX)
        overrides[gfx] = GfxOverride(
            gfx=gfx,
            value=r.text(o, "value", p, r"\d+\.\d+\.\d+"),  # "11.0.0"
            runs_as=r.text(o, "runs_as", p, _GFX),
            risk=r.get(o, "risk", p, str),
            source=r.get(o, "source", p, str),
            confirmed=r.get(o, "confirmed", p, bool),
        )
    return out, notes, overrides


def _read_release(out: dict[str, list[TorchVariant] | _Unread], unread: _Unread) -> None:
    """Parse one torch release in place: each of its versions gets its own (frozen) variants."""
    r, p, rel, versions = unread
    python = r.strs(rel, "python", p, pattern=_PY)
    source = r.get(rel, "source", p, str)
    confirmed = r.get(rel, "confirmed", p, bool)
    released = r.get(rel, "released", p, str, optional=True)
    variants = r.items(rel, "variants", p)
    fields = [_parse_variant(r, v, pv, python, source, confirmed) for pv, v in variants]
    for version in versions:
        out[version] = [TorchVariant(torch=version, released=released, **f) for f in fields]


SUBJECTS = ("amd", "nvidia", "rocm", "cuda", "torch")


def _fill(m: Matrices, subject: str, directory: str, whole: bool = True) -> None:
    if subject == "amd":
        m._amd = _parse_amd(_read(directory, "amd_gpus.json"), whole)
    elif subject == "nvidia":
        m._nvidia = _parse_nvidia(_read(directory, "nvidia_gpus.json"))
    elif subject == "rocm":
        m._rocm, m._default_rocm = _parse_rocm(_read(directory, "rocm.json"))
    elif subject == "cuda":
        m._cuda, m._minor_compat, m._branches, m._archs = _parse_cuda(_read(directory, "cuda.json"))
    elif subject == "torch":
        m._torch, m._torch_notes, m._gfx_overrides = _parse_torch(_read(directory, "torch.json"), whole)
    else:  # pragma: no cover - a typo in this module
        raise ValueError(subject)


def parse_dir(directory: str | os.PathLike[str], origin: str, lazy: bool = False) -> Matrices:
    """Parse one bundle directory; MatrixError (file and path) on the first problem.

    ``lazy`` reads bundle.json now and each subject on first use (for the shipped data, which
    the tests validate); otherwise every file is parsed before this returns."""
    directory = os.fspath(directory)
    bundle = _read(directory, "bundle.json")
    reader = Reader("bundle.json")
    version = reader.text(bundle, "version", "$", _BUNDLE_VERSION)
    material = reader.get(bundle, "material_dated_up_to", "$", str, optional=True)
    m = Matrices(
        bundle=BundleInfo(version=version, path=str(directory), origin=origin, material=material), _dir=directory
    )
    if lazy:
        m._pending = set(SUBJECTS)
    else:
        for subject in SUBJECTS:
            _fill(m, subject, directory)
    return m


def bundled_dir() -> str:
    """The matrices shipped with this gpuenv (the package gpuenv._matrices)."""
    from gpuenv import bundled

    return bundled.directory("matrices")


def state_dir() -> Path:
    """Where ``gpuenv matrix update`` keeps an installed bundle."""
    from pathlib import Path

    return Path(_state_dir())


def _state_dir() -> str:
    env = os.environ.get("GPUENV_STATE_DIR")
    if env:
        return os.path.join(env, "matrices")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return "/var/lib/gpuenv/matrices"
    return os.path.join(os.path.expanduser("~"), ".cache", "gpuenv", "matrices")


_CACHE: dict[str, Matrices] = {}


def load(path: str | None = None) -> Matrices:
    """Load (once per process and path) the installed bundle if any, else the bundled one.

    ``path`` reads that directory only (no fallback): a bad one raises MatrixError. Without it,
    a broken installed bundle, or for root one that another account could have changed, is
    passed over (``bundle.skipped`` says why) for the bundled data."""
    key = path or f"default:{_state_dir()}"
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    result: Matrices | None
    if path is not None:
        result = parse_dir(path, "given")
    else:
        skipped = None
        result = None
        installed = _state_dir()
        if os.path.isfile(os.path.join(installed, "bundle.json")):
            why = _untrusted(installed)
            if why:
                skipped = f"installed bundle at {installed} ignored: {why}"
            else:
                try:
                    result = parse_dir(installed, "installed")
                except MatrixError as exc:
                    skipped = f"installed bundle at {installed} ignored: {exc}"
        if result is None:
            result = parse_dir(bundled_dir(), "bundled", lazy=True)
            if skipped:
                b = result.bundle
                result.bundle = BundleInfo(b.version, b.path, b.origin, skipped, b.material)
    _CACHE[key] = result
    return result


def _untrusted(directory: str) -> str | None:
    """For root, why another account could have changed the installed bundle (it decides what
    root's plans install: GPUENV_STATE_DIR may point anywhere); None when none could, and for
    any other user, whose bundle steers only their own runs."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    from gpuenv.trust import untrusted

    for name in FILES + OPTIONAL_FILES:
        path = os.path.join(directory, name)
        why = untrusted(path) if name in FILES or os.path.lexists(path) else None
        if why:
            return why
    return None


def clear_cache() -> None:
    """Forget parsed bundles (after ``matrix update``/``reset`` in the same process, and in tests)."""
    _CACHE.clear()


# -- host compilers (host_compilers.json) --------------------------------------------------------
# Read on first use. A bundle installed by `gpuenv matrix update` carries only FILES; without its
# own host_compilers.json the shipped copy answers.


@record(frozen=True)
class HostCompilers:
    cuda: str  # release series, "12.8"
    gcc: tuple[int, int]  # (min, max) major, inclusive
    clang: tuple[int, int]
    source: str
    confirmed: bool
    rule: str = ""  # how nvcc judges the host compiler (major only; -allow-unsupported-compiler)


_HOST_COMPILERS: dict[str, dict[str, HostCompilers]] = {}


def _host_compilers(directory: str | None) -> dict[str, HostCompilers]:
    if directory is None or not os.path.isfile(os.path.join(directory, "host_compilers.json")):
        directory = bundled_dir()
    if directory not in _HOST_COMPILERS:
        _HOST_COMPILERS[directory] = _parse_host_compilers(_read(directory, "host_compilers.json"))
    return _HOST_COMPILERS[directory]


def _parse_host_compilers(doc: object) -> dict[str, HostCompilers]:
    r = Reader("host_compilers.json")
    rule = r.get(doc, "rule", "$", str)
    out: dict[str, HostCompilers] = {}
    for p, row in r.items(doc, "releases", "$"):
        cuda = r.text(row, "cuda", p, r"\d+\.\d+")
        ranges = []
        for compiler in ("gcc", "clang"):
            span = r.get(row, compiler, p, dict)
            low, high = r.get(span, "min", f"{p}.{compiler}", int), r.get(span, "max", f"{p}.{compiler}", int)
            if low > high:
                raise r.fail(f"{p}.{compiler}", f"min {low} is above max {high}")
            ranges.append((low, high))
        out[cuda] = HostCompilers(
            cuda=cuda,
            gcc=ranges[0],
            clang=ranges[1],
            source=r.get(row, "source", p, str),
            confirmed=r.get(row, "confirmed", p, bool),
            rule=rule,
        )
    return out
