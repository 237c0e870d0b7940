"""OS identity from os-release, and the host's own identity (arch, hostname, CPU, memory).

os-release is parsed here rather than through ``distro``: the format is a shell-quoted
KEY=value list, a pure parser is testable without files, and it saves ``distro``'s import
(~30 ms, it pulls in subprocess) on every ``gpuenv probe``.
"""

from __future__ import annotations

import re

from gpuenv.facts import OS, OsBase
from gpuenv.facts import Host as HostFacts
from gpuenv.osreleases import base_of
from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing or collections.abc (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from gpuenv.facts import ProbeError

    T = TypeVar("T")

# dpkg architecture names to uname -m names, for reading a sysroot's arch from dpkg.
_DPKG_ARCH = {
    "amd64": "x86_64",
    "arm64": "aarch64",
    "armhf": "armv7l",
    "i386": "i686",
    "ppc64el": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
}


def parse_os_release(text: str) -> dict[str, str]:
    """KEY=value pairs of an os-release file, each value the word a POSIX shell assigns.

    os-release(5) is shell assignments: a line may start with ``export``; a value is one shell
    word (unquoted characters with backslash escapes, '...' taken literally, "..." where a
    backslash escapes only $, `, " and itself), its quoted parts may be joined (``'a'"b"``), and
    a ``#`` after whitespace starts a comment. Lines that are no assignment are skipped.
    """
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.lstrip()  # not rstrip: an escaped space ends "A=\ " and is its value
        if not line or line.startswith("#"):
            continue
        if line.startswith(("export ", "export\t")):
            line = line[len("export") :].lstrip()
        key, assign, value = line.partition("=")
        if not assign or not (key.isascii() and key.isidentifier()):  # a shell variable name
            continue
        word = _shell_word(value)
        if word is not None:
            out[key] = word
    return out


def _shell_word(text: str) -> str | None:
    """The first shell word of ``text`` with its quotes and escapes removed (what follows it, a
    comment or anything else, is not read); None when a quote is left open."""
    if not any(c in text for c in "\\'\" \t#"):
        return text  # the usual line: nothing to undo
    out: list[str] = []
    i, n = 0, len(text)
    while i < n and text[i] not in " \t":
        c = text[i]
        if c == "\\":
            out.append(text[i + 1 : i + 2])  # a trailing backslash (a continuation) adds nothing
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return None
            out.append(text[i + 1 : end])
            i = end + 1
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '$`"\\':
                    i += 1
                out.append(text[i])
                i += 1
            if i >= n:
                return None
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def os_from_release(fields: dict[str, str]) -> OS:
    if not fields.get("ID"):
        raise ValueError("os-release has no ID")
    os_id = fields["ID"].lower()
    version_id = fields.get("VERSION_ID") or None
    # The OS's own codename (Mint 22's wilma); the release it is built on is read apart, so that
    # VERSION_CODENAME never hides UBUNTU_CODENAME (wilma's noble).
    codename = fields.get("VERSION_CODENAME") or fields.get("UBUNTU_CODENAME") or None
    id_like = tuple(fields.get("ID_LIKE", "").split())
    base = base_of(
        os_id,
        version_id,
        codename,
        tuple(x.lower() for x in id_like),
        ubuntu_codename=fields.get("UBUNTU_CODENAME") or None,
        debian_codename=fields.get("DEBIAN_CODENAME") or None,
    )
    return OS(
        id=os_id,
        version_id=version_id,
        codename=codename,
        id_like=id_like,
        pretty_name=fields.get("PRETTY_NAME") or None,
        base=OsBase(id=base[0], version_id=base[1], codename=base[2]) if base else None,
    )


def probe_os(host: Sysroot) -> OS:
    text = host.read_optional("/etc/os-release")
    if text is None:
        text = host.read_text("/usr/lib/os-release")
    return os_from_release(parse_os_release(text))


# The kernel makes /proc/cpuinfo CPU by CPU as it is read: on a GPU server of a few hundred
# CPUs the whole file is hundreds of KB and milliseconds of kernel time, while what a probe wants
# (x86's "model name" and "flags") is in the first CPU's block.
CPUINFO_HEAD = 16 << 10


def in_cpuinfo(host: Sysroot, find: Callable[[str], T | None]) -> T | None:
    """``find`` over the whole lines of /proc/cpuinfo's first CPUINFO_HEAD bytes, then over the
    whole file when that was not all of it and ``find`` gave None (a Raspberry Pi names its
    "Model" after every CPU's block). None when there is no /proc/cpuinfo."""
    try:
        head = host.read_bytes("/proc/cpuinfo", CPUINFO_HEAD)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if len(head) < CPUINFO_HEAD:
        return find(head.decode("utf-8", "replace"))
    found = find(head[: head.rfind(b"\n") + 1].decode("utf-8", "replace"))  # a line cut short is not read
    return found if found is not None else find(host.read_optional("/proc/cpuinfo") or "")


def parse_cpu_model(cpuinfo: str) -> str | None:
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("model name", "Model") and value.strip():
            return value.strip()
    return None


def parse_meminfo_mib(meminfo: str) -> int | None:
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            fields = line.split()
            if len(fields) >= 2 and fields[1].isascii() and fields[1].isdigit():
                return int(fields[1]) // 1024
    return None


def probe_arch(host: Sysroot) -> str:
    if host.live:
        import os

        return os.uname().machine
    # A sysroot: its own kernel's answer if it has a /proc, else what its binaries are built for
    # (the ELF header of its shell), else what dpkg was installed as. Never the reading machine's.
    arch: str | None = (host.read_optional("/proc/sys/kernel/arch") or "").strip()
    if arch:
        return arch
    for shell in ("/bin/sh", "/usr/bin/sh", "/bin/bash"):
        try:
            arch = elf_machine(host.read_bytes(shell, 64))
        except OSError:
            continue
        if arch:
            return arch
    status = host.read_optional("/var/lib/dpkg/status") or ""
    arch = dpkg_native_arch(status)
    if arch:
        return _DPKG_ARCH.get(arch, arch)
    dpkg = (host.read_optional("/var/lib/dpkg/arch") or "").split()
    if dpkg:
        return _DPKG_ARCH.get(dpkg[0], dpkg[0])
    raise ValueError("architecture unknown: no /proc/sys/kernel/arch, ELF /bin/sh or dpkg status under the root")


# ELF e_machine -> uname -m (the little-endian variants where the byte order decides).
_ELF_MACHINES = {0x3E: "x86_64", 0xB7: "aarch64", 0x03: "i686", 0x28: "armv7l", 0x16: "s390x", 0xF3: "riscv64"}


def elf_machine(header: bytes) -> str | None:
    """uname -m of an ELF binary's header: b"\\x7fELF" ... e_machine at offset 18."""
    if len(header) < 20 or header[:4] != b"\x7fELF" or header[5] not in (1, 2):
        return None
    machine = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
    if machine == 0x15:  # PowerPC 64: the byte order names it
        return "ppc64le" if header[5] == 1 else "ppc64"
    return _ELF_MACHINES.get(machine)


def dpkg_native_arch(status: str) -> str | None:
    """The Architecture of dpkg's own package in /var/lib/dpkg/status: the native one."""
    for stanza in status.split("\n\n"):
        if re.search(r"^Package: dpkg$", stanza, re.M):
            m = re.search(r"^Architecture: (\S+)$", stanza, re.M)
            return m.group(1) if m else None
    return None


def probe_host(host: Sysroot, errors: list[ProbeError]) -> HostFacts:
    from gpuenv.facts import ProbeError

    try:
        arch = probe_arch(host)
    except Exception as exc:  # noqa: BLE001 - a probe failure is a result
        errors.append(ProbeError("host.arch", str(exc)))
        arch = "unknown"
    hostname = None
    try:
        if host.live:
            import os

            hostname = os.uname().nodename or None  # what socket.gethostname() returns, without socket
        else:
            hostname = (host.read_optional("/etc/hostname") or "").strip() or None
    except Exception as exc:  # noqa: BLE001
        errors.append(ProbeError("host.hostname", str(exc)))
    cpu = mem = None
    try:
        cpu = in_cpuinfo(host, parse_cpu_model)
    except Exception as exc:  # noqa: BLE001
        errors.append(ProbeError("host.cpu", str(exc)))
    try:
        mem = parse_meminfo_mib(host.read_optional("/proc/meminfo") or "")
    except Exception as exc:  # noqa: BLE001
        errors.append(ProbeError("host.memory", str(exc)))
    return HostFacts(arch=arch, hostname=hostname, cpu_model=cpu, memory_mib=mem)
