"""APT sources: one-line ``.list`` files and deb822 ``.sources`` files, with ``signed-by``."""

from __future__ import annotations

import re

from gpuenv.facts import AptSource
from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import ProbeError

SOURCES_LIST = "/etc/apt/sources.list"
SOURCES_DIR = "/etc/apt/sources.list.d"
_OPTIONS = r"^\[([^\]]*)\]\s*"
# An APT URI: a scheme, then ':' (http://, https://, file:/, cdrom:[...]/, mirror+file:/..., copy:).
_URI = r"^[A-Za-z][A-Za-z0-9+.-]*:\S"


def parse_list(text: str, file: str | None = None) -> list[AptSource]:
    """``deb [opts] URI SUITE [COMPONENT...]`` lines; ``# deb ...`` lines come back disabled.

    ``deb-src`` lines are left out: gpuenv installs binaries only.
    """
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        enabled = True
        if line.startswith("#"):
            line = line.lstrip("#").strip()
            enabled = False
        line = line.split(" #", 1)[0].strip()
        if not line.startswith("deb ") and not line.startswith("deb\t"):
            continue
        rest = line[3:].strip()
        options: dict[str, str] = {}
        m = re.match(_OPTIONS, rest)
        if m:
            for opt in m.group(1).split():
                key, _, value = opt.partition("=")
                options[key.lower()] = value
            rest = rest[m.end() :]
        fields = rest.split()
        if len(fields) < 2 or not re.match(_URI, fields[0]):
            continue
        out.append(
            AptSource(
                uri=fields[0],
                file=file,
                suites=(fields[1],),
                components=tuple(fields[2:]),
                signed_by=options.get("signed-by") or None,
                enabled=enabled,
            )
        )
    return out


def parse_deb822(text: str, file: str | None = None) -> list[AptSource]:
    """Stanzas of a ``.sources`` file; one AptSource per URI of each ``deb`` stanza."""
    out = []
    for stanza in _deb822_stanzas(text):
        types = stanza.get("types", "").split()
        if "deb" not in types:
            continue
        signed = stanza.get("signed-by", "").strip()
        # An embedded key block is recorded as "inline", not as its text.
        signed_by = "inline" if "BEGIN PGP" in signed else (" ".join(signed.split()) or None)
        enabled = stanza.get("enabled", "yes").strip().lower() not in ("no", "false", "0")
        for uri in stanza.get("uris", "").split():
            out.append(
                AptSource(
                    uri=uri,
                    file=file,
                    suites=tuple(stanza.get("suites", "").split()),
                    components=tuple(stanza.get("components", "").split()),
                    signed_by=signed_by,
                    enabled=enabled,
                )
            )
    return out


def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, None
            continue
        if line[0] in " \t":
            if key is not None:
                current[key] += "\n" + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep:
            continue
        key = name.strip().lower()
        current[key] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def probe(host: Sysroot, errors: list[ProbeError]) -> tuple[AptSource, ...] | None:
    """None when APT is not there at all."""
    from gpuenv.facts import ProbeError

    if not host.is_dir("/etc/apt"):
        return None
    files = [SOURCES_LIST] + [f"{SOURCES_DIR}/{n}" for n in host.listdir(SOURCES_DIR)]
    out: list[AptSource] = []
    for path in files:
        if not path.endswith((".list", ".sources")):
            continue
        try:
            text = host.read_optional(path)
            if text is None:
                continue
            out.extend(parse_deb822(text, path) if path.endswith(".sources") else parse_list(text, path))
        except Exception as exc:
            errors.append(ProbeError("apt_sources", f"{path}: {exc}"))
    return tuple(out)
