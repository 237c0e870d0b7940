"""The bundled compatibility matrices: loaded once per process, validated, and asked questions.

CONTRACT: the dataclasses and the public methods of ``Matrices`` below are the interface the
resolver, ``gpuenv torch`` and the planner are built against. Fields were only ever added (with
defaults); ``CudaToolkit.min_driver`` may be None where NVIDIA's table was not found (13.4, 13.5).

Versions are strings as the vendors print them ("7.2.4", "12.8", "570.133.07", "2.7.0"); compare
them with ``vkey`` (a cheap numeric key) or ``packaging.version.Version`` (imported lazily).

Where the data comes from: ``$GPUENV_STATE_DIR/matrices`` (or /var/lib/gpuenv/matrices as root,
~/.cache/gpuenv/matrices otherwise) when ``gpuenv matrix update`` installed a bundle there and it
parses; else the copy shipped inside gpuenv (``gpuenv.bundled``: the package gpuenv._matrices).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILES = ("bundle.json", "amd_gpus.json", "nvidia_gpus.json", "rocm.json", "cuda.json", "torch.json")


class MatrixError(ValueError):
    """A matrices file that is missing, malformed or fails its schema."""


def vkey(version: str) -> tuple[int, ...]:
    """Numeric sort key: "7.2.4" -> (7, 2, 4); "570.133.07" -> (570, 133, 7); "2.7.0" < "2.10.0"."""
    return tuple(int(x) for x in re.findall(r"\d+", version))


@dataclass(frozen=True)
class BundleInfo:
    version: str  # the bundle's own version/date, e.g. "2026.12.02"
    path: str  # directory the files were read from
    origin: str  # "bundled" (inside the wheel) or "installed" (gpuenv matrix update)
    # Why an installed bundle was passed over, when it was (doctor can say so).
    skipped: str | None = None


@dataclass(frozen=True)
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

    def product(self, revision: str | None) -> str:
        """The marketing name for a PCI revision ("c0"), falling back to the entry's name."""
        if revision and self.revisions:
            return self.revisions.get(revision.upper(), self.name)
        return self.name


@dataclass(frozen=True)
class NvidiaGpu:
    pci_id: str  # "10de:2335"
    name: str  # "NVIDIA H200"
    chip: str | None  # "GH100"
    architecture: str  # "Hopper"
    compute_capability: str  # "9.0"
    source: str
    confirmed: bool = True


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class RocmRelease:
    version: str  # "7.2.4"
    os: tuple[OsSupport, ...]
    gpus: dict[str, str]  # gfx target -> "full" | "preview" | "radeon"
    # The amdgpu driver line it pairs with: "6.2.x" for 6.2 (same numbering up to 6.4), the newest
    # 30.x AMD lists for the release from 7.0 on ("30.30.x" for 7.2.4).
    amdgpu_driver: str | None
    torch: tuple[str, ...]  # PyTorch versions AMD lists for it
    source: str
    confirmed: bool = True
    notes: tuple[str, ...] = ()
    amdgpu_driver_compat: tuple[str, ...] = ()  # every amdgpu driver AMD lists, newest first
    release_date: str | None = None

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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class NvidiaArch:
    architecture: str  # "Blackwell"
    compute_capabilities: tuple[str, ...]
    first_cuda: str | None
    last_cuda: str | None  # None: still supported; "12.x" means the last 12 release
    last_driver: str | None  # last driver branch supporting it, None: still supported
    module: str  # "open" (required), "proprietary" (required) or "either"
    source: str
    module_source: str = ""
    confirmed: bool = True
    module_confirmed: bool = True


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
    ptx: tuple[str, ...] = ()  # "compute_120": PTX shipped for JIT on newer GPUs (CUDA only)
    notes: tuple[str, ...] = ()


