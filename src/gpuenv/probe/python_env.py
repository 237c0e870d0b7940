"""A Python environment's GPU-relevant distributions, and torch's build, read from files.

torch is never imported (it takes seconds and may crash on a broken driver): its build comes
from ``torch/version.py`` and the distribution metadata. For another interpreter
(``--python PATH``) on the live machine, that interpreter runs once (``gpuenv.interpreter``: in
/, isolated as root) with a tiny script that only prints its ``sys.path``; the site directories
are then read here. Under ``--root`` nothing is
run: the interpreter's venv (``pyvenv.cfg``) or the system site directories are read.
"""

from __future__ import annotations

import re

from gpuenv.facts import Python, Torch
from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import ProbeError

EXACT = {
    "torch", "torchvision", "torchaudio", "jax", "jaxlib", "vllm", "flash-attn", "triton",
    "tensorrt", "xformers", "bitsandbytes", "onnxruntime-gpu", "tensorflow", "deepspeed", "amdsmi",
    "cuda-python", "hip-python", "sglang",
}  # fmt: skip
PREFIXES = ("nvidia-", "rocm", "cupy", "jax-cuda", "jax-rocm", "tensorrt", "pytorch-triton", "apex")
_SCRIPT = "import json, platform, sys\nprint(json.dumps({'executable': sys.executable, 'version': platform.python_version(), 'path': sys.path}))\n"
_ASSIGN = r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=\s*(.+?)\s*$"
_LOCAL_CUDA = r"\+cu([0-9]+)([0-9])$"
_LOCAL_ROCM = r"\+rocm([0-9][0-9.]*)$"


def normalize(name: str) -> str:
    """PEP 503's name: each run of "-", "_" and "." one "-", lower case. String operations, not
    ``re.sub``: a probe would compile the pattern for a few dozen short names."""
    text = name.replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text.lower()


def relevant(name: str) -> bool:
    n = normalize(name)
    return n in EXACT or n.startswith(PREFIXES)


def parse_metadata(text: str) -> tuple[str, str] | None:
    """(Name, Version) from the header of a METADATA / PKG-INFO file."""
    name = version = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
    return (name, version) if name and version else None


def parse_torch_version_py(text: str) -> Torch:
    """``__version__``, ``cuda`` and ``hip`` assignments of torch/version.py, read as literals."""
    import ast  # only here: a few ms of start-up for every probe otherwise

    values: dict[str, object] = {}
    for line in text.splitlines():
        m = re.match(_ASSIGN, line)
        if m and m.group(1) in ("__version__", "cuda", "hip"):
            try:
                values[m.group(1)] = ast.literal_eval(m.group(2))
            except (ValueError, SyntaxError):
                continue
    version = values.get("__version__")
    if not isinstance(version, str) or not version:
        raise ValueError("torch/version.py has no __version__ string")
    cuda, hip = values.get("cuda"), values.get("hip")
    return Torch(
        version=version,
        cuda=cuda if isinstance(cuda, str) else None,
        hip=hip if isinstance(hip, str) else None,
        arch_list=None,
    )


def torch_from_local_version(version: str) -> Torch:
    """The build a wheel's local version names, when version.py cannot be read: +cu126, +rocm6.3."""
    m = re.search(_LOCAL_CUDA, version)
    if m:
        return Torch(version=version, cuda=f"{m.group(1)}.{m.group(2)}")
    m = re.search(_LOCAL_ROCM, version)
    if m:
        return Torch(version=version, hip=m.group(1))
    if version.endswith("+cpu"):
        return Torch(version=version)
    # No build in the version (a PyPI or source build): which one it is stays unknown.
    return Torch(version=version, cuda_unknown=True, hip_unknown=True)


