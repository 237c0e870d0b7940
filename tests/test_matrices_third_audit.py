"""Values the third audit of the bundled data (matrices/sources/audit-2026-12.md, 2026-12-07) corrected or
left marked, each as the source it names gives it: a rebuild that loses one fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

MATRICES = Path(__file__).resolve().parents[1] / "matrices"


@pytest.fixture(scope="module")
def docs():
    return {p.name: json.loads(p.read_text()) for p in MATRICES.glob("*.json")}


def test_nvidia_branch_lifecycle_follows_nvidias_table(docs):
    branches = {b["branch"]: b for b in docs["cuda.json"]["driver_branches"]}
    r570, r580 = branches["R570"], branches["R580"]
    assert (r570["designation"], r570["end_of_life"]) == ("Production Branch", "February 2026")
    assert "R535, R570 and R580" in r570["source"]
    # two editions of NVIDIA's page disagree on R580's end of life: the value stays, the entry says so
    assert r580["end_of_life"] == "June 2028" and any("'August 2028'" in n for n in r580["notes"])


def test_torch_214_rocm714_lacks_the_legacy_targets(docs):
    t214 = next(r for r in docs["torch.json"]["releases"] if r["minor"] == "2.14")
    v = {x["variant"]: x for x in t214["variants"]}
    assert {"gfx900", "gfx906"} <= set(v["rocm7.2"]["archs"])
    assert not {"gfx900", "gfx906"} & set(v["rocm7.14"]["archs"])
    assert set(v["rocm7.14"]["archs"]) == set(v["rocm7.2"]["archs"]) - {"gfx900", "gfx906"}
    assert v["rocm7.14"]["confirmed"] is False and "archs_without_kernels" not in v["rocm7.14"]


def test_the_new_streams_routes_and_key_trust(docs):
    rocm = {r["version"]: r for r in docs["rocm.json"]["releases"]}
    assert rocm["10.1.0"]["amdgpu_driver"] == "31.60.x" and rocm["10.1.0"]["confirmed"] is False
    routes = {r["rocm"]: r for r in docs["repos.json"]["amd_therock"]["releases"]}
    assert routes["7.14.0"]["confirmed"] is True
    assert "repo.amd.com/rocm/packages-multi-arch/{distro} stable main" in routes["7.14.0"]["list"]["lines"][0]
    for release in ("7.14.0", "7.14.1", "10.0.0", "10.1.0"):
        key = routes[release]["key"]
        assert key["fingerprint"] == "D0F004A0025A1145C7807FCD0701EAC4D5E02107" and key["confirmed"] is False
        assert key["review"].startswith("FOR REVIEW")


def test_rocm_100_torch_211_is_instinct_only(docs):
    rel = next(r for r in docs["rocm.json"]["releases"] if r["version"] == "10.0.0")
    assert rel["torch"] == ["2.13.0", "2.12.0", "2.11.0"] and rel["torch_instinct_only"] == ["2.11.0"]
    assert "prbasyal-amd/ROCm" in rel["source"] and "0a25ed32c2ec" in rel["source"]
    wheels = next(w for w in docs["torch.json"]["amd_wheels"] if w["rocm"] == "10.0.0")
    assert wheels["torch"] == ["2.13.0", "2.12.0"] and wheels["confirmed"] is False
