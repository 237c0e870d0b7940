"""The planner's part for ROCm's new release stream (TheRock: 7.14, Core SDK 10.0, #29).

AMD documents its apt route (repos.json ``amd_therock``: repository, key URL, package names), but
not the fingerprint of the key that signs it, and gpuenv installs only from a key it pins. So a
new-stream release is refused with the route and the reason, and `install auto`, which plans the
newest release it can install, says which newer new-stream release also fits.
"""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.matrices import Matrices
from gpuenv.plan.plan import PlanError
from gpuenv.plan.repos import Repos
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.target import fitting_rocm

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any


def refuse(facts: Facts, repos: Repos, version: str) -> None:
    """A release of the new stream (7.14, 10.0): its apt route is AMD's documented one
    (repos.json amd_therock), but gpuenv installs only from a key whose fingerprint it pins, and
    AMD's pages give the key's URL, not its fingerprint. Said plainly instead of trusting the key
    on first download."""
    rel = repos.therock_release(version)
    if rel is None:
        raise PlanError(f"no repository data for ROCm {version} (the new release stream)")
    if not rel["key"].get("fingerprint"):
        raise PlanError(
            f"ROCm {version} installs from AMD's new-stream repository ({_first_uri(facts, rel)}), signed by the key "
            f"at {rel['key']['url']}; AMD's documentation gives no fingerprint for it and none could be "
            "verified, and gpuenv installs only from a key it pins. Install ROCm 7.2.4 instead "
            "(gpuenv install rocm --version 7.2.4), or follow AMD's page by hand: " + rel["source"]
        )
    # Reached only with a pinned key in an admin's repos.json: the new stream's driver route
    # (amdgpu 31.x) and package set were not read closely enough to plan them.
    raise PlanError(f"gpuenv does not plan the new release stream's install steps (ROCm {version}) yet: see {rel['source']}")


def _first_uri(facts: Facts, rel: dict[str, Any]) -> str:
    """The repository URI of the release's source lines, for this machine's distribution when the
    data names it (ubuntu2404), else with the placeholder left in."""
    distro: str = next(
        (d["distro"] for d in rel["distros"] if d["os"] == facts.os.id and d["version"] == facts.os.version_id),
        "{distro}",
    )
    lines: list[str] = rel["list"]["lines"]
    for line in lines:
        for word in line.split():
            if word.startswith("https://"):
                return word.replace("{distro}", distro)
    return "?"


def newer_stream_note(facts: Facts, matrices: Matrices, version: str, notes: list[str]) -> None:
    """install auto chose a legacy release: say which newer release of the new stream also fits
    this machine, and why it is not the one planned."""
    newest = fitting_rocm(facts, matrices, newest=True)
    if newest.stream == "therock" and inv.version_tuple(newest.version) > inv.version_tuple(version):
        notes.append(
            f"ROCm {newest.version} (the new release stream) also supports this machine; it is not planned because "
            "its repository key has no verified fingerprint (gpuenv install rocm --version "
            f"{newest.version} --dry-run says more)"
        )
