"""Facts: what the probes read from one machine (contract: gpuenv.facts/1).

Frozen records (gpuenv.standins.record) mirror the public facts schema (tests/contracts/facts.schema.json). Facts
come from this probe, from older gpuenv versions, fleet inventories and users' bug reports, so
every document valid against that schema is read, never refused: a field left out means "not
known", as does ``None`` unless the schema gives null another meaning; ``False`` or an empty
tuple means "checked, and no". Two fields give null its own meaning, and keep "left out" apart
in a flag the JSON never carries: ``Gpu.kernel_driver`` (null: none bound; left out:
``driver_unknown``) and ``AptSource.signed_by`` (null: names no keyring; left out:
``signed_by_unknown``). ``to_dict``/``from_dict`` convert to and from the JSON document;
``from_dict`` refuses only what the schema refuses, with a ``FactsError`` naming the path.
"""

from __future__ import annotations

import re

from gpuenv.recordjson import build, fields_of
from gpuenv.standins.record import field, record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any


SCHEMA = "gpuenv.facts/1"
GPU_VENDORS = ("nvidia", "amd", "intel", "other")
_PCI_ID = r"^[0-9a-f]{4}:[0-9a-f]{4}$"  # the schema's pattern, with its semantics


# The schema types these as plain strings: an unknown value is left out, not written as null.
_NOT_NULL = {"omit_if_none": True}
# gpuenv's own bookkeeping, never written or read: whether a field was left out of the document.
_INTERNAL = {"internal": True}


class FactsError(ValueError):
    """A facts document that does not fit gpuenv.facts/1."""


@record(frozen=True)
class Host:
    arch: str
    hostname: str | None = None
    cpu_model: str | None = None
    memory_mib: int | None = None


@record(frozen=True)
class OsBase:
    """The Ubuntu or Debian release a derivative is built on (Linux Mint 22: ubuntu 24.04 noble)."""

    id: str
    version_id: str | None = field(default=None, metadata=_NOT_NULL)
    codename: str | None = field(default=None, metadata=_NOT_NULL)


@record(frozen=True)
class OS:
    id: str
    version_id: str | None
    codename: str | None = None
    id_like: tuple[str, ...] = ()
    pretty_name: str | None = None
    # Left out for Ubuntu, Debian and anything not known to be built on one of them.
    base: OsBase | None = field(default=None, metadata=_NOT_NULL)


@record(frozen=True)
class DkmsEntry:
    module: str
    version: str
    kernel: str | None = None
    status: str | None = None  # added | built | installed | broken


@record(frozen=True)
class AkmodsFailure:
    """A build akmods (Fedora and RPM Fusion's DKMS counterpart) left a failure log for:
    /var/cache/akmods/MODULE/VERSION-for-KERNEL.failed.log."""

    module: str
    version: str
    kernel: str


@record(frozen=True)
class Kernel:
    release: str
    cmdline: str | None = None
    headers_installed: bool | None = None
    secure_boot: bool | None = None
    modules_loaded: tuple[str, ...] | None = None
    modules_blacklisted: tuple[str, ...] | None = None
    tainted: int | None = None
    dkms: tuple[DkmsEntry, ...] | None = None
    # None: no akmods cache on this machine (or not probed); () none failed.
    akmods_failed: tuple[AkmodsFailure, ...] | None = field(default=None, metadata=_NOT_NULL)


@record(frozen=True)
class Platform:
    container: str | None
    wsl: bool
    virtualization: str | None = None
    cloud: str | None = field(default=None, metadata=_NOT_NULL)  # aws | gcp | azure | oracle | ...
    virtualization_evidence: str | None = field(default=None, metadata=_NOT_NULL)  # what decided
    # WSL only: the Windows build (10.0.22631.4541) as the Windows servicing directory names it.
    windows_build: str | None = field(default=None, metadata=_NOT_NULL)


