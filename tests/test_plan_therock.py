"""The planner and ROCm's new release stream (#29): AMD's documented apt route for 7.14/10.0/10.1
is in repos.json with its key pinned by fingerprint, `install auto` plans the newest release that
supports the machine whichever stream it is in (10.1.0 for an RX 9070 XT on Ubuntu 24.04), a legacy
install is purged without the driver, 7.2.4 and 10.0.0 stay installable by --version, a release
whose key has no fingerprint is refused, and install auto says why a newer release is not planned."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.matrices import load as load_matrices
from gpuenv.matrices import routes
from gpuenv.plan import planner, purge, repos
from gpuenv.plan.plan import Action, Kind, PlanError
from gpuenv.probe import collect
from gpuenv.resolve.target import fitting_rocm
from tests.cli_runner import CliRunner, app
from tests.probe_helpers import ROOTS

runner = CliRunner()
RX9070XT = ROOTS / "ubuntu2404-rx9070xt-fresh"


@pytest.fixture(scope="module")
def m():
    return load_matrices()


@pytest.fixture(scope="module")
def facts():
    fx = collect(root=str(RX9070XT))
    assert (fx.os.id, fx.os.version_id) == ("ubuntu", "24.04")
    assert any(g.pci_id == "1002:7550" for g in fx.gpus)  # RX 9070 XT, gfx1201
    return fx


AMD_KEY = "D0F004A0025A1145C7807FCD0701EAC4D5E02107"


def plan(facts, m, r=None, **kw):
    # The new stream's key is unconfirmed (#42): these plans trust it, as the user would by
    # --trust-unconfirmed-key; tests/test_key_trust.py checks the refusal without it.
    kw.setdefault("trust_key", AMD_KEY)
    req = planner.Request(action=Action.INSTALL, stack="rocm", user="alice", **kw)
    return planner.make_plan(facts, m, r or repos.load(), req)


def test_the_route_is_amds_and_the_key_is_pinned_with_two_sources():
    r = repos.load()
    stable = "https://stable.repo.amd.com/rocm/core/packages/"
    multi = "https://repo.amd.com/rocm/packages-multi-arch/"
    for version, host in (("7.14.0", multi), ("7.14.1", multi), ("10.0.0", stable), ("10.1.0", stable)):
        rel = r.therock_release(version)
        assert rel is not None and host in "\n".join(rel["list"]["lines"])
        assert "signed-by={keyring}" in rel["list"]["lines"][0] or "Signed-By: {keyring}" in rel["list"]["lines"]
        assert rel["key"]["fingerprint"] == AMD_KEY and rel["key"]["confirmed"] is False  # no AMD page (#42)
        assert rel["key"]["review"].startswith("FOR REVIEW (#42)")
        assert "ROCm/TheRock" in rel["key"]["source"] and rel["key"]["source"].count(" @ ") >= 2
        assert "rocm-docs" in rel["source"]
    assert _therock_installable(r) == set()  # an unconfirmed key is pinned only when the user repeats it
    assert _therock_installable(r, trust=AMD_KEY) == {"7.14.0", "7.14.1", "10.0.0", "10.1.0"}
    # 10.1.0's route is its own install page's: the packages are 10.1's, the driver docs 31.60.0's
    rel = r.therock_release("10.1.0")
    assert "200-install.rst @ f47eb2f8ba97787da0cfd5166d1afbf42956fd9d" in rel["source"]
    assert rel["packages"] == {"toolkit": "amdrocm10.1", "toolkit_gfx": "amdrocm10.1-{gfx}"}
    assert "docs-31.60.0" in rel["driver"]


def test_the_newest_release_for_the_rx9070xt_is_the_new_streams(facts, m):
    assert fitting_rocm(facts, m, newest=True).version == "10.1.0"
    assert fitting_rocm(facts, m, _therock_installable(repos.load(), "ubuntu", "24.04", AMD_KEY)).version == "10.1.0"
    assert fitting_rocm(facts, m).version == "7.2.4"  # the doctor's bare-box default is unchanged


def _therock_installable(r, os_id=None, version=None, trust=None):
    """The new stream's releases the planner may install (routes with a directory list)."""
    return set(routes.installable([x for x in r.rocm_routes() if x.distros is not None], os_id, version, trust))


def _step(p, step_id):
    [step] = [s for s in p.steps if s.id == step_id]
    return step