def scan_site(host: Sysroot, dirs: list[str], errors: list[ProbeError]) -> tuple[dict[str, str], Torch | None]:
    from gpuenv.facts import ProbeError

    packages: dict[str, str] = {}
    torch: Torch | None = None
    for d in dirs:
        for entry in host.listdir(d):
            if not entry.endswith((".dist-info", ".egg-info")) or not relevant(entry.split("-", 1)[0]):
                continue
            try:
                meta = host.read_optional(f"{d}/{entry}/METADATA") or host.read_optional(
                    f"{d}/{entry}/PKG-INFO"
                )
                parsed = parse_metadata(meta or "")
                if parsed is None or not relevant(parsed[0]):
                    continue
                name, version = normalize(parsed[0]), parsed[1]
                if name in packages:  # earlier sys.path entries shadow later ones
                    continue
                packages[name] = version
                if name == "torch":
                    text = host.read_optional(f"{d}/torch/version.py")
                    torch = (
                        parse_torch_version_py(text)
                        if text is not None
                        else torch_from_local_version(version)
                    )
            except Exception as exc:
                errors.append(ProbeError("python", f"{d}/{entry}: {exc}"))
    return dict(sorted(packages.items())), torch


def _system_dirs(host: Sysroot, version: str | None) -> list[str]:
    dirs = []
    if version:
        dirs.append(f"/usr/local/lib/python{version}/dist-packages")
    dirs += ["/usr/lib/python3/dist-packages"]
    if version:
        dirs.append(f"/usr/lib/python{version}/site-packages")
    return dirs


def _minor(version: str | None) -> str | None:
    m = re.match(r"([0-9]+\.[0-9]+)", version or "")
    return m.group(1) if m else None


def _rooted(host: Sysroot, python: str | None) -> tuple[str | None, str | None, list[str]]:
    """(executable, version, site dirs) of an interpreter inside a sysroot, without running it."""
    exe = python or "/usr/bin/python3"
    if not host.exists(exe):
        if python is None:
            return None, None, []
        raise FileNotFoundError(f"{exe} not found under the root")
    venv = exe.rsplit("/", 2)[0]
    cfg = host.read_optional(f"{venv}/pyvenv.cfg")
    if cfg is not None:
        fields = {}
        for line in cfg.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip().lower()] = value.strip()
        version = fields.get("version") or fields.get("version_info")
        dirs = [
            f"{venv}/lib/{n}/site-packages" for n in host.listdir(f"{venv}/lib") if n.startswith("python")
        ]
        if fields.get("include-system-site-packages", "").lower() == "true":
            dirs += _system_dirs(host, _minor(version))
        return exe, version, dirs
    # A system interpreter: its version is in the name the python3 link leads to.
    name = exe
    for _ in range(8):
        link = host.readlink(name)
        if not link:
            break
        name = link if link.startswith("/") else f"{name.rsplit('/', 1)[0]}/{link}"
    m = re.search(r"python([0-9]+\.[0-9]+)$", name)
    version = m.group(1) if m else None
    return exe, version, _system_dirs(host, version)


def probe(
    host: Sysroot, python: str | None, errors: list[ProbeError], installed: dict[str, str] | None = None
) -> Python | None:
    """``installed`` (dpkg packages) gives a sysroot's system interpreter its full version."""
    if not host.live:
        exe, version, dirs = _rooted(host, python)
        if exe is None:
            return None
        package = (installed or {}).get(f"python{version}")
        if package and re.fullmatch(r"[0-9]+\.[0-9]+", version or ""):
            # python3.12 3.12.3-1ubuntu0.5 -> 3.12.3 (no epoch in these, the revision dropped)
            version = package.split(":", 1)[-1].split("-", 1)[0].split("+", 1)[0]
    elif python is None:
        import os
        import sys

        exe, version = sys.executable, ".".join(map(str, sys.version_info[:3]))
        dirs = [p for p in sys.path if p and os.path.isdir(p)]
    else:
        import json  # only for --python: a probe writes its JSON without json

        from gpuenv.interpreter import output

        doc = json.loads(output(python, ["-"], _SCRIPT, timeout=20.0))
        exe, version = doc.get("executable") or python, doc.get("version")
        dirs = [p for p in doc.get("path", []) if isinstance(p, str) and p]
    packages, torch = scan_site(host, dirs, errors)
    return Python(executable=exe, version=version, packages=packages, torch=torch)
