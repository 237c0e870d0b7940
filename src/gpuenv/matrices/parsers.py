"""The parsers: one per matrices file, each a check of the whole file (or, for the shipped data,
of each entry when it is first asked for) that builds the records."""

from __future__ import annotations

from gpuenv.matrices.reader import (
    _AMD_INDEX,
    _BRANCH,
    _CC,
    _CHIP,
    _CUDA_CODE,
    _FIND_LINKS,
    _GFX,
    _INDEX,
    _KERNEL_DRIVERS,
    _KFD,
    _PCI,
    _PTX_CODE,
    _PY,
    _REVISION,
    _SERIES,
    _STACKS,
    _TORCH_VERSION,
    _VARIANT,
    _VERSION,
    Reader,
    _fullmatch,
    _read,
    _show,
)
from gpuenv.matrices.records import (
    AmdGpu,
    AmdWheels,
    CudaToolkit,
    DriverBranch,
    GfxOverride,
    HostCompilers,
    NvidiaArch,
    NvidiaGpu,
    TorchArchNote,
    TorchVariant,
    vkey,
)

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.matrices.index import Located, Section
    from gpuenv.matrices.query import Matrices

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


def _amd_located(index: Section) -> dict[str, AmdGpu | _Unread]:
    """As ``_parse_amd`` of the shipped data, where amd_gpus.index.json locates each GPU: an entry is read
    from its bytes when its id is first looked up (and its id checked then against the index's)."""
    r = Reader("amd_gpus.json")
    return {pci: _Unread((r, f"$.gpus[{i}]", g, pci)) for i, (pci, g) in enumerate(index.entries("gpus"))}


def _amd_gpu(r: Reader, p: str, g: dict[str, Any] | Located, pci: str) -> AmdGpu:
    if not isinstance(g, dict):  # Located by the file's index
        g = g.entry(r, p, "pci_id", pci, _PCI)
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
        gfx_by_revision=r.str_map(g, "gfx_target_by_revision", p, optional=True, keys=_REVISION, values=_GFX) or None,
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
        rocm_from_pip=r.get(v, "rocm_from_pip", pv, str, optional=True),
    )


class _Unread(tuple):  # type: ignore[type-arg]  # its items differ by subject (see below)
    """Shipped data not parsed yet, with what parsing it needs: a torch release (reader, path,
    release, versions; see _parse_torch), an AMD GPU entry (reader, path, entry, PCI id) or a
    ROCm release (reader, path, release, version; see _parse_rocm). The entry is a dict, or a
    Located one where the file's index found it."""


def _parse_torch(
    doc: object, whole: bool = True
) -> tuple[
    dict[str, list[TorchVariant] | _Unread], dict[str, TorchArchNote], dict[str, GfxOverride], dict[str, AmdWheels]
]:
    """torch.json's releases, notes, overrides and AMD's own wheel indexes (by ROCm release). With ``whole`` false (the shipped data, which
    the tests validate whole), a release's variants are parsed when it is first asked for:
    `gpuenv torch` reads the newest release and stops there, a doctor run the installed one."""
    r = Reader("torch.json")
    found: list[tuple[str, dict[str, Any] | Located, tuple[str, ...]]] = [
        (p, rel, r.strs(rel, "versions", p)) for p, rel in r.items(doc, "releases", "$")
    ]
    return _torch(r, found, doc, whole)


def _parse_torch_located(
    index: Section,
) -> tuple[
    dict[str, list[TorchVariant] | _Unread], dict[str, TorchArchNote], dict[str, GfxOverride], dict[str, AmdWheels]
]:
    """As ``_parse_torch`` of the shipped data, where torch.index.json locates each release (by its
    versions, held to their pattern now and to the release's own when it is read) and the notes,
    overrides and AMD's wheels, which are read now."""
    r = Reader("torch.json")
    found: list[tuple[str, dict[str, Any] | Located, tuple[str, ...]]] = []
    for i, (versions, rel) in enumerate(index.entries("releases", list)):
        p = f"$.releases[{i}]"
        found.append((p, rel, r.strs({"versions": versions}, "versions", p)))
    rest = {key: index.value(key).read() for key in ("arch_notes", "gfx_overrides", "amd_wheels") if index.has(key)}
    return _torch(r, found, rest, False)


def _torch(
    r: Reader, found: list[tuple[str, dict[str, Any] | Located, tuple[str, ...]]], doc: object, whole: bool
) -> tuple[
    dict[str, list[TorchVariant] | _Unread], dict[str, TorchArchNote], dict[str, GfxOverride], dict[str, AmdWheels]
]:
    out: dict[str, list[TorchVariant] | _Unread] = {}
    for p, rel, versions in found:
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
    wheels: dict[str, AmdWheels] = {}
    for p, w in r.items(doc, "amd_wheels", "$", optional=True):
        index_url = r.get(w, "index_url", p, str)
        if not _fullmatch(_AMD_INDEX)(index_url):
            raise r.fail(f"{p}.index_url", f"{_show(index_url)} is not an https://repo.amd.com/rocm/ index")
        rocm = r.text(w, "rocm", p, _VERSION)
        wheels[rocm] = AmdWheels(
            rocm=rocm,
            index_url=index_url,
            torch=r.strs(w, "torch", p, pattern=_TORCH_VERSION),
            archs=r.strs(w, "archs", p, pattern=_GFX),
            source=r.get(w, "source", p, str),
            confirmed=r.get(w, "confirmed", p, bool),
            notes=r.strs(w, "notes", p, optional=True),
        )
        if not wheels[rocm].torch:
            raise r.fail(f"{p}.torch", "no torch release")
    return out, notes, overrides, wheels


def _read_release(out: dict[str, list[TorchVariant] | _Unread], unread: _Unread) -> None:
    """Parse one torch release in place: each of its versions gets its own (frozen) variants."""
    r, p, rel, versions = unread
    if not isinstance(rel, dict):  # Located by the file's index
        rel = rel.entry(r, p, "versions", versions)
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
    # The shipped data, where an index locates the entries of rocm.json, amd_gpus.json and
    # torch.json (gpuenv.matrices.index), is read an entry at a time.
    if subject == "amd":
        from gpuenv.matrices.index import section  # only where the shipped data is read lazily

        index = None if whole else section(directory, "amd_gpus.json")
        m._amd = _parse_amd(_read(directory, "amd_gpus.json"), whole) if index is None else _amd_located(index)
    elif subject == "nvidia":
        m._nvidia = _parse_nvidia(_read(directory, "nvidia_gpus.json"))
    elif subject == "rocm":
        from gpuenv.matrices.index import section
        from gpuenv.matrices.parsers_rocm import _parse_rocm, _parse_rocm_located  # not on an NVIDIA run

        index = None if whole else section(directory, "rocm.json")
        rocm = _parse_rocm(_read(directory, "rocm.json"), whole) if index is None else _parse_rocm_located(index)
        m._rocm, m._rocm_versions, m._default_rocm = rocm
    elif subject == "cuda":
        m._cuda, m._minor_compat, m._branches, m._archs = _parse_cuda(_read(directory, "cuda.json"))
    elif subject == "torch":
        from gpuenv.matrices.index import section

        index = None if whole else section(directory, "torch.json")
        torch = _parse_torch(_read(directory, "torch.json"), whole) if index is None else _parse_torch_located(index)
        m._torch, m._torch_notes, m._gfx_overrides, m._amd_wheels = torch
    else:  # pragma: no cover - a typo in this module
        raise ValueError(subject)


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
