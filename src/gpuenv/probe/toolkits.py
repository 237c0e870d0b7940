"""Installed CUDA toolkits (/usr/local/cuda*) and ROCm releases (/opt/rocm*)."""

from __future__ import annotations

import json
import re

from gpuenv.facts import Toolkit, Toolkits
from gpuenv.probe.host import Host

_CUDA_TXT = re.compile(r"CUDA Version\s+([0-9][0-9.]*)")


def parse_cuda_version_json(text: str) -> str:
    doc = json.loads(text)
    version = doc["cuda"]["version"] if isinstance(doc, dict) and isinstance(doc.get("cuda"), dict) else None
    if not isinstance(version, str) or not version:
        raise ValueError("version.json has no cuda.version")
    return version


def parse_cuda_version_txt(text: str) -> str:
    m = _CUDA_TXT.search(text)
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


def _cuda_source(host: Host, path: str, version: str, installed: dict[str, str]) -> str | None:
    major_minor = "-".join(version.split(".")[:2])
    if any(p.startswith("cuda-") and p.endswith(major_minor) for p in installed):
        return "package"
    if host.exists(f"{path}/bin/cuda-uninstaller"):
        return "runfile"
    return None


def probe(host: Host, installed: dict[str, str], errors: list) -> Toolkits:
    from gpuenv.facts import ProbeError

    cuda: list[Toolkit] = []
    for name in host.listdir("/usr/local"):
        path = f"/usr/local/{name}"
        # /usr/local/cuda and cuda-12 are alternatives links to a versioned tree: list trees once.
        if not name.startswith("cuda") or host.is_link(path) or not host.is_dir(path):
            continue
        try:
            text = host.read_optional(f"{path}/version.json")
            if text is not None:
                version = parse_cuda_version_json(text)
            else:
                txt = host.read_optional(f"{path}/version.txt")
                if txt is None:
                    continue
                version = parse_cuda_version_txt(txt)
            cuda.append(
                Toolkit(version=version, path=path, source=_cuda_source(host, path, version, installed))
            )
        except Exception as exc:
            errors.append(ProbeError("toolkits.cuda", f"{path}: {exc}"))
    rocm: list[Toolkit] = []
    for name in host.listdir("/opt"):
        path = f"/opt/{name}"
        if not name.startswith("rocm") or host.is_link(path) or not host.is_dir(path):
            continue
        try:
            text = host.read_optional(f"{path}/.info/version")
            if text is None:
                continue
            version = parse_rocm_version(text)
            source = "package" if any(p.startswith("rocm-core") for p in installed) else None
            rocm.append(Toolkit(version=version, path=path, source=source))
        except Exception as exc:
            errors.append(ProbeError("toolkits.rocm", f"{path}: {exc}"))
    return Toolkits(cuda=tuple(cuda), rocm=tuple(rocm))
