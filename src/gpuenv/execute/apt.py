"""apt's own dry run, parsed: what `apt-get -s` says it would install and remove.

Pure functions of apt's text (``parse_simulation``), plus the collateral rule: a package apt
would remove that the plan did not name is collateral, shown in red by a dry run and refused by
apply unless the user names it with --allow-removal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuenv.standins.record import record

_LINE = re.compile(r"^(Inst|Remv|Purg|Conf) (\S+)(?: \[([^\]]*)\])?(?: \(([^ )]*))?")
_MISSING = re.compile(
    r"^E: Unable to locate package (\S+)|^E: Package '([^']+)' has no installation candidate"
)


@record(frozen=True)
class Simulation:
    installs: tuple[str, ...] = ()  # new or upgraded packages
    removes: tuple[str, ...] = ()  # removed or purged
    missing: tuple[str, ...] = ()  # names apt could not find (not in its lists yet)
    error: str | None = None  # apt refused to simulate (broken dependencies, ...)

    def collateral(self, planned: Iterable[str], allowed: Iterable[str] = ()) -> tuple[str, ...]:
        ok = set(planned) | set(allowed)
        return tuple(p for p in self.removes if p not in ok)


def parse_simulation(text: str, returncode: int = 0) -> Simulation:
    installs: list[str] = []
    removes: list[str] = []
    missing: list[str] = []
    errors: list[str] = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            action, pkg = m.group(1), m.group(2).split(":")[0]
            if action == "Inst":
                installs.append(pkg)
            elif action in ("Remv", "Purg"):
                removes.append(pkg)
            continue
        miss = _MISSING.match(line)
        if miss:
            missing.append(miss.group(1) or miss.group(2))
        elif line.startswith("E: "):
            errors.append(line[3:])
    error = None
    if returncode != 0 and not missing:
        error = "; ".join(errors) or f"apt-get exited {returncode}"
    return Simulation(tuple(dict.fromkeys(installs)), tuple(dict.fromkeys(removes)), tuple(missing), error)


def parse_dpkg_query(text: str) -> dict[str, str]:
    """`dpkg-query -W -f '${Package}\\t${Version}\\t${db:Status-Abbrev}\\n'` -> installed name -> version."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[2].startswith("ii"):
            out[parts[0].split(":")[0]] = parts[1]
    return out


def pub_fingerprints(colons: str) -> tuple[tuple[str, ...], int]:
    """`gpg --show-keys --with-colons` -> (fingerprints of the primary keys, number of primary keys).
    Subkey fingerprints are skipped: the pinned fingerprint is the primary key's."""
    fprs: list[str] = []
    primaries = 0
    expect = False
    for line in colons.splitlines():
        fields = line.split(":")
        if fields[0] == "pub":
            primaries += 1
            expect = True
        elif fields[0] == "sub":
            expect = False
        elif fields[0] == "fpr" and expect and len(fields) > 9:
            fprs.append(fields[9].upper())
            expect = False
    return tuple(fprs), primaries


def pub_validity(colons: str) -> tuple[str, ...]:
    """`gpg --show-keys --with-colons` -> the validity letter of each primary key ("e" expired,
    "r" revoked, "-" or "" otherwise, as gpg says without a trust database)."""
    return tuple(line.split(":")[1] for line in colons.splitlines() if line.startswith("pub:"))


def signing_keys(colons: str) -> tuple[str, ...]:
    """`gpg --show-keys --with-colons` -> the key ids that can sign now: the primary key when its
    own capabilities (field 12, lower case) include "s", and each signing subkey, none of them
    expired ("e"), revoked ("r") or invalid ("i"). A repository key with none of these cannot
    sign a Release file that apt accepts."""
    out: list[str] = []
    primary_ok = False
    for line in colons.splitlines():
        fields = line.split(":")
        if len(fields) < 12 or fields[0] not in ("pub", "sub"):
            continue
        valid = fields[1] not in ("e", "r", "i", "d")
        if fields[0] == "pub":
            primary_ok = valid
        if valid and primary_ok and "s" in fields[11]:
            out.append(fields[4])
    return tuple(out)


def lists_name(uri: str, suite: str) -> str:
    """The file apt keeps a source's InRelease in (apt's URItoFileName):
    'https://repo.radeon.com/rocm/apt/7.2.4', 'noble' -> 'repo.radeon.com_rocm_apt_7.2.4_dists_noble_InRelease'."""
    rest = release_url(uri, suite).split("://", 1)[-1]
    return rest.replace("//", "/").replace("/", "_")


def release_url(uri: str, suite: str) -> str:
    """Where apt fetches a source's InRelease: URI/dists/SUITE/InRelease, or URI/SUITE/InRelease
    for a flat repository (a suite ending in '/', as NVIDIA's 'deb URI /')."""
    base = uri.rstrip("/")
    if suite.endswith("/"):
        path = suite.strip("/")
        return f"{base}/{path}/InRelease" if path else f"{base}/InRelease"
    return f"{base}/dists/{suite}/InRelease"


def sources_of(content: str, keyring: str) -> list[tuple[str, str]]:
    """(uri, suite) of each one-line `deb [... signed-by=KEYRING ...] URI SUITE ...` entry."""
    out = []
    for line in content.splitlines():
        m = re.match(r"^deb\s+\[([^\]]*)\]\s+(\S+)\s+(\S+)", line.strip())
        if m and f"signed-by={keyring}" in m.group(1).split():
            out.append((m.group(2), m.group(3)))
    return out