@dataclass
class Matrices:
    """Everything bundled, parsed once. Build with ``load()``."""

    bundle: BundleInfo
    _amd: dict[str, AmdGpu] = field(default_factory=dict)
    _nvidia: dict[str, NvidiaGpu] = field(default_factory=dict)
    _rocm: list[RocmRelease] = field(default_factory=list)
    _default_rocm: str = ""
    _cuda: list[CudaToolkit] = field(default_factory=list)
    _minor_compat: dict[str, str] = field(default_factory=dict)
    _branches: list[DriverBranch] = field(default_factory=list)
    _archs: list[NvidiaArch] = field(default_factory=list)
    _torch: dict[str, list[TorchVariant]] = field(default_factory=dict)  # full version -> variants
    # Subjects still to be read from _dir: a doctor run on an NVIDIA box never pays for rocm.json.
    _dir: Path | None = None
    _pending: set[str] = field(default_factory=set)

    def _need(self, subject: str) -> None:
        if subject in self._pending:
            assert self._dir is not None
            _fill(self, subject, self._dir)
            self._pending.discard(subject)

    # -- GPUs ------------------------------------------------------------------------------
    def amd_gpu(self, pci_id: str) -> AmdGpu | None:
        self._need("amd")
        return self._amd.get(pci_id.lower())

    def nvidia_gpu(self, pci_id: str) -> NvidiaGpu | None:
        self._need("nvidia")
        return self._nvidia.get(pci_id.lower())

    def amd_gpus(self) -> list[AmdGpu]:
        self._need("amd")
        return list(self._amd.values())

    def nvidia_gpus(self) -> list[NvidiaGpu]:
        self._need("nvidia")
        return list(self._nvidia.values())

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
        if version in self._torch:
            return list(self._torch[version])
        series = [v for v in self.torch_versions() if v.startswith(version + ".")]
        return list(self._torch[series[-1]]) if series else []


# ------------------------------------------------------------------------------------------
# Parsing: the bundled files are validated against gpuenv/schemas/matrices-*.json in the tests;
# at run time the parser itself is the check (every field it reads must be there with the right
# type), and any slip becomes a MatrixError naming the file and the path.


