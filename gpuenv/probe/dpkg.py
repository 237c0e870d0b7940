"""Installed packages from dpkg's own database (/var/lib/dpkg/status), read directly: it is
faster than ``dpkg-query`` and works on a sysroot with no dpkg to run."""

from __future__ import annotations

from gpuenv.facts import Packages
from gpuenv.probe.host import Host

STATUS = "/var/lib/dpkg/status"
# States where the package's files are on disk (dpkg-query's "installed" in the wide sense).
_PRESENT = {"installed", "half-configured", "unpacked", "triggers-awaited", "triggers-pending"}
# States `dpkg --configure -a` (or a reinstall) must finish.
_UNFINISHED = {"half-installed", "half-configured", "unpacked", "triggers-awaited"}


_FIELDS = ("Package:", "Status:", "Version:", "Architecture:")


def parse_status(text: str) -> list[dict[str, str]]:
    """Stanzas of a dpkg status file, keeping the fields gpuenv reads (Package, Status, Version,
    Architecture); continuation lines and other fields are skipped (a real status file runs to
    tens of thousands of lines, and this is on every probe's path)."""
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith(_FIELDS):
            key, _, value = line.partition(":")
            current[key] = value.strip()
        elif not line.strip() and current:
            stanzas.append(current)
            current = {}
    if current:
        stanzas.append(current)
    return stanzas


def packages_from_status(text: str, native_arch: str | None = None) -> Packages:
    """Installed and unfinished packages; ``native_arch`` defaults to dpkg's own architecture."""
    installed: dict[str, str] = {}
    unfinished: list[str] = []
    stanzas = parse_status(text)
    if native_arch is None:
        native_arch = next((st.get("Architecture") for st in stanzas if st.get("Package") == "dpkg"), None)
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
    try:
        text = host.read_text(STATUS, limit=256 << 20)
    except (FileNotFoundError, NotADirectoryError):
        return None
    # dpkg's own architecture is the native one (/var/lib/dpkg/arch exists only with foreign ones).
    return packages_from_status(text)
