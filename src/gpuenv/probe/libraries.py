"""CUDA and ROCm libraries the dynamic loader can find, with their versions.

Three places, in the loader's order: ``LD_LIBRARY_PATH`` (the live environment only), the
ldconfig cache (``/etc/ld.so.cache``, both the old "ld.so-1.7.0" and the new
"glibc-ld.so.cache1.1" layouts; without a readable cache, the directories ``/etc/ld.so.conf``
and its includes list, which is what ldconfig would cache), then the toolkits' own directories
(``/usr/local/cuda*/lib64``, ``/usr/local/cuda*/targets/*/lib``, ``/opt/rocm*/lib``), which the
loader searches only when one of the first two names them. Versions come from the file names
(``libcudart.so.12.8.90``: 12.8.90; a soname alone gives its major), and for cuDNN from
``cudnn_version.h`` where the file name has only the major. Every read goes through ``Sysroot``.
"""

from __future__ import annotations

import os
import re
import sys

from gpuenv.facts import Library
from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Literal

    from gpuenv.facts import ProbeError

    _ByteOrder = Literal["little", "big"]
    _Listing = dict[str, dict[str, list[tuple[str, str | None]]]]  # directory -> _in_dir's answer

# Library name -> the file-name stem the loader opens (libNAME.so[.VERSION]).
LIBRARIES = {
    "cudart": "libcudart",
    "cublas": "libcublas",
    "cudnn": "libcudnn",
    "nccl": "libnccl",
    "miopen": "libMIOpen",
    "rocblas": "librocblas",
    "rccl": "librccl",
    "hipblaslt": "libhipblaslt",
}
_STEMS = {stem: name for name, stem in LIBRARIES.items()}
_STEM_PREFIXES = tuple(f"{stem}." for stem in _STEMS)  # what a file library_of knows starts with
_WANTED = tuple(f"{stem}.so".encode() for stem in _STEMS)  # the sonames the scan reads

OLD_MAGIC = b"ld.so-1.7.0"
NEW_MAGIC = b"glibc-ld.so.cache1.1"
CACHE = "/etc/ld.so.cache"
CACHE_LIMIT = 16 << 20
# Searched by the loader after the cache, whatever ld.so.conf says (glibc's trusted directories).
DEFAULT_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


def library_of(filename: str) -> tuple[str, str | None] | None:
    """'libcudart.so.12.8.90' -> ('cudart', '12.8.90'); 'libcudart.so' -> ('cudart', None);
    'libcudnn_ops.so.9' and other files -> None."""
    # String tests, not a regex: a probe pays for each pattern it compiles, and this is one test.
    stem, so, version = filename.partition(".so")
    if not so or stem not in _STEMS:
        return None
    if not version:
        return _STEMS[stem], None
    numbers = version.removeprefix(".")
    if numbers != version and all(n.isascii() and n.isdigit() for n in numbers.split(".")):
        return _STEMS[stem], numbers
    return None


# -- /etc/ld.so.cache --------------------------------------------------------------------------


def parse_ld_so_cache(data: bytes, wanted: tuple[bytes, ...] | None = None) -> list[tuple[str, str]]:
    """(soname, path) entries of an ld.so.cache, in the file's order; ValueError for anything
    that is not one. The new layout (glibc 2.32's default) starts with NEW_MAGIC; the old one
    with OLD_MAGIC, possibly followed (8-byte aligned) by a new-layout copy, which wins, as in
    glibc's dl-cache.c. With ``wanted`` (soname prefixes), only the entries whose soname starts
    with one are decoded and checked: a desktop's cache has thousands, the probe wants a few."""
    if data.startswith(NEW_MAGIC):
        return _parse_new(data, 0, wanted)
    if data.startswith(OLD_MAGIC):
        if len(data) < 16:
            raise ValueError("ld.so.cache: truncated header")
        (nlibs,) = _words(data, 12, 1, "little")
        end = 16 + nlibs * 12
        if end > len(data):
            raise ValueError("ld.so.cache: entries run past the end of the file")
        new_at = (end + 7) & ~7
        if data[new_at : new_at + len(NEW_MAGIC)] == NEW_MAGIC:
            return _parse_new(data, new_at, wanted)
        # 12 bytes an entry: flags, key, value (offsets from the string table after the entries).
        words = _words(data, 16, nlibs * 3, "little")
        return [
            (_cstr(data, end + key), _cstr(data, end + value))
            for key, value in zip(words[1::3], words[2::3], strict=True)
            if wanted is None or data.startswith(wanted, end + key)
        ]
    raise ValueError("not an ld.so.cache (unknown magic)")


