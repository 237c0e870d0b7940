"""Values the second audit of 2026-12 (matrices/sources/audit-2026-12-second.md, by someone who did not
write the bundle) found wrong, each as the vendor source it names gives it: a rebuild that loses one
fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

MATRICES = Path(__file__).resolve().parents[1] / "matrices"


@pytest.fixture(scope="module")
def cuda():
    return json.loads((MATRICES / "cuda.json").read_text())


def test_every_branch_nvidias_data_center_table_lists_carries_its_cuda_major(cuda):
    # NVIDIA's 'Supported Drivers and CUDA Toolkit Versions', 615 and 620 editions: 'Maximum CUDA Major
    # Version Supported Without Forward Compatibility Package' is CUDA 12 for R535 and CUDA 13 for R580,
    # R595, R610 (615 edition, a New Feature Branch) and R620. A minor there (R610 had the secondary
    # '13.3') understates what minor-version compatibility lets the branch run.
    branches = {b["branch"]: b for b in cuda["driver_branches"]}
    table = {"R535": "12", "R580": "13", "R595": "13", "R610": "13", "R620": "13"}
    assert {b: branches[b]["max_cuda"] for b in table} == table
    r610 = branches["R610"]
    assert (r610["designation"], r610["end_of_life"]) == ("New Feature Branch", "August 2026")
    # the secondary Table 3 reading is kept as a note, not as the value
    assert any("13.3" in n for n in r610["notes"])


@pytest.fixture(scope="module")
def amd():
    return {g["pci_id"]: g for g in json.loads((MATRICES / "amd_gpus.json").read_text())["gpus"]}


def test_both_radeon_pro_wx_2100_ids_are_polaris_12_gfx803(amd):
    # amdgpu's pciidlist: 0x6995 and 0x6997 CHIP_POLARIS12; the KFD reports Polaris 12 as 80003 (gfx803);
    # AMD's device table gives both GDT_GFX8_0_4. 6997 was left null because pci.ids has no line for it.
    for pci in ("1002:6995", "1002:6997"):
        g = amd[pci]
        assert (g["gfx_target"], g["chip"], g["kfd"], g["confirmed"]) == ("gfx803", "POLARIS12", "supported", True)
    assert "0x6997 CHIP_POLARIS12" in amd["1002:6997"]["gfx_source"]


def test_picasso_carries_the_revisions_the_pinned_amdgpu_ids_names(amd):
    # matrices/sources/amdgpu.ids (pinned @ 15cdcfe9e1c4): 41 lines for 15D8, 38 distinct revisions
    pinned = {}
    for line in (MATRICES / "sources" / "amdgpu.ids").read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) == 3 and parts[0].upper() == "15D8":
            pinned[parts[1]] = parts[2]
    assert len(pinned) == 38
    g = amd["1002:15d8"]
    assert g["gfx_target"] == "gfx902" and set(g["revisions"]) == set(pinned)
    assert any("38 revisions on 41 lines" in n for n in g["notes"])
