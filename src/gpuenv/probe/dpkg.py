"""Installed packages from dpkg's own database (/var/lib/dpkg/status), read directly: it is
faster than ``dpkg-query`` and works on a sysroot with no dpkg to run."""

from __future__ import annotations

import re

from gpuenv.facts import Packages
from gpuenv.probe.host import Sysroot
from gpuenv.standins.record import record

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
_PRESENT_BYTES = frozenset(state.encode() for state in _PRESENT)  # the one pass's words are bytes
_UNFINISHED_BYTES = frozenset(state.encode() for state in _UNFINISHED)


# The fields gpuenv reads: (how it starts a stanza, how it starts a later line, its name).
# Multi-Arch decides which stanza a journal entry replaces (``packages_from_status``).
_FIELDS = tuple(
    (f"{name}:".encode(), f"\n{name}:".encode(), name)
    for name in ("Package", "Status", "Version", "Architecture", "Multi-Arch")
)
# A stanza as dpkg writes it: Package first, then Status, Architecture and Version in that
# order, each the first of its name, each value one printable ASCII word (three for Status).
# That is what dpkg writes (Debian policy allows nothing else in these four), and the words are
# what the general path's strip and split would leave. The Package line starts the file or
# follows a blank line (the two lookbehinds; the search itself looks for the literal
# "Package: ", which is what makes one pass over a file fast). The lines skipped between the
# four are field lines (neither blank nor whitespace-only nor continuation lines: \S is ASCII
# non-space in a bytes pattern) that start with none of the three later names, so a match never
# leaves its stanza. Giving a skipped line back finds nothing new (the next name cannot start
# it), so a plain ``*`` matches what a possessive one would; possessive quantifiers are not in
# 3.10's ``re`` and match wrongly before 3.11.5 (0 stanzas of a real file on Debian 12's
# 3.11.2). A Package line skipped starts no match, so the count in ``dpkg_order`` sends that
# file the general way.
_SKIP = rb"(?:(?!Status:|Architecture:|Version:)\S[^\n]*\n)*"
_WORD = rb"([!-~]+)"
_DPKG_ORDER = re.compile(
    rb"Package: (?<![^\n]Package: )(?<![^\n]\nPackage: )" + _WORD + rb"\n" + _SKIP
    + rb"Status: " + _WORD + rb" " + _WORD + rb" " + _WORD + rb"\n" + _SKIP
    + rb"Architecture: " + _WORD + rb"\n" + _SKIP + rb"Version: " + _WORD + rb"(?![^\n])"
)  # fmt: skip


@record(frozen=True)
class Record:
    """One stanza that names a package: its Package, the three Status words (want, flag, state;
    each None unless there are exactly three), its Architecture and Version (None when missing)."""

    package: str
    want: str | None
    flag: str | None
    state: str | None
    arch: str | None
    version: str | None


_new = object.__new__  # how the one pass makes its records (``dpkg_order`` says why)


def records(data: str | bytes) -> list[Record]:
    """The stanzas of a dpkg status file that name a package, in file order.

    A real status file runs to tens of thousands of lines and this is on every probe's path:
    a file dpkg wrote is read with one regex pass (``dpkg_order``), any other by
    ``parse_status``. Both give the same records.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data  # never raises
    fast = dpkg_order(raw)
    return fast if fast is not None else general_records(raw)


def general_records(raw: bytes) -> list[Record]:
    """The records of any file, from ``parse_status``."""
    return [_record(st) for st in parse_status(raw) if "Package" in st]


def _record(st: dict[str, str]) -> Record:
    words = st.get("Status", "").split()
    want, flag, state = words if len(words) == 3 else (None, None, None)
    return Record(st["Package"], want, flag, state, st.get("Architecture"), st.get("Version"))


def dpkg_order(raw: bytes) -> list[Record] | None:
    """The records when every stanza has dpkg's own shape (see ``_DPKG_ORDER``), else None.

    Every line starting "Package:" must begin a match: a stanza in another order or shape, a
    second Package in one stanza, or stanzas parted by a whitespace-only or CRLF line leave a
    Package line unmatched, and the whole file goes to ``parse_status``.
    """
    found = _one_pass(raw)
    if found is None:
        return None
    # Printable ASCII: nothing to replace, and nothing a strip would take.
    # Records made without their generic __init__ (2 us each, ten times this): the one pass is on
    # every probe's path and a status file names thousands of packages. Equal to Record(...):
    # the tests hold this path equal to ``general_records``, which builds them the usual way.
    out: list[Record] = []
    for n, w, f, s, a, v in found:
        rec = _new(Record)
        rec.__dict__.update(
            package=n.decode(), want=w.decode(), flag=f.decode(), state=s.decode(), arch=a.decode(), version=v.decode()
        )
        out.append(rec)
    return out


def _one_pass(raw: bytes) -> list[tuple[bytes, bytes, bytes, bytes, bytes, bytes]] | None:
    """``dpkg_order``'s matches as they come, (package, want, flag, state, arch, version), or None."""
    found: list[tuple[bytes, bytes, bytes, bytes, bytes, bytes]] = _DPKG_ORDER.findall(raw)
    if len(found) != raw.count(b"\nPackage:") + raw.startswith(b"Package:"):
        return None
    return found