def test_install_auto_plans_the_newest_release_through_amds_apt_route(facts, m):
    p = plan(facts, m)
    assert p.target.version == "10.1.0" and p.target.driver is None
    assert [s.id for s in p.steps] == ["key", "source-0", "apt-update", "groups", "toolkit"]
    key = _step(p, "key")
    assert (key.url, key.fingerprint, key.path) == (
        "https://stable.repo.amd.com/rocm/gpg/packages.gpg", AMD_KEY, "/etc/apt/keyrings/amdrocm.gpg"
    )
    source = _step(p, "source-0")
    assert source.path == "/etc/apt/sources.list.d/amdrocm-stable.sources"
    assert "URIs: https://stable.repo.amd.com/rocm/core/packages/ubuntu2404/\n" in source.content
    assert "Signed-By: /etc/apt/keyrings/amdrocm.gpg\n" in source.content
    assert _step(p, "groups").groups == ("render", "video")
    assert _step(p, "toolkit").packages == ("amdrocm10.1-gfx1201",)  # the RX 9070 XT's; not the Raphael iGPU's
    assert not any(s.kind is Kind.APT_PURGE or "dkms" in " ".join(s.packages or ()) for s in p.steps)
    assert any(n.startswith("the amdgpu kernel driver is left as it is") and "docs-31.60.0" in n for n in p.notes)
    assert not [n for n in p.notes if "also supports this machine" in n]  # the newest release is the one planned


def test_10_0_stays_installable_by_version(facts, m):
    p = plan(facts, m, version="10.0")
    assert p.target.version == "10.0.0"
    assert _step(p, "toolkit").packages == ("amdrocm10.0-gfx1201",)
    assert "URIs: https://stable.repo.amd.com/rocm/core/packages/ubuntu2404/\n" in _step(p, "source-0").content
    assert any(n.startswith("the amdgpu kernel driver is left as it is") and "docs-31.50.0" in n for n in p.notes)


def test_7_14_by_version_writes_its_one_line_source(facts, m):
    p = plan(facts, m, version="7.14")
    assert p.target.version == "7.14.1"  # a series means its newest bundled patch release
    assert not [n for n in p.notes if "serves its newest patch release" in n]
    source = _step(p, "source-0")
    assert (source.path, source.content) == (
        "/etc/apt/sources.list.d/rocm.list",
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/amdrocm.gpg] "
        "https://repo.amd.com/rocm/packages-multi-arch/ubuntu2404 stable main\n",
    )
    assert _step(p, "key").url == "https://repo.amd.com/rocm/packages-multi-arch/gpg/rocm.gpg"
    assert _step(p, "toolkit").packages == ("amdrocm7.14-gfx1201",)


def test_7_14_0_by_version_says_the_repository_serves_7_14_1(facts, m):
    """7.14.0 and 7.14.1 share one repository and one set of package names: a plan for 7.14.0
    cannot make apt choose it, and says what apt installs instead."""
    p = plan(facts, m, version="7.14.0")
    assert p.target.version == "7.14.0" and _step(p, "toolkit").packages == ("amdrocm7.14-gfx1201",)
    assert [n for n in p.notes if "serves its newest patch release" in n] == [
        "AMD's repository for ROCm 7.14 serves its newest patch release under the same package names: apt installs "
        "ROCm 7.14.1 (or a newer patch), not 7.14.0"
    ]
    for version in ("10.0.0", "10.1.0"):  # their package names differ (amdrocm10.0 / amdrocm10.1): no such note
        assert not [n for n in plan(facts, m, version=version).notes if "serves its newest patch release" in n]


def test_7_2_4_stays_installable_by_version(facts, m):
    p = plan(facts, m, version="7.2.4")
    assert p.target.version == "7.2.4"
    assert _step(p, "toolkit").packages == ("rocm",) and _step(p, "driver").packages == ("amdgpu-dkms",)


def test_a_gpu_only_the_legacy_stream_supports_gets_a_legacy_release(m):
    mi50 = facts_mod.loads((Path(__file__).parent / "facts" / "rocm-auto-ubuntu2204-mi50.json").read_text())
    p = plan(mi50, m)
    assert m.rocm_release(p.target.version).stream is None
    assert "gfx906" not in m.rocm_release("10.0.0").gpus and "gfx906" in m.rocm_release(p.target.version).gpus


