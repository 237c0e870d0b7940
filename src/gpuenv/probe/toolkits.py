"""Installed CUDA toolkits (/usr/local/cuda*) and ROCm releases (/opt/rocm*; the new stream's
/opt/rocm/core-X.Y and wheels in therock.py)."""

from __future__ import annotations

import re

from gpuenv.facts import Python, Toolkit, Toolkits
from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import AptSource, Packages, ProbeError

_CUDA_TXT = r"CUDA Version\s+([0-9][0-9.]*)"


def parse_cuda_version_json(text: str) -> str:
    import json  # only for a tree with a version.json: a probe writes its JSON without json

    doc = json.loads(text)
    version = doc["cuda"]["version"] if isinstance(doc, dict) and isinstance(doc.get("cuda"), dict) else None
    if not isinstance(version, str) or not version:
        raise ValueError("version.json has no cuda.version")
    return version


def parse_cuda_version_txt(text: str) -> str:
    m = re.search(_CUDA_TXT, text)
    if not m:
        raise ValueError("version.txt has no 'CUDA Version N'")
    return m.group(1)


def parse_rocm_version(text: str) -> str:
    """``/opt/rocm-X/.info/version`` holds e.g. ``7.2.0-43``: the release, then the build number
    (dropped: the release is what matrices and users name)."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)*)(?:-[0-9A-Za-z.~+]+)?", line)
    if not m:
        raise ValueError(f"not a ROCm version: {line[:40]!r}")
    return m.group(1)


CUDA_H_HEAD = 128 << 10
# A #define at the start of a line: the lookbehind after the literal, not a leading (?m)^, so
# that the search jumps from one "#define" to the next instead of trying every position of the
# 14 KB before CUDA_VERSION (a fifth of the time).
_CUDA_H = r"#define(?<![^\n]#define)\s+CUDA_VERSION\s+(\d+)"
_ROCM_H = r"#define(?<![^\n]#define)\s+ROCM_VERSION_(MAJOR|MINOR|PATCH)\s+(\d+)"


def parse_cuda_h(text: str) -> str:
    """include/cuda.h's CUDA_VERSION 13000 -> "13.0" (major*1000 + minor*10)."""
    m = re.search(_CUDA_H, text)
    if not m:
        raise ValueError("cuda.h has no CUDA_VERSION")
    n = int(m.group(1))
    return f"{n // 1000}.{(n % 1000) // 10}"


def parse_rocm_version_h(text: str) -> str:
    """rocm_version.h's ROCM_VERSION_MAJOR/MINOR/PATCH -> "6.4.1"."""
    parts = dict(re.findall(_ROCM_H, text))
    if not {"MAJOR", "MINOR", "PATCH"} <= set(parts):
        raise ValueError("rocm_version.h has no ROCM_VERSION_MAJOR/MINOR/PATCH")
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"


def _cuda_version(host: Sysroot, path: str) -> tuple[str, str | None] | None:
    """(version, source) of a CUDA tree: its version.json or version.txt (NVIDIA's installers),
    else include/cuda.h (a tree laid out from NVIDIA's pip packages or a conda env has no version
    file; its dist-info folders say it came from pip)."""
    text = host.read_optional(f"{path}/version.json")
    if text is not None:
        return parse_cuda_version_json(text), None
    txt = host.read_optional(f"{path}/version.txt")
    if txt is not None:
        return parse_cuda_version_txt(txt), None
    try:
        # CUDA_VERSION is defined near the top (14 KB into 13.0's 1.1 MB cuda.h): the head will do.
        header = host.read_text(f"{path}/include/cuda.h", limit=CUDA_H_HEAD)
    except (FileNotFoundError, NotADirectoryError):
        return None
    pip = any(n.startswith("nvidia_cuda_") and n.endswith(".dist-info") for n in host.listdir(f"{path}/dist-info"))
    return parse_cuda_h(header), "pip" if pip else None


def _nvcc_roots(host: Sysroot) -> list[str]:
    """Toolkit trees of the nvcc commands on PATH (live only): the tree above nvcc's real path;
    a one-line wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) is read, never run."""
    if not host.live:
        return []
    import os

    roots = []
    for d in os.environ.get("PATH", "").split(":"):
        nvcc = os.path.join(d, "nvcc") if d else ""
        if not nvcc or not os.path.isfile(nvcc):
            continue
        real = os.path.realpath(nvcc)
        try:
            head = host.read_bytes(real, 4096)
        except OSError:
            continue
        if head.startswith(b"#!"):
            m = re.search(rb"exec\s+\"?(/[^\s\"]+/bin/nvcc)\b", head)
            if not m:
                continue
            real = os.path.realpath(m.group(1).decode(errors="replace"))
        roots.append(os.path.dirname(os.path.dirname(real)))
    return list(dict.fromkeys(roots))