@record(frozen=True)
class Gpu:
    vendor: str  # nvidia | amd | intel | other
    pci_id: str  # "1002:7550"
    subsystem_id: str | None = None
    pci_slot: str | None = None
    # The PCI revision ("df"): where one id is GPUs of two gfx targets (1002:73ff), it tells which.
    revision: str | None = field(default=None, metadata=_NOT_NULL)
    pci_class: str | None = None
    name: str | None = None
    kernel_driver: str | None = None
    gfx_target: str | None = None
    compute_capability: str | None = None
    architecture: str | None = None
    memory_mib: int | None = None
    uuid: str | None = None
    integrated: bool | None = None
    sources: tuple[str, ...] = ()
    driver_unknown: bool = field(default=False, metadata=_INTERNAL)  # kernel_driver left out

    def __post_init__(self) -> None:
        if self.vendor not in GPU_VENDORS:
            raise FactsError(f"gpu {self.pci_id}: vendor {self.vendor!r} is not one of {GPU_VENDORS}")
        if not re.match(_PCI_ID, self.pci_id):
            raise FactsError(f"gpu: pci_id {self.pci_id!r} is not vendor:device in lower-case hex")
        if len(self.pci_id) != 9:  # the schema's "$" also matches before a final newline
            object.__setattr__(self, "pci_id", self.pci_id[:9])
        if self.revision is not None and not re.fullmatch(r"[0-9a-fA-F]{2}", self.revision):
            raise FactsError(f"gpu {self.pci_id}: revision {self.revision!r} is not two hex digits")

    @property
    def driver_bound(self) -> bool | None:
        """A kernel driver is bound (True), none is (False), or the facts do not say (None)."""
        if self.kernel_driver is not None:
            return True
        return None if self.driver_unknown else False


@record(frozen=True)
class Nvidia:
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    kernel_module: str | None = None  # open | proprietary
    module_version: str | None = None
    nvml: str | None = field(default=None, metadata=_NOT_NULL)  # ok | not_installed | driver_not_loaded | version_mismatch | no_permission | error: MSG
    persistence_mode: bool | None = None  # NVML persistence mode of the GPUs (all on); None: unknown


@record(frozen=True)
class Amd:
    driver_version: str | None = None
    kfd: bool | None = None
    amdsmi: str | None = field(default=None, metadata=_NOT_NULL)  # ok | not_installed | error: MSG


@record(frozen=True)
class Toolkit:
    version: str
    path: str | None = None
    source: str | None = None  # package | runfile | pip
    # therock: ROCm's new release stream (/opt/rocm/core-X.Y, amdrocm-* packages, rocm wheels);
    # left out for the legacy stream and CUDA.
    stream: str | None = field(default=None, metadata=_NOT_NULL)
    # vendor: the vendor's own repository (repo.radeon.com, NVIDIA's); distribution: the
    # distribution's packages. Left out when not known.
    origin: str | None = field(default=None, metadata=_NOT_NULL)


@record(frozen=True)
class Toolkits:
    cuda: tuple[Toolkit, ...] = ()
    rocm: tuple[Toolkit, ...] = ()


@record(frozen=True)
class Packages:
    manager: str | None = None
    installed: dict[str, str] = field(default_factory=dict)
    unconfigured: tuple[str, ...] = ()


@record(frozen=True)
class AptSource:
    uri: str
    file: str | None = None
    suites: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    signed_by: str | None = None
    enabled: bool = True
    signed_by_unknown: bool = field(default=False, metadata=_INTERNAL)  # signed_by left out


@record(frozen=True)
class AptPin:
    """One stanza of /etc/apt/preferences(.d): which packages, which pin, what priority."""

    package: str
    pin: str
    priority: int
    file: str | None = None


@record(frozen=True)
class User:
    name: str | None = None
    uid: int | None = None
    groups: tuple[str, ...] = ()


@record(frozen=True)
class DeviceNode:
    exists: bool | None = None  # None: the document does not say
    mode: str | None = None
    group: str | None = None
    accessible: bool | None = None
    # The device cgroup (v1 devices.list) of the probing process lets it open the node read-write;
    # None (left out): not known (cgroup v2 keeps its device rules in eBPF, not in a file).
    cgroup_allowed: bool | None = field(default=None, metadata=_NOT_NULL)


