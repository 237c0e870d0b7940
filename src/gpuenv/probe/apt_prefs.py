"""APT's pins: /etc/apt/preferences and the files of /etc/apt/preferences.d.

A pin decides which of two repositories' packages of one name apt installs: AMD's install guide
pins repo.radeon.com above the distribution (Pin-Priority 600) because Ubuntu's own rocminfo,
hipcc and rocm-cmake carry higher version numbers than AMD's and would otherwise win.
apt_preferences(5): preferences.d files are read when their name has no extension or ends in
".pref", and consists of letters, digits, "_", "-" and "."; stanzas are separated by blank lines.
"""

from __future__ import annotations

from gpuenv.facts import AptPin

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import ProbeError
    from gpuenv.probe.host import Sysroot

MAIN = "/etc/apt/preferences"
PARTS = "/etc/apt/preferences.d"
# The characters of a preferences.d file name apt reads (a set, not a regex: the probe runs on
# every command that reads the machine, and compiling a pattern costs more than this check).
_PART_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def parse_preferences(text: str, file: str | None = None) -> list[AptPin]:
    """The stanzas with Package, Pin and Pin-Priority; comments and other fields are skipped, and
    a stanza without all three (or with a priority that is no integer) is no pin."""
    pins = []
    for stanza in _stanzas(text):
        fields: dict[str, str] = {}
        for line in stanza:
            if line.startswith("#") or ":" not in line or line[:1].isspace():
                continue
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
        try:
            priority = int(fields.get("pin-priority", ""))
        except ValueError:
            continue
        if fields.get("package") and fields.get("pin"):
            pins.append(AptPin(package=fields["package"], pin=fields["pin"], priority=priority, file=file))
    return pins


def _stanzas(text: str) -> list[list[str]]:
    """The lines of each stanza: a blank or whitespace-only line ends one."""
    out: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            out[-1].append(line)
        elif out[-1]:
            out.append([])
    return out


def _read(name: str) -> bool:
    if not name or not _PART_CHARS.issuperset(name):
        return False
    return "." not in name or name.endswith(".pref")


def probe(host: Sysroot, errors: list[ProbeError]) -> tuple[AptPin, ...] | None:
    """Every pin, in the order apt reads the files; None on a machine without apt."""
    if not host.is_dir("/etc/apt"):
        return None
    from gpuenv.facts import ProbeError

    pins: list[AptPin] = []
    for path in [MAIN] + [f"{PARTS}/{n}" for n in host.listdir(PARTS) if _read(n)]:
        try:
            text = host.read_optional(path)
        except OSError as exc:
            errors.append(ProbeError("apt_pins", f"{path}: {exc}"))
            continue
        if text is not None:
            pins += parse_preferences(text, path)
    return tuple(pins)
