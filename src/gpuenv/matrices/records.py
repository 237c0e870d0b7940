"""The matrices' records: what the resolver, ``gpuenv torch`` and the planner read (see the
package docstring for the contract), the one error and the version key."""

from __future__ import annotations

import re

from gpuenv.standins.record import field, record

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from gpuenv.matrices.routes import RocmRoute

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

    def dated(self) -> str | None:
        """The bundle's date, YYYY-MM-DD, from its version (a bundle is versioned by its date:
        "2026.12.07"); None for a version that is no date."""
        import re

        m = re.fullmatch(r"(\d{4})\.(\d{2})\.(\d{2})(\..*)?", self.version)
        return f"{m[1]}-{m[2]}-{m[3]}" if m else None

    def age_days(self, today: str) -> int | None:
        """Days from the bundle's date to ``today`` (YYYY-MM-DD); None where either is no date."""
        import datetime

        try:
            return (datetime.date.fromisoformat(today) - datetime.date.fromisoformat(self.dated() or "")).days
        except ValueError:
            return None


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
    # PCI revision ("DF") -> gfx target, for the revisions of an id whose target is not gfx_target
    gfx_by_revision: dict[str, str] | None = None
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

    def target(self, revision: str | None) -> str | None:
        """The gfx target of a PCI revision ("df"): its own where the id's revisions differ (1002:73ff
        DF is gfx1031, the others gfx1032), else the entry's."""
        if revision and self.gfx_by_revision:
            return self.gfx_by_revision.get(revision.upper(), self.gfx_target)
        return self.gfx_target


@record(frozen=True)
class NvidiaGpu:
    pci_id: str  # "10de:2335"
    name: str  # "NVIDIA H200"
    chip: str | None  # "GH100"
    architecture: str  # "Hopper"
    compute_capability: str  # "9.0"
    source: str
    confirmed: bool = True


_MODEL = r"\bMI\d+[A-Z]*\b"  # compiled at its first use (an Instinct GPU), not at import


def instinct_models(name: str) -> frozenset[str]:
    """AMD's Instinct model names in a product name: "AMD Instinct MI250X / MI250" -> MI250X, MI250."""
    return frozenset(re.findall(_MODEL, name))


def _among(models: frozenset[str], listed: tuple[str, ...]) -> bool | None:
    """All of a GPU's model names are listed (True), none is (False), or it cannot be said (None:
    the model is unknown, or one PCI id is several models and only some are listed)."""
    if not models:
        return None
    hit = models & frozenset(listed)
    return True if hit == models else False if not hit else None


@record(frozen=True)
class GpuLimit:
    """The GPUs an OS entry of a release is supported for, in AMD's terms: a GPU class
    ("instinct"), only the named models of it when ``models`` is given, less the ``excluded``
    models ("Instinct GPUs only, except the MI350P and MI325X"), and every GPU of the classes in
    ``also`` ("Instinct GPUs except the MI350P, and Radeon GPUs": Ryzen APUs are not listed)."""

    gpu_class: str  # "instinct"
    models: tuple[str, ...] | None = None  # AMD's model names ("MI300X"); None: every GPU of the class
    excluded: tuple[str, ...] = ()
    also: tuple[str, ...] = ()  # further classes supported whole ("radeon")

    def admits(self, gpu_class: str | None, models: frozenset[str]) -> bool | None:
        """Whether a GPU of this class and these model names is supported on the entry; None when
        the facts cannot say (its class unknown, or its model where models are named)."""
        if gpu_class is None:
            return None
        if gpu_class in self.also:
            return True
        if gpu_class != self.gpu_class:
            return False
        if self.models is not None:
            listed = _among(models, self.models)
            if listed is not True:
                return listed
        if self.excluded:
            out = _among(models, self.excluded)
            return None if out is None else not out
        return True

    def describe(self) -> str:
        """'Instinct GPUs except the MI350P and MI325X', 'Instinct MI300X and MI300A',
        'Instinct GPUs except the MI350P, and Radeon GPUs'."""
        if self.models is not None:
            text = f"{self.gpu_class.capitalize()} {_and(self.models)}"
        else:
            text = GPU_CLASS_NAMES[self.gpu_class] + (f" except the {_and(self.excluded)}" if self.excluded else "")
        if not self.also:
            return text
        others = tuple(GPU_CLASS_NAMES[c] for c in self.also)
        return f"{text}, and {_and(others)}" if self.excluded else _and((text, *others))


