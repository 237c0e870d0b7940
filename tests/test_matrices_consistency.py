"""The bundled matrices hold together (#42): every GPU has a target or says why not, every ROCm
release's amdgpu driver list is a contiguous range of known driver lines (or names what it skips),
every torch variant lists its targets or says why not, and every ROCm release date is the one AMD's
release history prints. The checks live in matrices/tools/consistency.py, which `freshness` runs in
CI; here each runs on the shipped files, and on a broken copy to show it can fail."""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.matrices import load
from gpuenv.render.matrix import summary

MATRICES = Path(__file__).resolve().parents[1] / "matrices"
TOOLS = MATRICES / "tools"
NAMES = ("amd_gpus.json", "nvidia_gpus.json", "rocm.json", "torch.json")


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"matrices_tools_{name}", TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


C = _module("consistency")
D = _module("rocm_dates")


@pytest.fixture(scope="module")
def docs():
    return {name: json.loads((MATRICES / name).read_text()) for name in NAMES}


def _rel(docs, version):
    return next(r for r in docs["rocm.json"]["releases"] if r["version"] == version)


def test_the_shipped_bundle_is_consistent(docs):
    assert C.gpu_targets(docs["amd_gpus.json"], docs["nvidia_gpus.json"]) == []
    assert C.driver_ranges(docs["rocm.json"]) == []
    assert C.torch_archs(docs["torch.json"]) == []
    assert C.release_dates(docs["rocm.json"], D.PRINTED, D.iso, D.SOURCE) == []


def test_the_audited_values_hold(docs):
    # #42's wrong values, as AMD's and PyTorch's sources give them
    assert _rel(docs, "10.0.0")["amdgpu_driver_compat"] == [
        "31.50.x", "31.40.x", "31.30.x", "31.20.x", "31.10.x", "30.30.x", "30.20.x", "30.10.x",
    ]  # fmt: skip
    mi350p = next(g for g in docs["amd_gpus.json"]["gpus"] if g["pci_id"] == "1002:75a8")
    assert (mi350p["gfx_target"], mi350p["architecture"]) == ("gfx950", "CDNA4") and "gpus.yaml" in mi350p["gfx_source"]
    assert {v: _rel(docs, v)["release_date"] for v in ("7.14.0", "7.2.1", "7.2.3")} == {
        "7.14.0": "2026-07-15", "7.2.1": "2026-03-25", "7.2.3": "2026-05-04",
    }  # fmt: skip
    t214 = next(r for r in docs["torch.json"]["releases"] if r["minor"] == "2.14")
    v714 = next(v for v in t214["variants"] if v["variant"] == "rocm7.14")
    assert "gfx942" in v714["archs"] and "gfx1201" in v714["archs"] and v714["confirmed"] is False


def test_the_second_audits_values_hold(docs):
    # AMD's device table (GPUOpen-Tools/device_info DeviceInfo.cpp @ a44c00c0) for the gfx targets; NVIDIA's data
    # center table ('Maximum CUDA Major Version') for max_cuda; NVIDIA's SIGNATURES.md for the key's fingerprint
    amd = {g["pci_id"]: g for g in docs["amd_gpus.json"]["gpus"]}
    for pci, gfx in (("1002:13c0", "gfx1036"), ("1002:731e", "gfx1010")):
        assert (amd[pci]["gfx_target"], amd[pci]["confirmed"]) == (gfx, True), pci
        assert "device_info DeviceInfo.cpp @ a44c00c0" in amd[pci]["gfx_source"]
        assert not any("not established" in n or "left null" in n for n in amd[pci]["notes"]), pci
    cuda = json.loads((MATRICES / "cuda.json").read_text())
    branches = {b["branch"]: b["max_cuda"] for b in cuda["driver_branches"]}
    assert [branches[b] for b in ("R535", "R580", "R595", "R620")] == ["12", "13", "13", "13"]
    key = json.loads((MATRICES / "repos.json").read_text())["nvidia"]["key"]
    assert key["fingerprint"] == "EB693B3035CD5710E231E123A4B469963BF863CC" and key["confirmed"] is True
    assert key["source"].startswith("NVIDIA/cuda-repo-management SIGNATURES.md @ ee8303df")