@record(frozen=True)
class Torch:
    version: str | None = None  # "2.7.0+cu128"; a report may give only the build's cuda/hip
    cuda: str | None = None  # torch.version.cuda: null for a build without CUDA
    hip: str | None = None  # torch.version.hip: null for a build without HIP
    arch_list: tuple[str, ...] | None = None
    cuda_unknown: bool = field(default=False, metadata=_INTERNAL)  # cuda left out
    hip_unknown: bool = field(default=False, metadata=_INTERNAL)  # hip left out


@record(frozen=True)
class Python:
    executable: str | None = None
    version: str | None = None
    packages: dict[str, str] = field(default_factory=dict)
    torch: Torch | None = None


@record(frozen=True)
class ProbeError:
    probe: str
    message: str


@record(frozen=True)
class ProbeNote:
    """What a probe did instead of its first way, and why (the facts are whole: no failure)."""

    probe: str
    message: str


@record(frozen=True)
class Library:
    """A CUDA or ROCm library the dynamic loader can find (libraries.py)."""

    name: str  # cudart | cublas | cudnn | nccl | miopen | rocblas | rccl | hipblaslt
    version: str | None = None  # the file name's full version ("12.8.90"), else the soname's ("12")
    path: str | None = None  # the file the loader opens, as the machine sees it
    source: str | None = None  # ldconfig | ld_library_path | toolkit


@record(frozen=True)
class Tool:
    """A host compiler or build tool (toolchain.py): gcc, g++, clang, cmake, ninja, nvcc, hipcc, rocm-llvm."""

    name: str
    version: str | None = None
    path: str | None = None
    source: str | None = None  # package (dpkg) | path (where the command on PATH leads, live only) | file
    package: str | None = None  # the dpkg package it comes from (gcc-13, cmake)
    default: bool | None = None  # the unversioned command (gcc, g++, clang) runs this one


@record(frozen=True)
class Facts:
    host: Host
    os: OS
    kernel: Kernel
    platform: Platform
    gpus: tuple[Gpu, ...]
    collected_at: str | None = None
    gpuenv_version: str | None = None
    nvidia: Nvidia | None = None
    amd: Amd | None = None
    toolkits: Toolkits = field(default_factory=Toolkits)
    packages: Packages | None = None
    apt_sources: tuple[AptSource, ...] | None = None
    user: User | None = None
    device_nodes: dict[str, DeviceNode] | None = None
    python: Python | None = None
    environment: dict[str, str] | None = None
    errors: tuple[ProbeError, ...] = ()
    # Left out when there is none (most probes): None, never an empty list, so documents stay as they were.
    notes: tuple[ProbeNote, ...] | None = field(default=None, metadata=_NOT_NULL)
    # The proxy, CA and pip index variables by name, set or not (values never kept); live only.
    downloads: dict[str, bool] | None = field(default=None, metadata=_NOT_NULL)
    # Added fields: left out of the document when unknown (older facts files keep their digest).
    libraries: tuple[Library, ...] | None = field(default=None, metadata=_NOT_NULL)
    toolchain: tuple[Tool, ...] | None = field(default=None, metadata=_NOT_NULL)
    # Where the GPU-toolkit paths of the environment (and /usr/local/cuda, /opt/rocm) lead: the
    # real path, or None when the path does not exist.
    path_targets: dict[str, str | None] | None = field(default=None, metadata=_NOT_NULL)
    # APT's pins (/etc/apt/preferences and preferences.d); () checked, none; None not known.
    apt_pins: tuple[AptPin, ...] | None = field(default=None, metadata=_NOT_NULL)

    # -- conveniences used by checks and the planner (pure, derived from the fields) --
    def gpus_of(self, vendor: str) -> tuple[Gpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == vendor)

    @property
    def bus_read(self) -> bool:
        """The PCI bus was read whole (no "pci" probe error): only then does a vendor missing from
        ``gpus`` mean its GPU is not here. A sysroot without /sys, a device that could not be
        read: "not known", and no check may then call a driver a leftover or a box GPU-less."""
        return not any(e.probe == "pci" for e in self.errors)

    def installed(self, package: str) -> str | None:
        """Installed version of a dpkg/rpm package, or None."""
        return self.packages.installed.get(package) if self.packages else None

    def module_loaded(self, name: str) -> bool | None:
        loaded = self.kernel.modules_loaded
        return None if loaded is None else name in loaded

    def to_dict(self) -> dict[str, object]:
        doc: dict[str, object] = to_dict(self)  # a record is written as an object
        return doc

    def to_json(self) -> str:
        from gpuenv.standins.jsonout import dumps

        return dumps(self.to_dict())

    def digest(self) -> str:
        return digest(self)