def test_a_switch_from_the_legacy_stream_purges_rocm_and_keeps_the_driver(m):
    legacy = collect(root=str(ROOTS / "ubuntu2404-rx9070xt-igpu-rocm"), user="alice")
    assert {"rocm-core", "amdgpu-dkms"} <= set(legacy.packages.installed)
    p = plan(legacy, m, version="10.0.0")
    purged = _step(p, "purge-legacy-rocm-packages").packages
    assert "rocm-core" in purged and not any(n.startswith(("amdgpu-dkms", "amdrocm")) for n in purged)
    autoremove = _step(p, "purge-legacy-rocm-autoremove")
    assert "!^amdgpu-dkms(-firmware)?$" in autoremove.allow
    removed = {s.path for s in p.steps if s.kind is Kind.REMOVE_FILE}
    assert "/etc/apt/preferences.d/rocm-pin-600" in removed and "/etc/apt/keyrings/rocm.gpg" not in removed
    assert not any(s.id == "driver" for s in p.steps)


def test_an_unpinned_key_is_refused_with_its_route(tmp_path, facts, m):
    """An admin's repos.json without the fingerprint: gpuenv says so instead of trusting the key."""
    doc = json.loads(Path(repos.default_path()).read_text())
    for rel in doc["amd_therock"]["releases"]:
        rel["key"]["fingerprint"] = None
    path = tmp_path / "repos.json"
    path.write_text(json.dumps(doc))
    r = repos.load(path)
    assert _therock_installable(r) == set()
    assert plan(facts, m, r).target.version == "7.2.4"
    with pytest.raises(PlanError) as err:
        plan(facts, m, r, version="10.0.0")
    text = str(err.value)
    assert "https://stable.repo.amd.com/rocm/core/packages/ubuntu2404/" in text and "fingerprint" in text
    assert "--version 7.2.4" in text


def test_an_os_amd_publishes_no_apt_directory_for_is_refused(m):
    fedora = facts_mod.loads((Path(__file__).parent / "facts" / "plan-fedora41-rx7900.json").read_text())
    with pytest.raises(PlanError, match="no directory for fedora"):
        plan(fedora, m, version="10.0.0")


def test_malformed_new_stream_data_is_refused(tmp_path):
    doc = json.loads(Path(repos.default_path()).read_text())
    for edit, why in (
        (lambda d: d["amd_therock"]["releases"][0]["key"].update(fingerprint="abc"), "fingerprint"),
        (lambda d: d["amd_therock"]["releases"][0]["key"].update(url="http://repo.amd.com/k.gpg"), "https"),
        (lambda d: d["amd_therock"]["releases"][0]["list"].update(lines=["deb https://x stable main"]), "keyring"),
    ):
        bad = copy.deepcopy(doc)
        edit(bad)
        path = tmp_path / f"{why}.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(PlanError, match=why):
            repos.load(path)


