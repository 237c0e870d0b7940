"""ROCm installs of the new release stream (TheRock: ROCm 7.14, Core SDK 10.0 and later).

The legacy stream installs into ``/opt/rocm-X.Y.Z`` from ``rocm-*``/``hip*`` packages and
``toolkits.py`` finds it by its ``.info/version``. The new stream lives elsewhere, so a
7.14 box would look like a box without ROCm. What it looks like, from primary sources:

- Native packages install into ``/opt/rocm/core-X.Y`` (``build_package.py``: the default prefix
  ``/opt/rocm/core`` gets ``-MAJOR.MINOR`` appended; ASAN builds ``core-asan-X.Y``), and the
  ``amdrocm-core`` postinst points the alternatives ``/opt/rocm/core``, ``/opt/rocm/bin``,
  ``/opt/rocm/lib``, ``/opt/rocm/include`` ... at that tree (ROCm/TheRock
  build_tools/packaging/linux/build_package.py and
  template/scripts/amdrocm-core-postinst.j2 @ therock-7.14, 418cd5f6, 2026-07-09). So
  ``/opt/rocm`` becomes a directory of links, not a tree with its own version file.
- The tree carries rocm-core's ``.info/version`` (TheRock base/artifact.toml ships
  ``base/rocm-core/stage/.info/**``; base/CMakeLists.txt passes ``-DROCM_VERSION=X.Y.Z``).
- Package names are ``amdrocm-[component]`` with the ROCm MAJOR.MINOR appended (and the
  gfx target last): ``amdrocm-core7.14``, ``amdrocm7.14-gfx1201``, ``amdrocm-runtime10.0``
  (packaging_utils.update_package_name @ therock-7.14; the transition guide,
  rocm.docs.amd.com/en/docs-7.14.0/about/transition-guide-TheRock.html, "Package names").
  Their Debian version is ``X.Y.Z`` for a stable release, ``X.Y.Z~preN`` / ``~YYYYMMDD`` for
  pre-releases and nightlies, with a build suffix (docs/packaging/versioning.md @ therock-7.14).
- The pip route installs ``rocm``, ``rocm-sdk-core``, ``rocm-sdk-libraries``,
  ``rocm-sdk-devel`` (RELEASES.md @ therock-7.14); stable versions are ``X.Y.Z``, ``X.Y.ZrcN``
  pre-releases, ``X.Y.ZaYYYYMMDD`` nightlies (versioning.md).
"""

from __future__ import annotations

import re

from gpuenv.facts import Python, Toolkit
from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import ProbeError

STREAM = "therock"
ROOT = "/opt/rocm"
# amdrocm-core7.14, amdrocm7.14-gfx1201, amdrocm-core-dev10.0-gfx1201, amdrocm-fft-host8.2:
# the MAJOR.MINOR the name carries.
# Patterns, not compiled ones: re compiles (and caches) them on first use, which a box without
# TheRock packages never reaches, so `probe` does not pay for them at import (start-up time).
_PACKAGE = r"amdrocm(?:-[a-z0-9-]*?)?([0-9]+\.[0-9]+)(?:-[a-z0-9]+)*"
_RELEASE = r"([0-9]+\.[0-9]+\.[0-9]+)"
# The wheels whose version is the SDK's (the `rocm` sdist meta package and the SDK parts).
PIP_PACKAGES = ("rocm-sdk-core", "rocm")


def package_series(name: str) -> str | None:
    """``amdrocm-core7.14`` -> ``7.14``; None for a name that is not a versioned TheRock package
    (the unversioned meta packages ``amdrocm``/``amdrocm-core`` carry no series)."""
    if not name.startswith("amdrocm"):
        return None  # nearly every package: no pattern run
    m = re.fullmatch(_PACKAGE, name)
    return m.group(1) if m else None


def package_release(version: str) -> str | None:
    """A TheRock deb's version -> the release it is: ``7.14.0-1`` and ``1:10.0.0-4`` give
    ``7.14.0``/``10.0.0``; ``7.14.0~pre1`` and ``7.14.0~20260501`` are not the release
    (None: a pre-release or nightly is not judged as the release it leads to)."""
    upstream = version.split(":", 1)[-1]
    if "~" in upstream:
        return None
    m = re.match(_RELEASE, upstream)
    return m.group(1) if m else None


def _trees(host: Sysroot) -> list[str]:
    """The real ``/opt/rocm/core-*`` trees (links, the alternatives ``core``/``core-10``, skipped:
    they lead to one of these)."""
    out = []
    for name in host.listdir(ROOT):
        path = f"{ROOT}/{name}"
        if (name == "core" or name.startswith("core-")) and not host.is_link(path) and host.is_dir(path):
            out.append(path)
    return out


def _tree_version(host: Sysroot, path: str) -> str | None:
    from gpuenv.probe.toolkits import parse_rocm_version, parse_rocm_version_h

    text = host.read_optional(f"{path}/.info/version")
    if text is not None:
        return parse_rocm_version(text)
    header = host.read_optional(f"{path}/include/rocm-core/rocm_version.h")
    return parse_rocm_version_h(header) if header is not None else None


def probe(host: Sysroot, installed: dict[str, str], errors: list[ProbeError]) -> list[Toolkit]:
    """TheRock trees under /opt/rocm, and amdrocm packages whose tree is not there (a half-removed
    install, or one the probe cannot read): each reported once, with its release."""
    from gpuenv.facts import ProbeError

    series: dict[str, str] = {}  # MAJOR.MINOR -> the release the packages of that series say
    for name, version in installed.items():
        s = package_series(name)
        if s is not None:
            release = package_release(version)
            if release is not None and release.startswith(f"{s}."):
                series.setdefault(s, release)
    found: list[Toolkit] = []
    seen: set[str] = set()
    for path in _trees(host):
        try:
            found_version = _tree_version(host, path)
        except Exception as exc:
            errors.append(ProbeError("toolkits.rocm", f"{path}: {exc}"))
            continue
        if found_version is None:
            continue
        version = found_version
        s = ".".join(version.split(".")[:2])
        source = "package" if s in series else None
        found.append(Toolkit(version=version, path=path, source=source, stream=STREAM))
        seen.add(s)
    for s, release in sorted(series.items()):
        if s not in seen:
            found.append(Toolkit(version=release, path=None, source="package", stream=STREAM))
    return found


def from_python(python: Python | None) -> list[Toolkit]:
    """The ROCm SDK wheels of the probed Python environment, as one install (path null: the
    wheels live in site-packages, not in a tree of their own)."""
    if python is None:
        return []
    for name in PIP_PACKAGES:
        version = python.packages.get(name)
        if version:
            # The version as pip has it: 7.14.0rc1 or 7.14.0a20260501 is not the release 7.14.0,
            # and the matrices (which know releases) leave it unjudged rather than misjudged.
            return [Toolkit(version=version, path=None, source="pip", stream=STREAM)]
    return []
