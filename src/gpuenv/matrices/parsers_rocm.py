"""rocm.json's parser: the releases, each checked whole (an installed bundle's before use, the
shipped data's when first asked for: ``_parse_rocm``, ``_parse_rocm_located``)."""

from __future__ import annotations

from gpuenv.matrices.index import Located, Section
from gpuenv.matrices.parsers import _Unread
from gpuenv.matrices.reader import _GFX, _VERSION, Reader, _fullmatch, _show
from gpuenv.matrices.records import GPU_CLASS_NAMES, GpuLimit, OsSupport, RocmRelease, vkey
from gpuenv.matrices.routes import RocmRoute

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from typing import Any

_LEVELS = ("full", "preview", "radeon", "deprecated")


# The GPU classes AMD limits an OS entry to (gpuinfo.gpu_class names a GPU's), and its model names.
_GPU_CLASSES = tuple(GPU_CLASS_NAMES)
_MODEL = r"MI\d+[A-Z]*"


def _gpu_limit(r: Reader, o: dict[str, Any], po: str) -> GpuLimit | None:
    """An OS entry's ``gpus_only``; absent (older bundles) means not limited or not known."""
    limit = r.get(o, "gpus_only", po, dict, optional=True)
    return None if limit is None else _limit(r, limit, f"{po}.gpus_only")


def _point_limits(r: Reader, o: dict[str, Any], po: str, points: tuple[str, ...]) -> dict[str, GpuLimit] | None:
    """An OS entry's ``gpus_only_by_point``: a limit per point release the entry lists (a key it
    does not list would never be judged); absent (older bundles) means no point release is narrower."""
    by_point = r.get(o, "gpus_only_by_point", po, dict, optional=True)
    if by_point is None:
        return None
    pp = f"{po}.gpus_only_by_point"
    if not by_point:
        raise r.fail(pp, "is empty: leave it out where no point release is narrower")
    out = {}
    for point in by_point:
        if point not in points:
            raise r.fail(f"{pp}.{point}", f"is not one of the entry's point_releases {list(points)}")
        out[point] = _limit(r, r.get(by_point, point, pp, dict), f"{pp}.{point}")
    return out


def _limit(r: Reader, limit: dict[str, Any], pl: str) -> GpuLimit:
    """One GpuLimit (``gpus_only``, or a point release's) at ``pl``."""
    gpu_class = r.get(limit, "class", pl, str)
    if gpu_class not in _GPU_CLASSES:
        raise r.fail(f"{pl}.class", f"{_show(gpu_class)} is not one of {_GPU_CLASSES}")
    models = r.get(limit, "models", pl, list, optional=True)
    if models == []:
        raise r.fail(f"{pl}.models", "is empty: leave it out for every GPU of the class")
    also = r.strs(limit, "also", pl, optional=True)
    for other in also:
        if other not in _GPU_CLASSES or other == gpu_class:
            raise r.fail(f"{pl}.also", f"{_show(other)} is not one of {_GPU_CLASSES} other than {_show(gpu_class)}")
    return GpuLimit(
        gpu_class=gpu_class,
        models=None if models is None else r.strs(limit, "models", pl, pattern=_MODEL),
        excluded=r.strs(limit, "except", pl, optional=True, pattern=_MODEL),
        also=also,
    )


def _route(r: Reader, rel: dict[str, Any], p: str, version: str) -> RocmRoute | None:
    """A release's ``repository`` (its route's key and OS directories, copied from repos.json), or None."""
    spec = r.get(rel, "repository", p, dict, optional=True)
    if spec is None:
        return None
    pr = f"{p}.repository"
    distros = r.get(spec, "distros", pr, list, optional=True)
    return RocmRoute(
        rocm=version,
        fingerprint=r.text(spec, "fingerprint", pr, "[0-9A-F]{40}", optional=True),
        key_confirmed=r.get(spec, "key_confirmed", pr, bool),
        distros=None if distros is None else tuple(
            (r.get(d, "os", f"{pr}.distros", str), r.get(d, "version", f"{pr}.distros", str)) for d in distros
        ),
    )


