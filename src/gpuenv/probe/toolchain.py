"""Host compilers and build tools: gcc, g++, clang, cmake, ninja, nvcc, hipcc and ROCm's clang.

Three sources, listed in this order: dpkg's packages (gcc-13, g++-13, clang-18, cmake,
ninja-build; the ``gcc``/``g++``/``clang`` metapackages say which is the default), so that a
sysroot and a facts file know them too; the toolkit trees' files (``bin/nvcc``, ``bin/hipcc``,
``llvm/bin/clang``, through ``Sysroot``); and on the live machine where the unversioned command on
PATH leads (gcc -> x86_64-linux-gnu-gcc-12), which is what a build actually runs. No tool is
executed.
"""

from __future__ import annotations

from gpuenv.facts import Tool, Toolkits
from gpuenv.probe.host import Sysroot

# Names and versions are read with string tests, not regexes: compiling a pattern costs more
# than a probe's every use of it.
_TOOLS = ("gcc", "g++", "clang")  # versioned as gcc-13, g++-13, clang-18
_PREFIXES = tuple(f"{tool}-" for tool in _TOOLS)
_PLAIN = {"cmake": "cmake", "ninja-build": "ninja"}
_METAPACKAGES = {"gcc": "gcc", "g++": "g++", "clang": "clang"}


def upstream(version: str) -> str | None:
    """'4:13.2.0-7ubuntu1' -> '13.2.0'; '1:18.1.3-1ubuntu1' -> '18.1.3'."""
    text = version.strip()
    epoch, colon, rest = text.partition(":")
    if colon and _digits(epoch) and (number := _leading_number(rest)):
        return number
    return _leading_number(text)


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _leading_number(text: str) -> str | None:
    """The dotted number ``text`` starts with: '13.2.0-7ubuntu1' -> '13.2.0'; '12.x' -> '12'."""
    parts = []
    for part in text.split("."):
        n = len(part) - len(part.lstrip("0123456789"))
        if n:
            parts.append(part[:n])
        if n == 0 or n < len(part):
            break
    return ".".join(parts) or None


def _versioned(package: str) -> tuple[str, str] | None:
    """'gcc-13' -> ('gcc', '13'), and g++-N, clang-N alike; any other name -> None."""
    tool, dash, major = package.partition("-")
    return (tool, major) if dash and tool in _TOOLS and _digits(major) else None


def from_packages(installed: dict[str, str]) -> list[Tool]:
    """The compilers and build tools dpkg says are installed."""
    defaults: dict[str, str] = {}
    for meta, tool in _METAPACKAGES.items():
        version = upstream(installed.get(meta, "") or "")
        if version:
            defaults[tool] = version.split(".")[0]
    out: list[Tool] = []
    # A few names of a list of thousands: picked with one C-level test before the closer look.
    candidates = [p for p in installed if p.startswith(_PREFIXES) or p in _PLAIN]
    for package in sorted(candidates, key=_package_key):
        versioned = _versioned(package)
        if versioned:
            tool, major = versioned
            out.append(
                Tool(
                    name=tool,
                    version=upstream(installed[package]) or major,
                    path=f"/usr/bin/{package}",
                    source="package",
                    package=package,
                    default=(defaults[tool] == major) if tool in defaults else None,
                )
            )
        elif package in _PLAIN:
            out.append(
                Tool(
                    name=_PLAIN[package],
                    version=upstream(installed[package]),
                    path=f"/usr/bin/{_PLAIN[package]}",
                    source="package",
                    package=package,
                )
            )
    return out


def _package_key(name: str) -> tuple[str, int]:
    versioned = _versioned(name)
    return (versioned[0], int(versioned[1])) if versioned else (name, 0)


def from_files(host: Sysroot, toolkits: Toolkits, installed: dict[str, str]) -> list[Tool]:
    """nvcc of each CUDA tree; hipcc and ROCm's own clang (package rocm-llvm) of each ROCm tree."""
    out: list[Tool] = []
    for tk in toolkits.cuda:
        if tk.path and host.exists(f"{tk.path}/bin/nvcc"):
            out.append(Tool(name="nvcc", version=tk.version, path=f"{tk.path}/bin/nvcc", source="file"))
    llvm_version = upstream(installed.get("rocm-llvm", "") or "")
    for tk in toolkits.rocm:
        if not tk.path:
            continue
        if host.exists(f"{tk.path}/bin/hipcc"):
            out.append(Tool(name="hipcc", version=tk.version, path=f"{tk.path}/bin/hipcc", source="file"))
        if host.exists(f"{tk.path}/llvm/bin/clang"):
            out.append(
                Tool(
                    name="rocm-llvm",
                    version=llvm_version,
                    path=f"{tk.path}/llvm/bin/clang",
                    source="file",
                    package="rocm-llvm" if "rocm-llvm" in installed else None,
                )
            )
    return out


# The version a compiler's installed name carries: x86_64-linux-gnu-gcc-12, clang-18, or a
# directory such as /usr/lib/llvm-18/bin/clang and /usr/local/cuda-12.8/bin/nvcc.
COMMANDS = ("gcc", "g++", "clang", "nvcc")


def version_of_path(real: str) -> str | None:
    """'/usr/bin/x86_64-linux-gnu-gcc-12' -> '12'; '/usr/lib/llvm-18/bin/clang' -> '18';
    '/usr/local/cuda-12.8/bin/nvcc' -> '12.8'; '/usr/bin/gcc' -> None."""
    parts = real.rstrip("/").split("/")
    for part in (parts[-1], *reversed(parts[:-1])):
        _, dash, version = part.rpartition("-")
        if dash and all(_digits(n) for n in version.split(".")):
            return version
    return None


def from_path(host: Sysroot) -> list[Tool]:
    """What the unversioned commands on PATH are (live machine only): where each symlink chain
    ends, and the version that name carries. Nothing is executed: a probe that ran four
    compilers would cost more than everything else it does (bench/bench_all.py)."""
    if not host.live:
        return []
    import os

    out: list[Tool] = []
    for name in COMMANDS:
        path = host.which(name)
        if path is None:
            continue
        real = os.path.realpath(path)
        version = version_of_path(real)
        if version is None:
            continue
        out.append(Tool(name=name, version=version, path=real, source="path", default=True))
    return out


def probe(host: Sysroot, installed: dict[str, str], toolkits: Toolkits) -> tuple[Tool, ...]:
    return tuple([*from_packages(installed), *from_files(host, toolkits, installed), *from_path(host)])