def test_a_gpu_without_a_target_or_a_reason_is_found(docs):
    amd = copy.deepcopy(docs["amd_gpus.json"])
    entry = next(g for g in amd["gpus"] if g["gfx_target"] is None)
    entry["notes"] = []
    assert C.gpu_targets(amd, docs["nvidia_gpus.json"]) == [
        f"amd_gpus.json {entry['pci_id']}: no gfx target and no note saying why"
    ]
    nvidia = copy.deepcopy(docs["nvidia_gpus.json"])
    nvidia["gpus"][0]["compute_capability"] = None
    assert len(C.gpu_targets(docs["amd_gpus.json"], nvidia)) == 1


def test_a_driver_list_with_a_hole_is_found_unless_a_note_names_it(docs):
    rocm = copy.deepcopy(docs["rocm.json"])
    rel = next(r for r in rocm["releases"] if r["version"] == "10.0.0")
    rel["amdgpu_driver_compat"].remove("31.40.x")
    [problem] = C.driver_ranges(rocm)
    assert problem.startswith("rocm.json 10.0.0:") and "skips 31.40.x" in problem
    rel["notes"].append("amdgpu_driver_compat skips 31.40.x: a reason")
    assert C.driver_ranges(rocm) == []
    # 5.1.x's list skips 5.2.x, and says why (the support matrix read has no KFD 5.2 row)
    assert any("skips 5.2.x" in n for n in _rel(docs, "5.1.0")["notes"])


def test_a_variant_without_targets_or_a_reason_is_found(docs):
    torch = copy.deepcopy(docs["torch.json"])
    variant = next(v for r in torch["releases"] for v in r["variants"] if v["stack"] == "rocm")
    variant["archs"], variant["notes"] = [], []
    assert len(C.torch_archs(torch)) == 1


def test_a_date_not_from_amds_history_is_found(docs):
    rocm = copy.deepcopy(docs["rocm.json"])
    next(r for r in rocm["releases"] if r["version"] == "7.2.1")["release_date"] = "2026-03-24"
    assert C.release_dates(rocm, D.PRINTED, D.iso, D.SOURCE) == [
        "rocm.json 7.2.1: dated 2026-03-24, AMD's release history says March 25, 2026 (2026-03-25)"
    ]
    rocm["release_dates_source"] = "a blog"
    assert len(C.release_dates(rocm, D.PRINTED, D.iso, D.SOURCE)) == 2


def run_freshness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        # -B: -I ignores PYTHONDONTWRITEBYTECODE, and the tools' bytecode would land in the clone.
        [sys.executable, "-I", "-B", str(TOOLS / "freshness"), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_freshness_offline_prints_each_source_and_the_bundle_age():
    done = run_freshness("--offline", "--today", "2027-06-01")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    bundle = load().bundle
    assert lines[0] == f"matrices bundle {bundle.version} ({bundle.age_days('2027-06-01')} days old on 2027-06-01)"
    for source in ("ROCm release notes", "CUDA release notes", "NVIDIA driver table", "PyTorch wheel index",
                   "pci.ids", "amdgpu.ids"):  # fmt: skip
        assert any(line.strip().startswith(f"{source} ") and "newest known:" in line for line in lines), source
    assert "ROCm 10.1.0; its date: 2026-10-05" in done.stdout and "Version 2026.08.22" in done.stdout
    assert "not reached" not in done.stdout and lines[-1] == "consistency: 0 problem(s)"


def test_freshness_fails_on_an_inconsistent_copy(tmp_path):
    copy_dir = tmp_path / "matrices"
    shutil.copytree(MATRICES, copy_dir, ignore=shutil.ignore_patterns("__pycache__"))
    rocm = json.loads((copy_dir / "rocm.json").read_text())
    next(r for r in rocm["releases"] if r["version"] == "7.14.0")["release_date"] = "2026-07-16"
    (copy_dir / "rocm.json").write_text(json.dumps(rocm))
    done = run_freshness("--offline", "--dir", str(copy_dir))
    assert done.returncode == 1
    assert "inconsistent: rocm.json 7.14.0: dated 2026-07-16, AMD's release history says July 15, 2026" in done.stdout
    assert run_freshness("--offline", "--today", "June").returncode == 2


def test_matrix_show_dates_the_bundle_on_its_first_line():
    m = load()
    label, first = summary(m, today="2027-06-01")[0]
    assert label == "bundle" and first.startswith(f"{m.bundle.version} (dated {m.bundle.dated()}, ")
    assert f"{m.bundle.age_days('2027-06-01')} days old); newest known: ROCm 10.1.0 (2026-10-05)" in first
    assert "CUDA 13.5" in first and "PyTorch 2.14.0" in first