def parse_status(data: str | bytes) -> list[dict[str, str]]:
    """Stanzas of a dpkg status file, keeping the fields gpuenv reads (Package, Status, Version,
    Architecture, Multi-Arch); continuation lines and other fields are skipped.

    The general reader, for any file: it works on the bytes (only the values kept are decoded,
    as UTF-8 with undecodable bytes replaced). Stanzas are separated by blank (or
    whitespace-only) lines; of a field given twice, the first is kept; a field counts only at
    the start of a line (a continuation line starts with a space).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data  # never raises
    stanzas: list[dict[str, str]] = []
    for stanza in _stanzas(raw):
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
    package's stanza as dpkg's own reader does (``_merge_journal``).
    """
    if not updates:
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text  # never raises
        rows = _one_pass(raw)
        if rows is not None:
            return _packages_of_rows(rows, native_arch, fallback_arch)
    found = records(text)
    if updates:
        found = _merge_journal(found, text, updates)
    if native_arch is None:
        native_arch = next((rec.arch for rec in found if rec.package == "dpkg"), fallback_arch)
    keyed = [
        (
            r.package if not native_arch or not r.arch or r.arch in ("all", native_arch) else f"{r.package}:{r.arch}",
            r.flag,
            r.state,
            r.version,
        )
        for r in found
        if r.package and r.state is not None
    ]
    installed = {key: version for key, _, state, version in keyed if state in _PRESENT and version is not None}
    unfinished = [key for key, flag, state, _ in keyed if state in _UNFINISHED or flag == "reinstreq"]
    return Packages(manager="dpkg", installed=dict(sorted(installed.items())), unconfigured=tuple(unfinished))


def _packages_of_rows(
    rows: list[tuple[bytes, bytes, bytes, bytes, bytes, bytes]], native_arch: str | None, fallback_arch: str | None
) -> Packages:
    """``packages_from_status`` of a file dpkg wrote, from the one pass's matches themselves: only
    what is kept is decoded, and no record is made (on a desktop's thousands of packages that is
    most of the probe's time). The tests hold it equal to the records' way and to dpkg-query."""
    if native_arch is None:
        native = next((a for n, _w, _f, _s, a, _v in rows if n == b"dpkg"), None)
        native_arch = native.decode() if native is not None else fallback_arch
    own = (b"all", native_arch.encode()) if native_arch else ()
    installed: dict[str, str] = {}
    unfinished: list[str] = []
    for n, _w, f, s, a, v in rows:
        present, unfinished_state = s in _PRESENT_BYTES, s in _UNFINISHED_BYTES or f == b"reinstreq"
        if present or unfinished_state:
            key = n.decode() if not own or a in own else f"{n.decode()}:{a.decode()}"
            if present:
                installed[key] = v.decode()
            if unfinished_state:
                unfinished.append(key)
    return Packages(manager="dpkg", installed=dict(sorted(installed.items())), unconfigured=tuple(unfinished))


def _merge_journal(
    found: list[Record], status: str | bytes, updates: list[str] | list[bytes] | tuple[str | bytes, ...]
) -> list[Record]:
    """The status file's records with the journal's stanzas put where dpkg puts them: a package
    with one installed instance has that instance replaced, whatever architecture the new
    stanza names (a package once built for "all" now built for amd64, a crossgrade), unless
    both are Multi-Arch: same (libc6:i386 beside libc6); otherwise each architecture has its
    own (dpkg's parse_find_pkg_slot)."""
    merged = {(rec.package, rec.arch): rec for rec in found}
    same: dict[tuple[str, str | None], bool] = {}  # Multi-Arch: same, of the stanzas looked at
    in_status: dict[tuple[str, str | None], dict[str, str]] | None = None
    for update in updates:
        for st in parse_status(update):  # one stanza a file: the general reader is quick
            if "Package" not in st:
                continue
            rec = _record(st)
            key, new_same = (rec.package, rec.arch), st.get("Multi-Arch") == "same"
            installed = [k for k, r in merged.items() if k[0] == rec.package and r.state != "not-installed"]
            if len(installed) == 1 and installed[0] not in same:
                if in_status is None:  # rare: only a package already in the file is looked up
                    in_status = {(s["Package"], s.get("Architecture")): s for s in parse_status(status) if "Package" in s}
                same[installed[0]] = in_status.get(installed[0], {}).get("Multi-Arch") == "same"
            if len(installed) == 1 and not (new_same and same[installed[0]]):
                del merged[installed[0]]
            merged[key], same[key] = rec, new_same
    return list(merged.values())


def probe(host: Sysroot) -> Packages | None:
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
