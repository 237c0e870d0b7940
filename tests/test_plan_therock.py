"""The planner and ROCm's new release stream (#29): AMD's documented apt route for 7.14/10.0 is in
repos.json, the key that signs it has no fingerprint any source gives, so gpuenv refuses to install
from it (saying so), `install auto` plans the newest release it can install and names the newer
one, and 7.2.4 stays installable by --version."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.matrices import load as load_matrices
from gpuenv.plan import planner, purge, repos
from gpuenv.plan.plan import Action, PlanError
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


def plan(facts, m, r=None, **kw):
    req = planner.Request(action=Action.INSTALL, stack="rocm", user="alice", **kw)
    return planner.make_plan(facts, m, r or repos.load(), req)


def test_the_route_is_amds_and_the_key_is_not_pinned():
    r = repos.load()
    for version, host in (("7.14.0", "https://repo.amd.com/rocm/packages-multi-arch/"), ("10.0.0", "https://stable.repo.amd.com/rocm/core/packages/")):
        rel = r.therock_release(version)
        assert rel is not None and host in "\n".join(rel["list"]["lines"])
        assert "signed-by={keyring}" in rel["list"]["lines"][0] or "Signed-By: {keyring}" in rel["list"]["lines"]
        assert rel["key"]["fingerprint"] is None and rel["key"]["confirmed"] is False
        assert "rocm-docs" in rel["source"]
    assert r.therock_installable() == set()


def test_the_newest_release_for_the_rx9070xt_is_the_new_streams(facts, m):
    assert fitting_rocm(facts, m, newest=True).version == "10.0.0"
    assert fitting_rocm(facts, m).version == "7.2.4"  # the doctor's bare-box default is unchanged


def test_install_auto_plans_the_newest_installable_and_names_the_newer(facts, m):
    p = plan(facts, m)
    assert p.target.version == "7.2.4"
    assert any("ROCm 10.0.0 (the new release stream)" in n and "fingerprint" in n for n in p.notes)


@pytest.mark.parametrize("asked, release, uri", [
    ("10.0.0", "10.0.0", "https://stable.repo.amd.com/rocm/core/packages/ubuntu2404/"),
    ("7.14", "7.14.0", "https://repo.amd.com/rocm/packages-multi-arch/ubuntu2404"),
])  # fmt: skip
def test_a_new_stream_release_is_refused_with_its_route(facts, m, asked, release, uri):
    with pytest.raises(PlanError) as err:
        plan(facts, m, version=asked)
    text = str(err.value)
    assert f"ROCm {release}" in text and uri in text and "fingerprint" in text and "--version 7.2.4" in text


def test_7_2_4_stays_installable_by_version(facts, m):
    assert plan(facts, m, version="7.2.4").target.version == "7.2.4"


def test_a_pinned_key_makes_the_release_the_auto_choice(tmp_path, facts, m):
    """With a fingerprint pinned (an admin's repos.json), install auto goes for the newest release,
    whichever stream; gpuenv then says it does not plan that stream's steps rather than guess them."""
    doc = json.loads(Path(repos.default_path()).read_text())
    pinned = copy.deepcopy(doc)
    for rel in pinned["amd_therock"]["releases"]:
        rel["key"]["fingerprint"] = "0" * 40
    path = tmp_path / "repos.json"
    path.write_text(json.dumps(pinned))
    r = repos.load(path)
    assert r.therock_installable() == {"7.14.0", "10.0.0"}
    with pytest.raises(PlanError, match="does not plan the new release stream"):
        plan(facts, m, r)


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


def test_the_cli_says_it_in_one_line_with_the_usage_exit(tmp_path):
    done = runner.invoke(app, ["install", "rocm", "--version", "10.0.0", "--dry-run", "--root", str(RX9070XT)])
    assert done.exit_code == 2
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1 and "no fingerprint" in lines[0] and "Traceback" not in done.stdout + done.stderr


def test_facts_round_trip_keeps_the_choice(facts, m):
    again = facts_mod.loads(facts.to_json())
    assert fitting_rocm(again, m, newest=True).version == "10.0.0"


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