def _parse_rocm(doc: object, whole: bool = True) -> tuple[list[RocmRelease | _Unread], list[str], str]:
    """rocm.json's releases oldest first, their versions (in the same order) and the default.
    With ``whole`` false (the shipped data, which the tests validate whole), only the versions
    are checked now and a release is checked and built when it is first asked for: a doctor run
    on a box with ROCm installed reads its release, and of the others only their versions."""
    r = Reader("rocm.json")
    found: list[tuple[str, str, dict[str, Any] | Located]] = [
        (r.text(rel, "version", p, _VERSION), p, rel) for p, rel in r.items(doc, "releases", "$")
    ]
    return _releases(r, found, r.get(doc, "default", "$", str), whole)


def _parse_rocm_located(index: Section) -> tuple[list[RocmRelease | _Unread], list[str], str]:
    """As ``_parse_rocm`` of the shipped data, where rocm.index.json locates each release and the
    default: a release is read from its bytes when first asked for, and its version checked
    then against the one the index gives (which is held to the version's pattern now)."""
    r = Reader("rocm.json")
    version_ok = _fullmatch(_VERSION)
    found: list[tuple[str, str, dict[str, Any] | Located]] = []
    for i, (version, located) in enumerate(index.entries("releases")):
        p = f"$.releases[{i}]"
        if not version_ok(version):
            raise r.fail(f"{p}.version", f"{_show(version)} is not well formed")
        found.append((version, p, located))
    default = r.get({"default": index.value("default").read()}, "default", "$", str)
    return _releases(r, found, default, False)


def _releases(
    r: Reader, found: list[tuple[str, str, dict[str, Any] | Located]], default: str, whole: bool
) -> tuple[list[RocmRelease | _Unread], list[str], str]:
    found.sort(key=lambda x: vkey(x[0]))
    versions = [version for version, _, _ in found]
    if default not in versions:
        raise r.fail("$.default", f"{_show(default)} is not a bundled release")
    releases: list[RocmRelease | _Unread] = [
        _rocm_release(r, p, rel, version) if whole else _Unread((r, p, rel, version)) for version, p, rel in found
    ]
    return releases, versions, default


def _rocm_release(r: Reader, p: str, rel: dict[str, Any] | Located, version: str) -> RocmRelease:
    """One release of rocm.json at ``p``, checked whole (its version was checked already, or
    given by rocm.index.json: then it must be the release's)."""
    if isinstance(rel, Located):
        rel = rel.entry(r, p, "version", version, _VERSION)
    oses = []
    for po, o in r.items(rel, "os", p):
        points = r.strs(o, "point_releases", po)
        oses.append(
            OsSupport(
                id=r.get(o, "id", po, str),
                version=r.get(o, "version", po, str),
                point_releases=points,
                kernels=r.strs(o, "kernels", po),
                ga_kernels=r.strs(o, "ga_kernels", po, optional=True),
                hwe_kernels=r.strs(o, "hwe_kernels", po, optional=True),
                source=r.get(o, "source", po, str),
                confirmed=r.get(o, "confirmed", po, bool),
                notes=r.strs(o, "notes", po, optional=True),
                gpus_only=_gpu_limit(r, o, po),
                gpus_only_by_point=_point_limits(r, o, po, points),
            )
        )
    gpus = r.str_map(rel, "gpus", p, keys=_GFX)
    for gfx, level in gpus.items():
        if level not in _LEVELS:
            raise r.fail(f"{p}.gpus.{gfx}", f"level {_show(level)} is not one of {_LEVELS}")
    return RocmRelease(
        version=version,
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
        torch_instinct_only=r.strs(rel, "torch_instinct_only", p, pattern=_VERSION, optional=True),
        gpus_unconfirmed=_unconfirmed_gpus(r, rel, p, gpus),
        repository=_route(r, rel, p, version),
    )


def _unconfirmed_gpus(r: Reader, rel: dict[str, Any], p: str, gpus: dict[str, str]) -> tuple[str, ...]:
    """The release's gfx targets that no AMD page confirms (``gpus_unconfirmed``): each must be one
    of its ``gpus``."""
    out = r.strs(rel, "gpus_unconfirmed", p, pattern=_GFX, optional=True)
    for gfx in out:
        if gfx not in gpus:
            raise r.fail(f"{p}.gpus_unconfirmed", f"{_show(gfx)} is not one of the release's gpus")
    return tuple(out)


