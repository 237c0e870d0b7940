"""Values the third independent audit of 2026-12 (matrices/sources/audit-2026-12-third.md, by someone who wrote
neither the bundle nor the earlier audits) found wrong, each as the vendor source it names gives it: a rebuild
that loses one fails here."""

from __future__ import annotations

import json
from pathlib import Path

MATRICES = Path(__file__).resolve().parents[1] / "matrices"


def test_every_branch_any_edition_of_nvidias_data_center_table_lists_carries_its_cuda_series():
    # NVIDIA's 'Supported Drivers and CUDA Toolkit Versions': the edition listing R535, R570 and R580 gives
    # R570 'CUDA 12.0+ ... supports CUDA 12.x (through CUDA minor version compatibility)', word for word what it
    # gives R535, whose max_cuda is '12'; the 615 and 620 editions give R535 'CUDA 12' and R580, R595, R610,
    # R620 'CUDA 13'. R570 had kept the Table 3 minor '12.8', which says a 12.9 build would not run on it.
    branches = {b["branch"]: b for b in json.loads((MATRICES / "cuda.json").read_text())["driver_branches"]}
    table = {"R535": "12", "R570": "12", "R580": "13", "R595": "13", "R610": "13", "R620": "13"}
    assert {b: branches[b]["max_cuda"] for b in table} == table
    r570 = branches["R570"]
    assert "R535, R570 and R580" in r570["source"]
    # the Table 3 derivation stays as a note, not as the value
    assert "newest toolkit whose Table 3 minimum falls in this branch: 12.8" in r570["notes"]
