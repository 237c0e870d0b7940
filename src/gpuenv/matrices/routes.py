"""Which ROCm releases gpuenv can install by default (#42): the one rule the doctor's "what
`install auto` would install" and the planner share.

A release is installable when gpuenv has its repository route (repos.json: ``amd.releases`` for the
legacy stream, ``amd_therock.releases`` for the new one), the route's key has a pinned fingerprint
that gpuenv may pin (a first-party source confirms it, or --trust-unconfirmed-key repeated it) and,
for the new stream, AMD's repository has a directory for the machine's OS (when the OS is known).

The planner reads the routes from repos.json (``gpuenv.plan.repos``); the doctor reads the same
routes from rocm.json's ``repository`` entries, which ``matrices/tools/build_rocm.py`` copies from
repos.json (so a doctor run never reads the planner's file), and ``matrix update`` refuses a bundle
whose two copies disagree (``disagreement``).
"""

from __future__ import annotations

from gpuenv.matrices.records import vkey
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


@record(frozen=True)
class RocmRoute:
    """One release's repository route, as far as the choice of release needs it."""

    rocm: str
    fingerprint: str | None  # None: no pinned fingerprint (gpuenv installs only from a key it pins)
    key_confirmed: bool  # a first-party source publishes the fingerprint
    # (os id, version) pairs AMD's repository has a directory for; None: not narrowed by OS (the
    # legacy stream's suites; os.unsupported judges the OS).
    distros: tuple[tuple[str, str], ...] | None = None

    def key_may_pin(self, trust: str | None = None) -> bool:
        return key_may_pin(self.fingerprint, self.key_confirmed, trust)

    def trust_flag(self) -> str | None:
        """The fingerprint --trust-unconfirmed-key must repeat before gpuenv pins this route's key;
        None where it pins the key without it (or pins none). One rule for every sentence that
        names the flag (the doctor's target line and its fixes)."""
        return self.fingerprint if self.fingerprint and not self.key_confirmed else None

    def serves(self, os_id: str | None, version: str | None) -> bool:
        """Whether the route has a directory for this OS; an unknown OS is not narrowed."""
        if self.distros is None or not os_id:
            return True
        return any(os_matches(os_id, version, o, v) for o, v in self.distros)


def key_may_pin(fingerprint: str | None, confirmed: bool, trust: str | None = None) -> bool:
    """Whether gpuenv may pin a key: its fingerprint is pinned, and a first-party source confirms it
    or --trust-unconfirmed-key (``trust``) repeated it."""
    return bool(fingerprint) and (confirmed is True or fingerprint == trust)


def os_matches(os_id: str, version: str | None, entry_os: str, entry_version: str) -> bool:
    """A repository entry for ``entry_os`` ``entry_version`` serves this OS ("24.04" serves 24.04.3)."""
    return (
        entry_os == os_id
        and version is not None
        and (version == entry_version or version.startswith(entry_version + "."))
    )


def installable(
    routes: Iterable[RocmRoute], os_id: str | None, os_version: str | None, trust: str | None = None
) -> frozenset[str]:
    """The releases gpuenv can install here: a route, a key it may pin, a directory for this OS."""
    return frozenset(r.rocm for r in routes if r.key_may_pin(trust) and r.serves(os_id, os_version))


def choosable(
    routes: Iterable[RocmRoute], default: str, os_id: str | None, os_version: str | None, trust: str | None = None
) -> frozenset[str]:
    """The releases `install auto` chooses among: those ``installable`` here; where none is (no
    route's key is confirmed and the user named none that pins one: #42, AMD publishes none of its
    repository keys' fingerprints), those the ``default`` release's key would make installable, so
    that the plan, refused until --trust-unconfirmed-key repeats that key, is the one the flag gives."""
    routes = tuple(routes)
    allowed = installable(routes, os_id, os_version, trust)
    if allowed:
        return allowed
    fallback = next((r.fingerprint for r in routes if r.rocm == default and r.fingerprint), None)
    return installable(routes, os_id, os_version, fallback) if fallback else allowed


def from_repos(doc: dict[str, Any]) -> tuple[RocmRoute, ...]:
    """The AMD routes of a repos.json document (gpuenv.matrices.repos/1), legacy stream first."""
    key = doc["amd"]["key"]
    routes = [
        RocmRoute(rocm=rel["rocm"], fingerprint=key["fingerprint"], key_confirmed=key["confirmed"] is True)
        for rel in doc["amd"]["releases"]
    ]
    for rel in doc.get("amd_therock", {}).get("releases", ()):
        routes.append(
            RocmRoute(
                rocm=rel["rocm"],
                fingerprint=rel["key"].get("fingerprint"),
                key_confirmed=rel["key"].get("confirmed") is True,
                distros=tuple((d["os"], d["version"]) for d in rel["distros"]),
            )
        )
    return tuple(routes)


def disagreement(releases: Iterable[str], ours: Iterable[RocmRoute], theirs: Iterable[RocmRoute]) -> str | None:
    """What differs between rocm.json's copy of the routes and repos.json's, for the ROCm
    ``releases`` rocm.json holds (a route for a release it lacks is never chosen), in words; None
    when they agree (a bundle whose doctor and planner would choose different releases is refused)."""
    a = {r.rocm: r for r in ours}
    b = {r.rocm: r for r in theirs}
    differ = sorted((v for v in set(releases) if a.get(v) != b.get(v)), key=vkey)
    if not differ:
        return None
    return "rocm.json's repository entries and repos.json disagree for ROCm " + ", ".join(differ)