# AMD's words for each GPU class its compatibility tables name; the parser admits only these keys
GPU_CLASS_NAMES = {"instinct": "Instinct GPUs", "radeon": "Radeon GPUs", "ryzen": "Ryzen APUs"}


def _and(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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
    # The GPUs AMD supports this OS for in this release; None: not limited, or not known to be.
    gpus_only: GpuLimit | None = None
    # Point releases AMD lists for fewer GPUs than the entry ("9.4": Instinct GPUs except the
    # MI350P), each judged on top of gpus_only; a point release not named here is judged by
    # gpus_only alone. None: no point release is narrower (or none is known to be).
    gpus_only_by_point: dict[str, GpuLimit] | None = None

    def point_limit(self, point: str | None) -> GpuLimit | None:
        """The narrower limit AMD gives this point release ("9.4"), if it gives one."""
        return (self.gpus_only_by_point or {}).get(point) if point else None


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
    # Of ``torch``, the versions AMD lists for Instinct GPUs only (10.1.0: 2.13.0, 2.12.0; #42).
    torch_instinct_only: tuple[str, ...] = ()
    # Of ``gpus``, the targets no AMD page confirms for this release, in a release AMD's pages
    # otherwise confirm (7.1.1-7.2.4's Ryzen gfx1150/gfx1151, read from secondary sources; #42).
    gpus_unconfirmed: tuple[str, ...] = ()
    # The repository route gpuenv installs it from (rocm.json ``repository``, copied from repos.json),
    # None where gpuenv has none: what `install auto` may plan (gpuenv.matrices.routes, #42).
    repository: RocmRoute | None = None

    def support(self, gfx: str) -> str | None:
        """Support level of a gfx target in this release, or None when unsupported."""
        return self.gpus.get(gfx)

    def unconfirmed(self, what: str) -> str:
        """A finding's words where this release's ``what`` decides it and no AMD page confirms the
        release's data (#42); "" where AMD's pages do."""
        if self.confirmed:
            return ""
        return f" ROCm {self.version}'s {what} is not confirmed by AMD (see its notes: gpuenv matrix show rocm)."

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
    # The ROCm runtime is not in the wheel but installed from pip packages (rocm7.14: TheRock's
    # rocm[libraries,device-all]), a requirement the pick ranks below a bundled runtime (#42).
    rocm_from_pip: str | None = None

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
class AmdWheels:
    """AMD's own PyTorch wheels for one release of ROCm's new stream (TheRock): one index for every
    GPU, the GPU picked by a pip extra (``torch[device-gfx1151]``). PyTorch publishes no index for
    these releases; its own rocm7.x wheels bundle an older ROCm user space."""

    rocm: str  # "10.0.0"
    index_url: str  # "https://stable.repo.amd.com/rocm/whl-next/"
    torch: tuple[str, ...]  # torch releases AMD lists for it, newest first: ("2.13.0", ...)
    archs: tuple[str, ...]  # gfx targets with a device extra
    source: str
    confirmed: bool = True
    notes: tuple[str, ...] = ()

    def requirement(self, archs: tuple[str, ...]) -> str:
        """The pip requirement of its newest torch for these targets: 'torch[device-gfx1151]==2.13.0'."""
        extras = ",".join(f"device-{a}" for a in dict.fromkeys(archs))
        return f"torch[{extras}]=={self.torch[0]}"


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



@record(frozen=True)
class HostCompilers:
    cuda: str  # release series, "12.8"
    gcc: tuple[int, int]  # (min, max) major, inclusive
    clang: tuple[int, int]
    source: str
    confirmed: bool
    rule: str = ""  # how nvcc judges the host compiler (major only; -allow-unsupported-compiler)

