"""The planner's part for ROCm's new release stream (TheRock: 7.14, Core SDK 10.0 and 10.1, #29).

The steps are AMD's documented apt route (repos.json ``amd_therock``, from the release's install
page, ROCm/rocm-docs docs/install/include/200-install.rst): the key, fetched and held to the
fingerprint repos.json pins, as the keyring; the release's sources file; apt-get update; the user in
render and video; the release's package for each of the machine's gfx targets. A legacy ROCm
install goes first (AMD's page: "If you have ROCm 7.2.4 or older installed, please uninstall it
before proceeding"), by the ROCm purge rules less the amdgpu driver, which this plan leaves as it is:
the page does not give the driver's steps, it links the AMD GPU driver's own documentation.
A release the matrices judge but repos.json gives no route for is refused here, and install auto's
note says it is newer than what it plans.
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.matrices import Matrices
from gpuenv.plan.builders import (
    GROUPS_WHY,
    apt_install,
    apt_update,
    gpu_groups,
    key_and_sources,
    ldconfig,
    pin_key,
    remove_file,
)
from gpuenv.plan.plan import Kind, PlanError, Step
from gpuenv.plan.purge import purge_packages
from gpuenv.plan.repos import Repos
from gpuenv.resolve import facts_view, gpuinfo
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.checks import amd as amd_checks
from gpuenv.resolve.checks import stack as stack_checks
from gpuenv.resolve.registry import cite
from gpuenv.resolve.target import fitting_rocm

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

# What a switch from the legacy stream keeps: the new stream's own packages (amdrocm-*) and the
# amdgpu kernel driver, which the new stream runs on and this plan does not replace.
_KEEP = (re.compile(r"^amdrocm(-[a-z0-9]+)*([0-9]+\.[0-9]+)?(-[a-z0-9]+)*$"), re.compile(r"^amdgpu-dkms(-firmware)?$"))
# The legacy ROCm repositories on repo.radeon.com (rocm/apt, graphics); amdgpu/ is the driver's.
_LEGACY_URI = re.compile(r"https?://repo\.radeon\.com/(rocm/apt|graphics)/")


def install_steps(
    facts: Facts,
    matrices: Matrices,
    repos: Repos,
    version: str,
    user: str | None,
    notes: list[str],
    kernel_ok: bool,
    trust: str | None = None,
) -> list[Step]:
    """The install of a new-stream release, or a PlanError saying why gpuenv cannot plan it.
    ``kernel_ok``: the machine's kernel is its own (not a container's or WSL's, noted already);
    ``trust``: the fingerprint --trust-unconfirmed-key repeated, if any."""
    rel = repos.therock_release(version)
    if rel is None:
        raise PlanError(f"no repository data for ROCm {version} (the new release stream)")
    if not rel["key"].get("fingerprint"):
        raise PlanError(
            f"ROCm {version} installs from AMD's new-stream repository ({_first_uri(facts, rel)}), signed by the key "
            f"at {rel['key']['url']}; gpuenv knows no fingerprint for it, and installs only from a key it pins. "
            "Install ROCm 7.2.4 instead (gpuenv install rocm --version 7.2.4), or follow AMD's page by hand: "
            + rel["source"]
        )
    pin_key(rel["key"], version, trust, notes)
    distro = repos.therock_distro(rel, *inv.repo_os(facts))
    if distro is None:
        offered = ", ".join(f"{d['os']} {d['version']}" for d in rel["distros"])
        raise PlanError(
            f"AMD's apt repository for ROCm {version} has no directory for {inv.os_label(facts)} "
            f"(it has {offered}); gpuenv installs the new release stream through apt only"
        )
    key = repos.therock_key(rel)
    path, content = repos.therock_list(rel, distro)
    why = f"AMD's repository for ROCm {version} ({distro})"
    steps = _legacy_purge(facts, repos, version, keep=path)
    steps += key_and_sources(key, [(path, content)], why)
    steps.append(apt_update())
    steps += gpu_groups(facts, user, notes, why=cite(amd_checks.no_device_access, GROUPS_WHY))
    packages = _packages(facts, matrices, rel, version)
    steps.append(apt_install("toolkit", f"Install ROCm {version} ({' '.join(packages)})", f"target rocm {version}", packages))
    if kernel_ok:
        notes.append(
            f"the amdgpu kernel driver is left as it is: AMD's install page for ROCm {version} does not give its "
            f"steps but points to {rel['driver']}"
        )
    _shared_route_note(repos, rel, version, notes)
    return steps


def _shared_route_note(repos: Repos, rel: dict[str, Any], version: str, notes: list[str]) -> None:
    """A patch release whose route a newer one of its series shares (7.14.0 and 7.14.1: one
    repository, one set of package names) cannot be chosen by apt: the repository serves its newest.
    Said, so that a plan for 7.14.0 does not pass for an install of exactly 7.14.0."""
    newer = [
        other["rocm"]
        for other in repos.section("amd_therock")["releases"]
        if inv.series(other["rocm"]) == inv.series(version)
        and inv.older(version, other["rocm"])
        and (other["list"], other["packages"]) == (rel["list"], rel["packages"])
    ]
    if newer:
        newest = max(newer, key=inv.version_tuple)
        notes.append(
            f"AMD's repository for ROCm {inv.series(version)} serves its newest patch release under the same package "
            f"names: apt installs ROCm {newest} (or a newer patch), not {version}"
        )


def _packages(facts: Facts, matrices: Matrices, rel: dict[str, Any], version: str) -> list[str]:
    """The release's package for each gfx target of the machine's GPUs that it supports (AMD's
    per-target amdrocmX.Y-gfxNNNN), else the all-targets package amdrocmX.Y."""
    known = matrices.rocm_release(version)
    gpus = facts_view.rocm_gpus(facts, matrices)  # the GPUs the doctor judges ROCm against
    targets = sorted({t for g in gpus if (t := gpuinfo.gfx_target(g, matrices)) and known and known.support(t)})
    names = rel["packages"]
    if not targets or "toolkit_gfx" not in names:
        return [names["toolkit"]]
    return [names["toolkit_gfx"].format(gfx=t) for t in targets]


def _legacy_purge(facts: Facts, repos: Repos, version: str, keep: str) -> list[Step]:
    """A legacy ROCm install's packages (the purge rules, less the new stream's and the driver's)
    and its repository files, source lists of rocm/apt and graphics only, its pin and loader file."""
    why = f"AMD's ROCm {version} install page: uninstall ROCm 7.2.4 or older first"
    packages = [p for p in purge_packages(facts, repos, "rocm") if not any(k.fullmatch(p.split(":")[0]) for k in _KEEP)]
    sources = [f for f in _legacy_source_files(facts) if f != keep]
    if not packages and not sources:
        return []  # no legacy install: a list of "remove X (already absent)" steps is noise
    steps: list[Step] = []
    if packages:
        steps.append(
            Step(
                id="purge-legacy-rocm-packages",
                kind=Kind.APT_PURGE,
                title=f"Purge the {len(packages)} installed legacy ROCm packages (the amdgpu driver stays)",
                why=why,
                packages=tuple(packages),
                argv=("apt-get", "purge", "-y", *packages),
                skip_if="none of these packages is installed",
            )
        )
    amd = repos.section("amd")
    files = [*sources, amd["pin"]["path"], amd["ld_so_conf"]["path"]]
    steps += [
        remove_file(f"purge-legacy-rocm-file-{i}", f"Remove {f}", cite(stack_checks.leftovers, "the legacy ROCm stream's files"), f)
        for i, f in enumerate(dict.fromkeys(files))
    ]
    steps.append(ldconfig("purge-legacy-rocm-ldconfig", "drop /etc/ld.so.conf.d/rocm.conf from the loader cache",
                          tuple(s.id for s in steps)))  # fmt: skip
    if packages:
        rules = repos.purge["rocm"]
        steps.append(
            Step(
                id="purge-legacy-rocm-autoremove",
                kind=Kind.APT_PURGE,
                title="Autoremove what the legacy ROCm purge orphaned (simulated first; only legacy ROCm packages)",
                why="apt autoremove is simulated and narrowed: it never takes the driver or the new stream's packages",
                autoremove=True,
                allow=rules.patterns + tuple("!" + p.pattern for p in (*rules.keep, *_KEEP)),
                argv=("apt-get", "autoremove", "--purge", "-y"),
                skip_if="apt's simulation finds no orphan of the legacy stream",
            )
        )
    return steps


def _legacy_source_files(facts: Facts) -> list[str]:
    """Source files that list only legacy ROCm repositories (a file that lists anything else stays)."""
    sources = facts.apt_sources or ()
    files = dict.fromkeys(s.file for s in sources if s.file and _LEGACY_URI.match(s.uri))
    return [f for f in files if all(_LEGACY_URI.match(s.uri) for s in sources if s.file == f)]


def _first_uri(facts: Facts, rel: dict[str, Any]) -> str:
    """The repository URI of the release's source lines, for this machine's distribution when the
    data names it (ubuntu2404), else with the placeholder left in."""
    distro = Repos.therock_distro(rel, *inv.repo_os(facts)) or "{distro}"
    lines: list[str] = rel["list"]["lines"]
    for line in lines:
        for word in line.split():
            if word.startswith("https://"):
                return word.replace("{distro}", distro)
    return "?"


def _not_planned(facts: Facts, repos: Repos, version: str, trust: str | None = None) -> str | None:
    """Why the planner cannot install a new-stream release here, in words; None when it can."""
    rel = repos.therock_release(version)
    if rel is None:
        return "gpuenv has no repository data for it"
    if not rel["key"].get("fingerprint"):
        return "its repository key has no verified fingerprint"
    if not repos.key_trusted(rel, trust):
        return (
            f"its repository key's fingerprint is not confirmed by AMD (--trust-unconfirmed-key "
            f"{rel['key']['fingerprint']} plans it)"
        )
    if repos.therock_distro(rel, *inv.repo_os(facts)) is None:
        return f"AMD's repository for it has no directory for {inv.os_label(facts)}"
    return None


def newer_release_note(
    facts: Facts, matrices: Matrices, repos: Repos, version: str, notes: list[str], trust: str | None = None
) -> None:
    """install auto planned ``version``: when a newer release of the new stream also supports this
    machine (the newest the matrices judge, 10.1.0, say), say which and why it is not the one planned
    (its install page was not read, its key has no pinned fingerprint, ...). One note, for either
    stream's planned release."""
    newest = fitting_rocm(facts, matrices, newest=True)
    if newest.stream != "therock" or not inv.older(version, newest.version):
        return
    why = _not_planned(facts, repos, newest.version, trust)
    if why is None:
        return
    notes.append(
        f"ROCm {newest.version} (the new release stream) is newer and also supports this machine; it is not "
        f"planned because {why}; ROCm {version} is the newest release gpuenv can install here"
    )
