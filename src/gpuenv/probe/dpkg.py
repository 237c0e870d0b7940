"""Installed packages from dpkg's own database (/var/lib/dpkg/status), read directly: it is
faster than ``dpkg-query`` and works on a sysroot with no dpkg to run."""

from __future__ import annotations

import re

from gpuenv.facts import Packages
from gpuenv.probe.host import Host

STATUS = "/var/lib/dpkg/status"
# dpkg's journal: each status change is written here first (one stanza per file, 0000, 0001,
# ...) and folded into the status file only at checkpoints. After an interrupted dpkg run, the
# journal holds the packages' real states (half-installed, half-configured), so it is read on top
# of the status file, as dpkg and dpkg-query do.
UPDATES = "/var/lib/dpkg/updates"
# States where the package's files are on disk (dpkg-query's "installed" in the wide sense).
_PRESENT = {"installed", "half-configured", "unpacked", "triggers-awaited", "triggers-pending"}
# States `dpkg --configure -a` (or a reinstall) must finish.
_UNFINISHED = {"half-installed", "half-configured", "unpacked", "triggers-awaited"}


# The fields gpuenv reads: (how it starts a stanza, how it starts a later line, its name).
_FIELDS = tuple(
    (f"{name}:".encode(), f"\n{name}:".encode(), name) for name in ("Package", "Status", "Version", "Architecture")
)
# The stanza as dpkg writes it: Package first, then Status, Architecture and Version in that
# order, each the first of its name (the lines skipped between them start with none of the four
# names). One match reads the four values; any other stanza takes the general path.
_SKIP = rb"(?:(?!Package:|Status:|Architecture:|Version:)[^\n]*\n)*?"
_CANONICAL = re.compile(
    rb"Package: ([^\n]*)\n" + _SKIP + rb"Status: ([^\n]*)\n" + _SKIP + rb"Architecture: ([^\n]*)\n" + _SKIP
    + rb"Version: ([^\n]*)"
)  # fmt: skip


def parse_status(data: str | bytes) -> list[dict[str, str]]:
    """Stanzas of a dpkg status file, keeping the fields gpuenv reads (Package, Status, Version,
    Architecture); continuation lines and other fields are skipped.

    A real status file runs to tens of thousands of lines and this is on every probe's path, so
    it works on the bytes (only the values kept are decoded, as UTF-8 with undecodable bytes
    replaced), and a stanza in dpkg's own field order is read with one regex match. Stanzas are
    separated by blank (or whitespace-only) lines; of a field given twice, the first is kept; a
    field counts only at the start of a line (a continuation line starts with a space).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data  # never raises
    stanzas: list[dict[str, str]] = []
    canonical = _CANONICAL.match
    for stanza in _stanzas(raw):
        m = canonical(stanza)
        if m is not None:
            package, status, arch, version = m.groups()
            stanzas.append(
                {
                    "Package": package.decode("utf-8", "replace").strip(),
                    "Status": status.decode("utf-8", "replace").strip(),
                    "Version": version.decode("utf-8", "replace").strip(),
                    "Architecture": arch.decode("utf-8", "replace").strip(),
                }
            )
            continue
        current = fields(stanza)
        if current:
            stanzas.append(current)
    return stanzas


def fields(stanza: bytes) -> dict[str, str]:
    """The fields gpuenv reads of one stanza, in any order: each found with find (a continuation
    line starts with a space, so "\nStatus:" never matches inside a description)."""
    current: dict[str, str] = {}
    for first, later, name in _FIELDS:
        if stanza.startswith(first):
            start = len(first)
        else:
            at = stanza.find(later)
            if at < 0:
                continue
            start = at + len(later)
        end = stanza.find(b"\n", start)
        current[name] = stanza[start : end if end >= 0 else len(stanza)].decode("utf-8", "replace").strip()
    return current


def _stanzas(raw: bytes) -> list[bytes]:
    """The stanzas: split at empty lines (what dpkg writes), and a piece holding a second
    Package field split again at whitespace-only lines or CRLF ones (a hand-made file)."""
    pieces = raw.split(b"\n\n")
    if not any(piece.find(b"\nPackage:") >= 0 for piece in pieces):
        return pieces
    out: list[bytes] = []
    for piece in pieces:
        out.extend(re.split(rb"\n[ \t\r\f\v]*\n", piece) if piece.find(b"\nPackage:") >= 0 else (piece,))
    return out


def packages_from_status(
    text: str | bytes,
    native_arch: str | None = None,
    updates: list[str] | list[bytes] | tuple[str | bytes, ...] = (),
    fallback_arch: str | None = None,
) -> Packages:
    """Installed and unfinished packages; ``native_arch`` defaults to dpkg's own architecture
    (the ``dpkg`` package's), else ``fallback_arch``.

    ``updates`` are the texts of dpkg's journal files, in order: a stanza there replaces the
    status file's stanza of the same package and architecture.
    """
    installed: dict[str, str] = {}
    unfinished: list[str] = []
    stanzas = parse_status(text)
    if updates:
        merged = {(st.get("Package"), st.get("Architecture")): st for st in stanzas}
        for update in updates:
            for st in parse_status(update):
                merged[(st.get("Package"), st.get("Architecture"))] = st
        stanzas = list(merged.values())
    if native_arch is None:
        native_arch = next(
            (st.get("Architecture") for st in stanzas if st.get("Package") == "dpkg"), fallback_arch
        )
    for st in stanzas:
        name, status = st.get("Package"), st.get("Status", "").split()
        if not name or len(status) != 3:
            continue
        want, flag, state = status
        arch = st.get("Architecture")
        key = name
        if native_arch and arch and arch not in ("all", native_arch):
            key = f"{name}:{arch}"
        if state in _PRESENT and "Version" in st:
            installed[key] = st["Version"]
        if state in _UNFINISHED or flag == "reinstreq":
            unfinished.append(key)
    return Packages(manager="dpkg", installed=dict(sorted(installed.items())), unconfigured=tuple(unfinished))


def probe(host: Host) -> Packages | None:
    """None when the machine has no dpkg database (not a Debian-family system, or unknown)."""
    limit = 256 << 20  # a real status file is a few MiB; a bigger one is not read half-way
    try:
        data = host.read_bytes(STATUS, limit=limit)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if len(data) >= limit:
        raise ValueError(f"{STATUS} is larger than {limit >> 20} MiB: not read")
    journal = [
        host.read_bytes(f"{UPDATES}/{name}", limit=16 << 20)
        for name in sorted((n for n in host.listdir(UPDATES) if n.isascii() and n.isdigit()), key=int)
    ]
    # dpkg's own architecture is the native one; without a dpkg stanza, /var/lib/dpkg/arch
    # (written once a foreign architecture is added) names the native one first.
    arch_file = (host.read_optional("/var/lib/dpkg/arch") or "").split()
    return packages_from_status(data, updates=journal, fallback_arch=arch_file[0] if arch_file else None)
