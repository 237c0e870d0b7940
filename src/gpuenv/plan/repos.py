"""Vendor repositories, keys and purge rules (matrices/repos.json), as the planner asks for them.

Loaded and checked here so that the planner stays a pure function of its inputs. There is no
switch: the file is the shipped one, or the one an installed matrices bundle carries (an admin's
mirror: ``gpuenv matrix update``, which root uses only when no other account could have changed
it, see ``gpuenv.matrices.load``). A key URL is https, or plain http on this machine's loopback
(a mirror on the host itself); either way the key must have the pinned fingerprint.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuenv.matrices import routes
from gpuenv.plan.plan import PlanError
from gpuenv.standins.record import field, record

TYPE_CHECKING = False  # what only the type checker needs is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpuenv.matrices.routes import RocmRoute

_FPR = re.compile(r"[0-9A-F]{40}")


@record(frozen=True)
class PurgeRules:
    match: tuple[re.Pattern[str], ...]
    keep: tuple[re.Pattern[str], ...]

    def matches(self, package: str) -> bool:
        if any(p.fullmatch(package) for p in self.keep):
            return False
        return any(p.fullmatch(package) for p in self.match)

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(p.pattern for p in self.match)


@record(frozen=True)
class Key:
    url: str
    fingerprint: str
    keyring: str
    source: str
    confirmed: bool


@record(frozen=True)
class Repos:
    doc: dict[str, Any] = field(repr=False)
    purge: dict[str, PurgeRules]

    # -- AMD --
    def amd_key(self) -> Key:
        return self._key("amd", {})

    def amd_suite(self, os_id: str, version: str | None) -> str | None:
        return _lookup(self.doc["amd"]["suites"], os_id, version, "suite")

    def amd_release(self, rocm: str) -> dict[str, Any] | None:
        releases: list[dict[str, Any]] = self.doc["amd"]["releases"]
        for rel in releases:
            if rel["rocm"] == rocm:
                return rel
        return None

    def amd_lists(self, rocm: str, amdgpu: str, suite: str) -> list[tuple[str, str]]:
        """(path, content) of each AMD sources file."""
        keyring = self.amd_key().keyring
        # A release whose install page gives other lines (6.x: no graphics repository) has its own.
        own = (self.amd_release(rocm) or {}).get("lines", {})
        out = []
        for name in ("amdgpu", "rocm"):
            spec = self.doc["amd"]["lists"][name]
            lines = [
                ln.format(keyring=keyring, amdgpu=amdgpu, rocm=rocm, suite=suite)
                for ln in own.get(name, spec["lines"])
            ]
            out.append((spec["path"], "\n".join(lines) + "\n"))
        return out

    # -- AMD, the new release stream (TheRock) --
    def therock_release(self, rocm: str) -> dict[str, Any] | None:
        """repos.json's entry for a release of the new stream (7.14.0, 10.0.0), or None."""
        releases: Sequence[dict[str, Any]] = self.doc.get("amd_therock", {}).get("releases", ())
        for rel in releases:
            if rel["rocm"] == rocm:
                return rel
        return None

    def rocm_routes(self) -> tuple[RocmRoute, ...]:
        """Every ROCm release's route as the choice of release needs it (gpuenv.matrices.routes):
        what `install auto` may plan, by the rule the doctor judges a bare box with (#42)."""
        return routes.from_repos(self.doc)

    @staticmethod
    def key_trusted(rel: dict[str, Any], trust: str | None) -> bool:
        """Whether the planner may pin this release's key: a fingerprint is pinned, and either a
        first-party page confirms it or --trust-unconfirmed-key repeated it."""
        return routes.key_may_pin(rel["key"].get("fingerprint"), rel["key"].get("confirmed") is True, trust)

    @staticmethod
    def therock_key(rel: dict[str, Any]) -> Key:
        """A new-stream release's key; its fingerprint is pinned (routes.installable)."""
        spec = rel["key"]
        return Key(
            url=spec["url"],
            fingerprint=spec["fingerprint"],
            keyring=spec["keyring"],
            source=spec["source"],
            confirmed=spec["confirmed"],
        )

    @staticmethod
    def therock_distro(rel: dict[str, Any], os_id: str, version: str | None) -> str | None:
        """The repository directory of this OS release (ubuntu2404), when AMD publishes one."""
        return _lookup(rel["distros"], os_id, version, "distro")

    def therock_list(self, rel: dict[str, Any], distro: str) -> tuple[str, str]:
        """(path, content) of the release's sources file, as AMD's install page writes it."""
        keyring = self.therock_key(rel).keyring
        lines = [ln.format(keyring=keyring, distro=distro) for ln in rel["list"]["lines"]]
        return rel["list"]["path"], "\n".join(lines) + "\n"

    # -- NVIDIA --
    def nvidia_distro(self, os_id: str, version: str | None) -> str | None:
        return _lookup(self.doc["nvidia"]["repos"], os_id, version, "distro")

    def nvidia_arch(self, machine: str) -> str | None:
        arches: dict[str, str] = self.doc["nvidia"]["arches"]
        return arches.get(machine)

    def nvidia_key(self, distro: str, arch: str) -> Key:
        return self._key("nvidia", {"distro": distro, "arch": arch})

    def nvidia_list(self, distro: str, arch: str) -> tuple[str, str]:
        spec = self.doc["nvidia"]["list"]
        keyring = self.nvidia_key(distro, arch).keyring
        lines = [ln.format(keyring=keyring, distro=distro, arch=arch) for ln in spec["lines"]]
        return spec["path"].format(distro=distro, arch=arch), "\n".join(lines) + "\n"

    # -- both --
    def section(self, vendor: str) -> dict[str, Any]:
        section: dict[str, Any] = self.doc[vendor]
        return section

    def is_vendor_uri(self, vendor: str, uri: str) -> bool:
        return any(h in uri for h in self.doc[vendor]["source_hosts"])

    @property
    def loopback_keys(self) -> bool:
        """Whether a key comes over plain http from this machine (what the fetch must allow)."""
        therock = [rel["key"]["url"] for rel in self.doc.get("amd_therock", {}).get("releases", ())]
        return any(_loopback_http(url) for url in [self.doc[v]["key"]["url"] for v in ("amd", "nvidia")] + therock)

    def _key(self, vendor: str, fmt: dict[str, str]) -> Key:
        spec = self.doc[vendor]["key"]
        return Key(
            url=spec["url"].format(**fmt),
            fingerprint=spec["fingerprint"],
            keyring=spec["keyring"],
            source=spec["source"],
            confirmed=spec["confirmed"],
        )