def test_the_cli_dry_run_shows_the_pinned_key_and_the_package(tmp_path):
    done = runner.invoke(
        app, ["install", "rocm", "--dry-run", "--user", "alice", "--root", str(RX9070XT), "--trust-unconfirmed-key", AMD_KEY]
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "install rocm 10.1.0" in done.stdout and AMD_KEY in done.stdout and "amdrocm10.1-gfx1201" in done.stdout


def test_facts_round_trip_keeps_the_choice(facts, m):
    again = facts_mod.loads(facts.to_json())
    assert fitting_rocm(again, m, newest=True).version == "10.1.0"


def test_the_rocm_purge_rules_take_the_new_streams_packages_and_nothing_else():
    rules = repos.load().purge["rocm"]
    for name in ("amdrocm", "amdrocm-core", "amdrocm-core7.14", "amdrocm7.14-gfx1201", "amdrocm-runtime10.0",
                 "amdrocm-core-dev10.0-gfx1201", "amdrocm-fft-host8.2", "amdrocm-sysdeps7.14"):  # fmt: skip
        assert rules.matches(name), name
    for name in ("amdrocmx", "xamdrocm-core7.14", "amdrocm-core7.14;rm", "amdrocm_core", "amdrocm-Core"):
        assert not rules.matches(name), name


def test_a_switch_to_cuda_purges_the_therock_install(m):
    facts = collect(root=str(ROOTS / "ubuntu2404-rx9070xt-rocm714-therock"), user="alice")
    purged = purge.purge_packages(facts, repos.load(), "rocm")
    assert {"amdrocm-core7.14", "amdrocm7.14-gfx1201", "amdrocm-runtime7.14", "amdrocm-sysdeps7.14"} <= set(purged)
    assert "amdgpu-dkms" in purged and "python3.12" not in purged


def test_the_kernel_notes_speak_of_a_dkms_driver_only_where_the_plan_builds_one(facts):
    """kernel.headers-missing and kernel.secure-boot are noted in a plan: a legacy plan installs
    amdgpu-dkms, a new-stream plan leaves the driver as it is and needs neither."""
    from gpuenv.standins.record import replace

    m = load_matrices()
    bare = replace(facts, kernel=replace(facts.kernel, secure_boot=True, headers_installed=False))
    legacy = plan(bare, m, version="7.2.4")
    assert "driver" in [s.id for s in legacy.steps]
    assert (
        "kernel.headers-missing: No kernel headers for the running kernel 6.8.0-51-generic. /lib/modules/"
        "6.8.0-51-generic/build is missing; the ROCm 7.2.4 install (explicit target) builds the amdgpu DKMS driver, "
        "which cannot build without it. gpuenv's install plan installs them first (linux-headers-6.8.0-51-generic)."
        in legacy.notes
    )
    assert (
        "kernel.secure-boot: Secure Boot is on: DKMS modules must be signed with an enrolled key. DKMS GPU driver: "
        "the amdgpu driver the ROCm 7.2.4 install (explicit target) builds. A kernel or driver update that rebuilds "
        "it unsigned stops it loading." in legacy.notes
    )
    for new in (plan(bare, m), plan(bare, m, version="7.14.0")):
        assert new.target.driver is None and "driver" not in [s.id for s in new.steps]
        assert not [n for n in new.notes if n.startswith(("kernel.headers-missing", "kernel.secure-boot"))], new.notes
        assert any(n.startswith("the amdgpu kernel driver is left as it is") for n in new.notes)


# -- install auto says why a newer release is not the one planned --


def test_no_newer_release_note_where_the_newest_release_is_the_one_planned(m):
    mi50 = facts_mod.loads((Path(__file__).parent / "facts" / "rocm-auto-ubuntu2204-mi50.json").read_text())
    p = plan(mi50, m)  # gfx906: only the legacy stream lists it, nothing newer fits
    assert not any("is newer and also supports this machine" in n for n in p.notes)


def _edited(tmp_path, edit):
    doc = json.loads(Path(repos.default_path()).read_text())
    edit(doc)
    path = tmp_path / "repos.json"
    path.write_text(json.dumps(doc))
    return repos.load(path)


def test_the_note_names_the_reason_the_newer_release_is_not_planned(tmp_path, facts, m):
    """An admin's repos.json without 10.1.0's route: install auto plans 10.0.0 and says why 10.1.0,
    newer and listing this machine, is not the one planned; with the keys unpinned too, the planned
    release is the legacy 7.2.4 and the note still names the newest."""

    def without_1010(doc):
        doc["amd_therock"]["releases"] = [r for r in doc["amd_therock"]["releases"] if r["rocm"] != "10.1.0"]

    p = plan(facts, m, _edited(tmp_path, without_1010))
    assert p.target.version == "10.0.0"
    assert [n for n in p.notes if "10.1.0" in n] == [
        "ROCm 10.1.0 (the new release stream) is newer and also supports this machine; it is not planned because "
        "gpuenv has no repository data for it; ROCm 10.0.0 is the newest release gpuenv can install here"
    ]
    with pytest.raises(PlanError, match="10.1.0"):
        plan(facts, m, _edited(tmp_path, without_1010), version="10.1.0")

    def unpinned(doc):
        for rel in doc["amd_therock"]["releases"]:
            rel["key"]["fingerprint"] = None

    (tmp_path / "unpinned").mkdir()  # repos.load keeps what it read by path: a file of its own
    p = plan(facts, m, _edited(tmp_path / "unpinned", unpinned))
    assert p.target.version == "7.2.4"
    assert [n for n in p.notes if "is newer and also supports this machine" in n] == [
        "ROCm 10.1.0 (the new release stream) is newer and also supports this machine; it is not planned because "
        "its repository key has no verified fingerprint; ROCm 7.2.4 is the newest release gpuenv can install here"
    ]