def _parse_new(data: bytes, base: int, wanted: tuple[bytes, ...] | None) -> list[tuple[str, str]]:
    if len(data) < base + 48:
        raise ValueError("ld.so.cache: truncated header")
    flags = data[base + 28] & 3
    order: _ByteOrder = "big" if flags == 3 else "little"  # cache_file_new_flags_endian_big; 2 (little) or 0 (unset)
    (nlibs,) = _words(data, base + 20, 1, order)
    table = base + 48
    if table + nlibs * 24 > len(data):
        raise ValueError("ld.so.cache: entries run past the end of the file")
    # 24 bytes an entry: flags, key, value, osversion, then a 64-bit hwcap (six words; the
    # last four are not read).
    words = _words(data, table, nlibs * 6, order)
    return [
        (_cstr(data, base + key), _cstr(data, base + value))
        for key, value in zip(words[1::6], words[2::6], strict=True)
        if wanted is None or data.startswith(wanted, base + key)
    ]


def _words(data: bytes, at: int, count: int, order: _ByteOrder) -> list[int]:
    """``count`` unsigned 32-bit words of ``data`` from ``at`` (within bounds: the callers check),
    in byte order ``order``. Not ``struct``: a pyenv or conda Python loads it as a shared
    library, 0.4 ms of every probe on this machine; a cache in the machine's own byte
    order, the usual case, is one memoryview cast."""
    if order == sys.byteorder:
        return memoryview(data)[at : at + 4 * count].cast("I").tolist()
    return [int.from_bytes(data[i : i + 4], order) for i in range(at, at + 4 * count, 4)]


def _cstr(data: bytes, at: int) -> str:
    if not 0 <= at < len(data):
        raise ValueError("ld.so.cache: string offset out of range")
    end = data.find(b"\0", at)
    if end < 0:
        raise ValueError("ld.so.cache: unterminated string")
    return data[at:end].decode("utf-8", errors="replace")


# -- /etc/ld.so.conf ---------------------------------------------------------------------------


def parse_ld_so_conf(text: str) -> tuple[list[str], list[str]]:
    """(directories, include patterns) of one ld.so.conf file; comments and hwcap lines dropped."""
    dirs: list[str] = []
    includes: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("hwcap "):
            continue
        if line.startswith("include ") or line.startswith("include\t"):
            includes.extend(line.split()[1:])
            continue
        dirs.extend(p for p in re.split(r"[\s:,=]+", line) if p.startswith("/"))
    return dirs, includes


def conf_dirs(
    host: Sysroot, path: str = "/etc/ld.so.conf", depth: int = 0, seen: set[str] | None = None
) -> list[str]:
    """The directories ld.so.conf names, includes followed (globs listed through ``host``)."""
    seen = set() if seen is None else seen
    if depth > 8 or path in seen:
        return []
    seen.add(path)
    text = host.read_optional(path)
    if text is None:
        return []
    dirs, includes = parse_ld_so_conf(text)
    for pattern in includes:
        if not pattern.startswith("/"):
            pattern = os.path.join(os.path.dirname(path), pattern)
        head, tail = os.path.split(pattern)
        names = _matching(host.listdir(head), tail) if any(c in tail for c in "*?[") else [tail]
        for name in sorted(names):
            dirs.extend(conf_dirs(host, f"{head}/{name}", depth + 1, seen))
    return dirs


def _matching(names: list[str], pattern: str) -> list[str]:
    """fnmatch's matches, with the form every distribution ships ("*.conf") tested as a suffix:
    fnmatch turns each pattern into a regex, compiled on every probe for this one line."""
    if pattern.startswith("*") and not any(c in pattern[1:] for c in "*?["):
        return [n for n in names if n.endswith(pattern[1:])]
    import fnmatch

    return [n for n in names if fnmatch.fnmatch(n, pattern)]


# -- the scan ----------------------------------------------------------------------------------


def toolkit_dirs(host: Sysroot) -> list[str]:
    """Library directories of the installed toolkit trees (links such as /usr/local/cuda skipped:
    they lead to a versioned tree listed anyway)."""
    out = []
    for name in host.listdir("/usr/local"):
        base = f"/usr/local/{name}"
        if not name.startswith("cuda") or host.is_link(base) or not host.is_dir(base):
            continue
        if host.is_dir(f"{base}/lib64") and not host.is_link(f"{base}/lib64"):
            out.append(f"{base}/lib64")
        for target in host.listdir(f"{base}/targets"):
            out.append(f"{base}/targets/{target}/lib")
    for name in host.listdir("/opt"):
        base = f"/opt/{name}"
        if name.startswith("rocm") and not host.is_link(base) and host.is_dir(base):
            out.append(f"{base}/lib")
    return out


def _in_dir(host: Sysroot, directory: str, cache: _Listing) -> dict[str, list[tuple[str, str | None]]]:
    """name -> [(file, version)] of the GPU libraries in one directory (listed once per scan)."""
    found = cache.get(directory)
    if found is None:
        found = {}
        for entry in host.listdir(directory):
            # thousands of names in /usr/lib/x86_64-linux-gnu: a C-level test before the regex
            hit = library_of(entry) if entry.startswith(_STEM_PREFIXES) else None
            if hit:
                found.setdefault(hit[0], []).append((entry, hit[1]))
        cache[directory] = found
    return found