def _cuda_source(host: Sysroot, path: str, version: str, installed: dict[str, str]) -> str | None:
    major_minor = "-".join(version.split(".")[:2])
    if any(p.startswith("cuda-") and p.endswith(major_minor) for p in installed):
        return "package"
    if host.exists(f"{path}/bin/cuda-uninstaller"):
        return "runfile"
    return None


def probe(host: Sysroot, installed: dict[str, str], errors: list[ProbeError]) -> Toolkits:
    from gpuenv.facts import ProbeError

    cuda: list[Toolkit] = []
    # /usr/local/cuda and cuda-12 are alternatives links to a versioned tree: list trees once.
    trees = [
        f"/usr/local/{name}"
        for name in host.listdir("/usr/local")
        if name.startswith("cuda") and not host.is_link(f"/usr/local/{name}") and host.is_dir(f"/usr/local/{name}")
    ]
    trees += [r for r in _nvcc_roots(host) if r not in trees and host.is_dir(r)]
    for path in trees:
        try:
            found = _cuda_version(host, path)
            if found is None:
                continue
            version, source = found
            cuda.append(
                Toolkit(version=version, path=path, source=source or _cuda_source(host, path, version, installed))
            )
        except Exception as exc:
            errors.append(ProbeError("toolkits.cuda", f"{path}: {exc}"))
    rocm: list[Toolkit] = []
    for name in host.listdir("/opt"):
        path = f"/opt/{name}"
        if not name.startswith("rocm") or host.is_link(path) or not host.is_dir(path):
            continue
        if host.exists(f"{path}/core") and not host.exists(f"{path}/.info/version"):
            # TheRock's /opt/rocm: a directory of alternatives links into /opt/rocm/core-X.Y
            # (its include/ leads to that tree's rocm_version.h); therock.py reports that tree.
            continue
        try:
            text = host.read_optional(f"{path}/.info/version")
            if text is not None:
                version = parse_rocm_version(text)
            else:
                header = host.read_optional(f"{path}/include/rocm-core/rocm_version.h")
                if header is None:
                    continue
                version = parse_rocm_version_h(header)
            source = "package" if any(p.startswith("rocm-core") for p in installed) else None
            rocm.append(Toolkit(version=version, path=path, source=source))
        except Exception as exc:
            errors.append(ProbeError("toolkits.rocm", f"{path}: {exc}"))
    from gpuenv.probe import therock

    rocm += therock.probe(host, installed, errors)
    return Toolkits(cuda=tuple(cuda), rocm=tuple(rocm))


def with_pip(toolkits: Toolkits, python: Python | None) -> Toolkits:
    """``toolkits`` plus the ROCm SDK wheels of the probed Python environment (TheRock's pip
    route), which the Python probe found."""
    from gpuenv.probe import therock
    from gpuenv.standins import record

    extra = therock.from_python(python)
    return record.replace(toolkits, rocm=(*toolkits.rocm, *extra)) if extra else toolkits


def with_origin(toolkits: Toolkits, packages: Packages | None, sources: tuple[AptSource, ...] | None) -> Toolkits:
    """``toolkits`` with the origin of each package-installed one: the vendor's repository when an
    enabled apt source of the vendor is there, the distribution's packages when dpkg installed it
    and apt's sources were read and hold none of the vendor's; left unknown otherwise (rpm,
    pacman: the sources are not read)."""
    from gpuenv.standins import record
    from gpuenv.vendorrepos import vendor_of

    vendors = {v for s in sources or () if s.enabled and (v := vendor_of(s.uri))}
    dpkg = packages is not None and packages.manager == "dpkg" and sources is not None

    def origin(vendor: str) -> str | None:
        return "vendor" if vendor in vendors else "distribution" if dpkg else None

    def marked(items: tuple[Toolkit, ...], vendor: str) -> tuple[Toolkit, ...]:
        found = origin(vendor)
        if found is None:
            return items
        return tuple(record.replace(t, origin=found) if t.source == "package" and not t.origin else t for t in items)

    return Toolkits(cuda=marked(toolkits.cuda, "nvidia"), rocm=marked(toolkits.rocm, "amd"))
