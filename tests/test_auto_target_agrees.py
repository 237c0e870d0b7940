"""The doctor and the planner agree on what `install auto` installs (#42): over a grid of bare
boxes (AMD GPUs of several kinds, an NVIDIA GPU; an unknown OS, Ubuntu 22.04 / 24.04, Debian
12 / 13), the release the doctor judges a bare box against is the release `install auto` plans,
and where the doctor says a newer release would fit with --trust-unconfirmed-key, the planner
given that flag plans exactly that release. Both read "which releases can be installed by
default" through gpuenv.matrices.routes: the doctor from rocm.json's copy of the routes, the
planner from repos.json."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.matrices import load as load_matrices
from gpuenv.matrices import routes
from gpuenv.plan import planner, repos
from gpuenv.plan.plan import Action, KeyNotTrusted, Plan, Request
from gpuenv.probe import collect
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose, target_dict
from tests.probe_helpers import ROOTS

GPUS = {
    "gfx1103 Radeon 780M (iGPU)": ("1002:15bf", "amd"),
    "gfx1201 RX 9070 XT": ("1002:7550", "amd"),
    "gfx942 MI300X": ("1002:74a1", "amd"),
    "gfx906 MI50": ("1002:66a1", "amd"),
    "gfx1030 RX 6800 XT": ("1002:73bf", "amd"),
    "H100": ("10de:2330", "nvidia"),
}
OSES = {
    "unknown": {"id": "unknown", "version_id": None},
    "ubuntu 22.04": {"id": "ubuntu", "version_id": "22.04", "codename": "jammy", "id_like": ["debian"]},
    "ubuntu 24.04": {"id": "ubuntu", "version_id": "24.04", "codename": "noble", "id_like": ["debian"]},
    "debian 12": {"id": "debian", "version_id": "12", "codename": "bookworm"},
    "debian 13": {"id": "debian", "version_id": "13", "codename": "trixie"},
}
KEY = re.compile(r"^install auto plans ROCm (\S+) only with --trust-unconfirmed-key ([0-9A-F]{40}) "
                 r"\(its repository key's fingerprint is not confirmed by AMD\)$")
KEY_ASKED = re.compile(r"repeat it: --trust-unconfirmed-key ([0-9A-F]{40})$")
NEWER = re.compile(r"^ROCm (\S+) is newer and also fits this machine; install auto plans it only with "
                   r"--trust-unconfirmed-key ([0-9A-F]{40}) \(its repository key's fingerprint is not confirmed by AMD\)$")  # fmt: skip


@pytest.fixture(scope="module")
def bare() -> dict:
    """A bare Ubuntu 24.04 box (no GPU stack, no apt sources of a vendor), as the probe reads it."""
    return collect(root=str(ROOTS / "ubuntu2404-rx9070xt-fresh")).to_dict()


def box(bare: dict, gpu: str, os_name: str) -> facts_mod.Facts:
    doc = copy.deepcopy(bare)
    pci, vendor = GPUS[gpu]
    [g] = doc["gpus"]
    g.update(pci_id=pci, vendor=vendor, name=gpu, subsystem_id=None, revision=None)
    doc["os"] = {"id": None, "version_id": None, "codename": None, "id_like": [], "pretty_name": None} | OSES[os_name]
    return facts_mod.from_dict(doc)


def make(facts: facts_mod.Facts, trust: str | None = None) -> Plan | None:
    """`install auto`'s plan (None where it chooses no stack)."""
    m = load_matrices()
    stack = planner.choose_stack(facts, m)
    if stack is None:
        return None
    req = Request(action=Action.INSTALL, stack=stack, user="alice", trust_key=trust)
    return planner.make_plan(facts, m, repos.load(), req)


def plan_target(facts: facts_mod.Facts, trust: str | None = None) -> tuple[str | None, str | None]:
    p = make(facts, trust)
    return (p.target.stack, p.target.version) if p is not None else (None, None)


def refused_for(facts: facts_mod.Facts) -> str | None:
    """The fingerprint install auto's refusal asks the user to repeat, None when it plans."""
    try:
        plan_target(facts)
    except KeyNotTrusted as exc:
        return KEY_ASKED.search(str(exc)).group(1)
    return None


@pytest.mark.parametrize("os_name", sorted(OSES))
@pytest.mark.parametrize("gpu", sorted(GPUS))
def test_the_doctor_judges_a_bare_box_against_what_install_auto_plans(bare, gpu, os_name):
    facts = box(bare, gpu, os_name)
    judged = target_dict(diagnose(facts, load_matrices(), Target()).target)
    assert judged["basis"] == "auto", judged
    # install auto plans the doctor's release, or refuses it until the key the doctor names is
    # repeated, and then plans exactly that release.
    asked = refused_for(facts)
    key = KEY.match(judged.get("key") or "")
    assert (key.group(1), key.group(2)) == (judged["version"], asked) if asked else key is None
    assert (judged["stack"], judged["version"]) == plan_target(facts, asked)
    # The doctor's sentence about a newer release names the release the flag plans, and its key.
    newer = NEWER.match(judged.get("newer") or "")
    if newer:
        assert plan_target(facts, newer.group(2)) == (judged["stack"], newer.group(1))


def test_the_grid_covers_both_answers(bare):
    """The grid is not vacuous: some boxes get a newer release with the flag, some do not, and
    the 780M of ollama#15482 with no os-release is judged against the release install auto plans."""
    said = {(g, o): target_dict(diagnose(box(bare, g, o), load_matrices(), Target()).target) for g in GPUS for o in OSES}
    assert any("newer" in t for t in said.values()) and any("newer" not in t for t in said.values())
    assert said["gfx1103 Radeon 780M (iGPU)", "unknown"]["version"] == "7.2.4"
    assert said["gfx906 MI50", "ubuntu 22.04"]["version"] == "6.3.3"  # the newest release listing gfx906
    assert said["gfx1201 RX 9070 XT", "ubuntu 24.04"]["newer"].startswith("ROCm 10.1.0 is newer")
    assert said["H100", "debian 12"]["stack"] == "cuda"


def test_the_doctors_routes_are_the_planners():
    """rocm.json's copy of the routes (what the doctor reads) is repos.json's (what the planner reads)."""
    m = load_matrices()
    releases = [r.version for r in m.rocm_releases()]
    assert routes.disagreement(releases, m.rocm_routes(), repos.load().rocm_routes()) is None
    assert {r.rocm for r in load_matrices().rocm_routes()} >= {"7.2.4", "6.3.3", "10.1.0"}


def test_a_bundle_whose_copies_disagree_is_named(tmp_path):
    doc = json.loads(Path(repos.default_path()).read_text())
    for rel in doc["amd_therock"]["releases"]:
        rel["key"]["confirmed"] = True
    m = load_matrices()
    said = routes.disagreement([r.version for r in m.rocm_releases()], m.rocm_routes(), routes.from_repos(doc))
    assert said == "rocm.json's repository entries and repos.json disagree for ROCm 7.14.0, 7.14.1, 10.0.0, 10.1.0"