def _best(files: list[tuple[str, str | None]], major: str | None = None) -> tuple[str, str | None]:
    """The file the loader opens (the soname, libX.so.MAJOR, where there is one) and the longest
    version among the files of that major (the real file's full version)."""
    pool = [(f, v) for f, v in files if v and (major is None or v.split(".")[0] == major)] or files
    versions = [v for _, v in pool if v]
    full = max(versions, key=lambda v: (len(v.split(".")), [int(p) for p in v.split(".")]), default=None)
    soname = next(
        (f for f, v in pool if v and "." not in v and (full is None or full.split(".")[0] == v)), None
    )
    return soname or next((f for f, v in pool if v == full), pool[0][0]), full


def _majors(files: list[tuple[str, str | None]]) -> list[str] | list[None]:
    """The major versions among one library's files (libcudart.so.11.0 beside libcudart.so.12:
    two libraries), or [None] when no file names a version."""
    return sorted({v.split(".")[0] for _, v in files if v}, key=int) or [None]


def _real(host: Sysroot, path: str) -> str:
    try:
        return os.path.realpath(host.path(path))
    except OSError:
        return path


def scan(host: Sysroot, ld_library_path: list[str] | None, errors: list[ProbeError]) -> tuple[Library, ...]:
    """The CUDA/ROCm libraries on the loader's path and in the toolkits, loader order first."""
    from gpuenv.facts import ProbeError

    listing: _Listing = {}
    out: list[Library] = []
    seen: set[str] = set()

    def add(
        name: str, directory: str, files: list[tuple[str, str | None]], source: str, major: str | None = None
    ) -> None:
        file, version = _best(files, major)
        path = f"{directory.rstrip('/')}/{file}"
        real = _real(host, path)
        if real in seen:
            return
        seen.add(real)
        out.append(Library(name=name, version=version, path=path, source=source))

    def add_dir(directory: str, source: str) -> None:
        for name, files in sorted(_in_dir(host, directory, listing).items()):
            for major in _majors(files):
                add(name, directory, files, source, major)

    for directory in ld_library_path or ():
        add_dir(directory, "ld_library_path")

    entries = None
    try:
        data = host.read_bytes(CACHE, CACHE_LIMIT)
    except FileNotFoundError:
        data = None
    except OSError as exc:
        errors.append(ProbeError("libraries", f"{CACHE}: {exc.strerror or exc}"))
        data = None
    if data is not None:
        try:
            entries = parse_ld_so_cache(data, _WANTED)
        except ValueError as exc:
            errors.append(ProbeError("libraries", f"{CACHE}: {exc}; read /etc/ld.so.conf instead"))
    if entries is not None:
        for soname, path in entries:
            hit = library_of(os.path.basename(path)) or library_of(soname)
            if not hit:
                continue
            directory = os.path.dirname(path)
            files = _in_dir(host, directory, listing).get(hit[0]) or [(os.path.basename(path), hit[1])]
            major = (library_of(soname) or (None, None))[1]
            add(hit[0], directory, files, "ldconfig", major.split(".")[0] if major else None)
    else:
        for directory in [*conf_dirs(host), *DEFAULT_DIRS]:
            add_dir(directory, "ldconfig")

    for directory in toolkit_dirs(host):
        add_dir(directory, "toolkit")
    return tuple(_cudnn_header(host, out))


_CUDNN_DEFINE = r"(?m)^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)"


def parse_cudnn_version_h(text: str) -> str | None:
    """'9.1.0' from cudnn_version.h's CUDNN_MAJOR/MINOR/PATCHLEVEL, or None."""
    found = dict(re.findall(_CUDNN_DEFINE, text))
    if "MAJOR" not in found:
        return None
    return ".".join(found.get(k, "0") for k in ("MAJOR", "MINOR", "PATCHLEVEL"))


def _cudnn_header(host: Sysroot, libs: list[Library]) -> list[Library]:
    from gpuenv.standins import record as records

    if not any(lib.name == "cudnn" and lib.version and "." not in lib.version for lib in libs):
        return libs
    headers: dict[str, str] = {}  # major -> full version
    candidates = ["/usr/include/cudnn_version.h"]
    for multiarch in host.listdir("/usr/include"):
        if multiarch.endswith("-linux-gnu"):
            candidates += [f"/usr/include/{multiarch}/{n}" for n in host.listdir(f"/usr/include/{multiarch}")
                           if n.startswith("cudnn_version")]  # fmt: skip
    for name in host.listdir("/usr/local"):
        if name.startswith("cuda"):
            candidates.append(f"/usr/local/{name}/include/cudnn_version.h")
    for path in candidates:
        try:
            text = host.read_optional(path)
        except OSError:
            continue
        version = parse_cudnn_version_h(text) if text else None
        if version:
            headers.setdefault(version.split(".")[0], version)
    return [
        records.replace(lib, version=headers[lib.version])
        if lib.name == "cudnn" and lib.version in headers
        else lib
        for lib in libs
    ]