def _lookup(entries: list[dict[str, Any]], os_id: str, version: str | None, key: str) -> str | None:
    for e in entries:
        if routes.os_matches(os_id, version, e["os"], e["version"]):  # the rule install auto chooses by
            found: str = e[key]
            return found
    return None


def _loopback_http(url: str) -> bool:
    import ipaddress
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    try:
        return parts.scheme == "http" and ipaddress.ip_address(parts.hostname or "").is_loopback
    except ValueError:
        return False


def default_path() -> str:
    """The repos.json of the matrices in effect: an installed bundle's own when it carries one,
    else the shipped one."""
    import os

    from gpuenv.matrices import MatrixError
    from gpuenv.matrices import load as matrices
    from gpuenv.standins import bundled

    try:
        bundle = matrices().bundle
    except MatrixError as exc:
        raise PlanError(f"repos: {exc}") from None
    own = os.path.join(bundle.path, "repos.json")
    if bundle.origin == "installed" and os.path.isfile(own):
        return own
    return bundled.path("matrices", "repos.json")


def load(path: str | Path | None = None) -> Repos:
    return _load(str(path or default_path()))


@lru_cache(maxsize=8)
def _load(path: str) -> Repos:
    from gpuenv.standins.jsoninput import InputError, read

    try:
        doc = read(path, "repos")
    except InputError as exc:
        raise PlanError(f"repos: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != "gpuenv.matrices.repos/1":
        raise PlanError(f"repos: {path} is not a gpuenv.matrices.repos/1 document")
    try:
        purge = {stack: _rules(doc["purge"][stack], stack) for stack in ("cuda", "rocm")}
        for vendor in ("amd", "nvidia"):
            if not _FPR.fullmatch(doc[vendor]["key"]["fingerprint"]):
                raise PlanError(f"repos: {vendor} key fingerprint is not 40 upper-case hex digits")
            url = doc[vendor]["key"]["url"]
            if not (url.startswith("https://") or _loopback_http(url)):
                raise PlanError(f"repos: {vendor} key URL must be https (or http on this machine's loopback)")
        for rel in doc.get("amd_therock", {}).get("releases", ()):
            _check_therock(rel)
    except (KeyError, TypeError) as exc:
        raise PlanError(f"repos: {path}: missing or malformed {exc}") from exc
    return Repos(doc=doc, purge=purge)


def _check_therock(rel: dict[str, Any]) -> None:
    """A new-stream release: an https key whose fingerprint, when given, is a full one, and source
    lines that name the keyring (a line without it would trust whatever key apt holds)."""
    key = rel["key"]
    if key["fingerprint"] is not None and not _FPR.fullmatch(key["fingerprint"]):
        raise PlanError(f"repos: amd_therock {rel['rocm']}: key fingerprint is not 40 upper-case hex digits")
    if not (key["url"].startswith("https://") or _loopback_http(key["url"])):
        raise PlanError(f"repos: amd_therock {rel['rocm']}: key URL must be https")
    text = "\n".join(rel["list"]["lines"])
    uris = [w for w in text.split() if "://" in w]
    if "{keyring}" not in text or not uris or not all(u.startswith("https://") or _loopback_http(u) for u in uris):
        raise PlanError(f"repos: amd_therock {rel['rocm']}: source lines must be https and name {{keyring}}")


# Packages no purge may ever name: the desktop, the container toolkit, and the lookalikes that
# NVIDIA's own removal globs catch (*nvidia*, *npp*, *cuda*). A rule that matches one of them
# is too broad (an unanchored alternation "^a$|.*", a ".*nvidia.*") and the file is refused.
_NEVER = (
    "bash", "libc6", "apt", "dpkg", "systemd", "linux-firmware", "firmware-amd-graphics",
    "libdrm-amdgpu1", "xserver-xorg-video-amdgpu", "mesa-vulkan-drivers", "libgl1-mesa-dri",
    "nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container1",
    "libnvidia-container-tools", "nvidia-docker2", "hashcat-nvidia", "boinc-client-nvidia-cuda",
    "libnet-snpp-perl", "python3-pycuda", "nvtop", "hipercontracer", "python3-hiredis",
    "golang-github-nvidia-go-nvml-dev", "librocksdb8.7", "rocs",
)  # fmt: skip


def _rules(spec: dict[str, Any], stack: str) -> PurgeRules:
    compiled = {}
    for part in ("match", "keep"):
        pats = []
        for text in spec[part]:
            # Anchored expressions only: a shell glob or a bare substring would reach unrelated packages.
            if not (text.startswith("^") and text.endswith("$")):
                raise PlanError(f"repos: purge.{stack}.{part}: {text!r} is not anchored with ^...$")
            try:
                pats.append(re.compile(text))
            except re.error as exc:
                raise PlanError(f"repos: purge.{stack}.{part}: {text!r}: {exc}") from exc
        compiled[part] = tuple(pats)
    rules = PurgeRules(match=compiled["match"], keep=compiled["keep"])
    wrong = [name for name in _NEVER if rules.matches(name)]
    if wrong:
        raise PlanError(f"repos: purge.{stack} would name {', '.join(wrong)}: a rule is too broad")
    return rules