class _Reader:
    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, msg: str) -> MatrixError:
        return MatrixError(f"{self.file}: {path}: {msg}")

    def get(
        self, obj: Any, key: str, path: str, kind: type | tuple[type, ...], optional: bool = False
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

    def strs(self, obj: Any, key: str, path: str, optional: bool = False) -> tuple[str, ...]:
        value = self.get(obj, key, path, list, optional)
        if value is None:
            return ()
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.fail(f"{path}.{key}[{i}]", "expected a string")
        return tuple(value)

    def items(self, obj: Any, key: str, path: str) -> list[tuple[str, dict]]:
        value = self.get(obj, key, path, list)
        out = []
        for i, v in enumerate(value):
            if not isinstance(v, dict):
                raise self.fail(f"{path}.{key}[{i}]", "expected an object")
            out.append((f"{path}.{key}[{i}]", v))
        return out


def _read(directory: Path, name: str) -> Any:
    path = directory / name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MatrixError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MatrixError(f"{path}: not valid JSON: {exc}") from exc


_PCI = re.compile(r"[0-9a-f]{4}:[0-9a-f]{4}")


def _parse_amd(doc: Any) -> dict[str, AmdGpu]:
    r = _Reader("amd_gpus.json")
    out: dict[str, AmdGpu] = {}
    for p, g in r.items(doc, "gpus", "$"):
        pci = r.get(g, "pci_id", p, str)
        if not _PCI.fullmatch(pci):
            raise r.fail(f"{p}.pci_id", f"{pci!r} is not vendor:device in lower-case hex")
        out[pci] = AmdGpu(
            pci_id=pci,
            name=r.get(g, "name", p, str),
            gfx_target=r.get(g, "gfx_target", p, str, optional=True),
            architecture=r.get(g, "architecture", p, str, optional=True),
            integrated=r.get(g, "integrated", p, bool),
            source=r.get(g, "source", p, str),
            codename=r.get(g, "codename", p, str, optional=True),
            revisions=r.get(g, "revisions", p, dict, optional=True),
            confirmed=r.get(g, "confirmed", p, bool),
            notes=r.strs(g, "notes", p, optional=True),
        )
    return out


def _parse_nvidia(doc: Any) -> dict[str, NvidiaGpu]:
    r = _Reader("nvidia_gpus.json")
    out: dict[str, NvidiaGpu] = {}
    for p, g in r.items(doc, "gpus", "$"):
        pci = r.get(g, "pci_id", p, str)
        if not _PCI.fullmatch(pci):
            raise r.fail(f"{p}.pci_id", f"{pci!r} is not vendor:device in lower-case hex")
        out[pci] = NvidiaGpu(
            pci_id=pci,
            name=r.get(g, "name", p, str),
            chip=r.get(g, "chip", p, str, optional=True),
            architecture=r.get(g, "architecture", p, str),
            compute_capability=r.get(g, "compute_capability", p, str),
            source=r.get(g, "source", p, str),
            confirmed=r.get(g, "confirmed", p, bool),
        )
    return out


_LEVELS = ("full", "preview", "radeon")


def _parse_rocm(doc: Any) -> tuple[list[RocmRelease], str]:
    r = _Reader("rocm.json")
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
        gpus = r.get(rel, "gpus", p, dict)
        for gfx, level in gpus.items():
            if level not in _LEVELS:
                raise r.fail(f"{p}.gpus.{gfx}", f"level {level!r} is not one of {_LEVELS}")
        releases.append(
            RocmRelease(
                version=r.get(rel, "version", p, str),
                os=tuple(oses),
                gpus=dict(gpus),
                amdgpu_driver=r.get(rel, "amdgpu_driver", p, str, optional=True),
                torch=r.strs(rel, "torch", p),
                source=r.get(rel, "source", p, str),
                confirmed=r.get(rel, "confirmed", p, bool),
                notes=r.strs(rel, "notes", p, optional=True),
                amdgpu_driver_compat=r.strs(rel, "amdgpu_driver_compat", p, optional=True),
                release_date=r.get(rel, "release_date", p, str, optional=True),
            )
        )
    releases.sort(key=lambda x: vkey(x.version))
    default = r.get(doc, "default", "$", str)
    if default not in {x.version for x in releases}:
        raise r.fail("$.default", f"{default!r} is not a bundled release")
    return releases, default


def _parse_cuda(doc: Any) -> tuple[list[CudaToolkit], dict[str, str], list[DriverBranch], list[NvidiaArch]]:
    r = _Reader("cuda.json")
    mvc = r.get(doc, "minor_version_compatibility", "$", dict)
    floors = r.get(mvc, "drivers", "$.minor_version_compatibility", dict)
    toolkits = []
    for p, t in r.items(doc, "toolkits", "$"):
        toolkits.append(
            CudaToolkit(
                version=r.get(t, "version", p, str),
                min_driver=r.get(t, "min_driver", p, str, optional=True),
                minor_compat_driver=r.get(t, "minor_compat_driver", p, str, optional=True),
                compute_capabilities=r.strs(t, "compute_capabilities", p),
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
                branch=r.get(b, "branch", p, str),
                max_cuda=r.get(b, "max_cuda", p, str, optional=True),
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
            raise r.fail(f"{p}.module", f"{module!r} is not open, proprietary or either")
        archs.append(
            NvidiaArch(
                architecture=r.get(a, "architecture", p, str),
                compute_capabilities=r.strs(a, "compute_capabilities", p),
                first_cuda=r.get(a, "first_cuda", p, str, optional=True),
                last_cuda=r.get(a, "last_cuda", p, str, optional=True),
                last_driver=r.get(a, "last_driver", p, str, optional=True),
                module=module,
                source=r.get(a, "source", p, str),
                module_source=r.get(a, "module_source", p, str),
                confirmed=r.get(a, "confirmed", p, bool),
                module_confirmed=r.get(a, "module_confirmed", p, bool, optional=True) is not False,
            )
        )
    return toolkits, {str(k): str(v) for k, v in floors.items()}, branches, archs


def _parse_torch(doc: Any) -> dict[str, list[TorchVariant]]:
    r = _Reader("torch.json")
    out: dict[str, list[TorchVariant]] = {}
    for p, rel in r.items(doc, "releases", "$"):
        python = r.strs(rel, "python", p)
        source = r.get(rel, "source", p, str)
        confirmed = r.get(rel, "confirmed", p, bool)
        variants = r.items(rel, "variants", p)
        for version in r.strs(rel, "versions", p):
            out[version] = [
                TorchVariant(
                    torch=version,
                    variant=r.get(v, "variant", pv, str),
                    stack=r.get(v, "stack", pv, str),
                    stack_version=r.get(v, "stack_version", pv, str, optional=True),
                    index_url=r.get(v, "index_url", pv, str),
                    archs=r.strs(v, "archs", pv),
                    python=python,
                    source=source,
                    confirmed=confirmed and r.get(v, "confirmed", pv, bool),
                    ptx=r.strs(v, "ptx", pv, optional=True),
                    notes=r.strs(v, "notes", pv, optional=True),
                )
                for pv, v in variants
            ]
    return out


SUBJECTS = ("amd", "nvidia", "rocm", "cuda", "torch")


def _fill(m: Matrices, subject: str, directory: Path) -> None:
    if subject == "amd":
        m._amd = _parse_amd(_read(directory, "amd_gpus.json"))
    elif subject == "nvidia":
        m._nvidia = _parse_nvidia(_read(directory, "nvidia_gpus.json"))
    elif subject == "rocm":
        m._rocm, m._default_rocm = _parse_rocm(_read(directory, "rocm.json"))
    elif subject == "cuda":
        m._cuda, m._minor_compat, m._branches, m._archs = _parse_cuda(_read(directory, "cuda.json"))
    elif subject == "torch":
        m._torch = _parse_torch(_read(directory, "torch.json"))
    else:  # pragma: no cover - a typo in this module
        raise ValueError(subject)


def parse_dir(directory: Path, origin: str, lazy: bool = False) -> Matrices:
    """Parse one bundle directory; MatrixError (file and path) on the first problem.

    ``lazy`` reads bundle.json now and each subject on first use (for the shipped data, which
    the tests validate); otherwise every file is parsed before this returns."""
    bundle = _read(directory, "bundle.json")
    version = _Reader("bundle.json").get(bundle, "version", "$", str)
    m = Matrices(bundle=BundleInfo(version=version, path=str(directory), origin=origin), _dir=directory)
    if lazy:
        m._pending = set(SUBJECTS)
    else:
        for subject in SUBJECTS:
            _fill(m, subject, directory)
    return m


def bundled_dir() -> Path:
    """The matrices shipped with this gpuenv (the package gpuenv._matrices)."""
    from gpuenv import bundled

    return bundled.directory("matrices")


def state_dir() -> Path:
    """Where ``gpuenv matrix update`` keeps an installed bundle."""
    env = os.environ.get("GPUENV_STATE_DIR")
    if env:
        return Path(env) / "matrices"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/gpuenv/matrices")
    return Path.home() / ".cache" / "gpuenv" / "matrices"


_CACHE: dict[str, Matrices] = {}


def load(path: str | None = None) -> Matrices:
    """Load (once per process and path) the installed bundle if any, else the bundled one.

    ``path`` reads that directory only (no fallback): a bad one raises MatrixError. Without it,
    a broken installed bundle is passed over (``bundle.skipped`` says why) for the bundled data."""
    key = path or f"default:{state_dir()}"
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    if path is not None:
        result = parse_dir(Path(path), "given")
    else:
        skipped = None
        result = None
        installed = state_dir()
        if (installed / "bundle.json").is_file():
            try:
                result = parse_dir(installed, "installed")
            except MatrixError as exc:
                skipped = f"installed bundle at {installed} ignored: {exc}"
        if result is None:
            result = parse_dir(bundled_dir(), "bundled", lazy=True)
            if skipped:
                b = result.bundle
                result.bundle = BundleInfo(b.version, b.path, b.origin, skipped)
    _CACHE[key] = result
    return result


def clear_cache() -> None:
    """Forget parsed bundles (after ``matrix update``/``reset`` in the same process, and in tests)."""
    _CACHE.clear()