# --------------------------------------------------------------------------------------------
# Conversion: the generic walker of gpuenv.recordjson, driven by the records' annotations, so
# that adding an optional field to a record is the whole change.

# Fields that describe the moment of probing, not the machine: left out of the digest so that a
# plan made from a facts file is not "stale" just because it was probed again a minute later.
_VOLATILE = ("collected_at", "gpuenv_version", "errors", "notes")


# Fields whose "left out" differs from null, and the flag that remembers it.
_LEFT_OUT: dict[type, dict[str, str]] = {
    Gpu: {"kernel_driver": "driver_unknown"},
    AptSource: {"signed_by": "signed_by_unknown"},
    Torch: {"cuda": "cuda_unknown", "hip": "hip_unknown"},
}


_SCALARS = frozenset({str, int, float, bool, type(None)})


def to_dict(obj: object) -> Any:  # a JSON value
    if type(obj) in _SCALARS:  # most values (a package list's versions): tested first, and cheaply
        return obj
    if hasattr(type(obj), "__record_fields__"):
        out: dict[str, object] = {"schema": SCHEMA} if isinstance(obj, Facts) else {}
        for f in fields_of(type(obj)):
            if f.metadata.get("internal"):
                continue
            value = getattr(obj, f.name)
            if value is None and f.metadata.get("omit_if_none"):
                continue
            if f.name in _LEFT_OUT.get(type(obj), {}) and getattr(obj, _LEFT_OUT[type(obj)][f.name]):
                continue  # not known: left out, as it came
            out[f.name] = to_dict(value)
        return out
    if isinstance(obj, tuple | list):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def digest(facts: Facts) -> str:
    """sha256 of the canonical facts (volatile fields removed), as plans record it."""
    doc = facts.to_dict()
    for key in _VOLATILE:
        doc.pop(key, None)
    import json

    from gpuenv.standins.checksum import sha256_hex

    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))

    return "sha256:" + sha256_hex(canonical.encode())


def from_dict(doc: object) -> Facts:
    if not isinstance(doc, dict):
        raise FactsError("facts: expected a JSON object at the top level")
    if doc.get("schema") != SCHEMA:
        raise FactsError(f"facts: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    return build(Facts, doc, "facts", _LEFT_OUT, FactsError)


def loads(text: str | bytes) -> Facts:
    """Facts from JSON text, through the one JSON input reader (UTF-8, depth limit)."""
    from gpuenv.standins.jsoninput import InputError, parse

    try:
        doc = parse(text.encode() if isinstance(text, str) else text, "facts")
    except InputError as exc:
        raise FactsError(str(exc)) from None
    return from_dict(doc)


def read(path: str) -> Facts:
    """Facts from a file ("-": standard input); FactsError with one line when it cannot be read."""
    from gpuenv.standins.jsoninput import InputError, read_bytes

    try:
        data = read_bytes(path, "facts")
    except InputError as exc:
        raise FactsError(str(exc)) from None
    try:
        return loads(data)
    except FactsError as exc:
        msg = str(exc)
        raise FactsError(msg if msg.startswith("facts ") else f"facts {path}: {msg}") from None
