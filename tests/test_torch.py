"""`gpuenv torch`: the wheel a machine needs, from facts files under tests/facts/torch-*.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv.exitcodes import Exit
from gpuenv.facts import loads
from gpuenv.resolve.torchpick import PickError, pick
from gpuenv.resolve.wheelfit import cuda_covers
from tests.cli_runner import CliRunner, app
from tests.schemas import validate

FACTS = Path(__file__).resolve().parent / "facts"
runner = CliRunner()


@pytest.fixture(scope="module")
def m() -> M.Matrices:
    return M.parse_dir(M.bundled_dir(), "bundled")


def facts(name: str):
    return loads((FACTS / f"torch-{name}.json").read_text())


@pytest.mark.parametrize("path", sorted(FACTS.glob("torch-*.json")), ids=lambda p: p.stem)
def test_fixtures_are_valid_facts(path):
    validate(json.loads(path.read_text()), "facts")


def test_rtx5090_needs_cu128_for_270_and_nothing_in_26_fits(m):
    f = facts("rtx5090-570")
    c = pick(f, m, "2.7.0")
    assert (c.torch, c.variant, c.exit) == ("2.7.0", "cu128", Exit.OK)
    assert c.index_url == "https://download.pytorch.org/whl/cu128"
    assert c.pip == "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128"
    assert c.uv == "uv pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128"
    assert any("sm_120" in r for r in c.reasons)
    for version in ("2.6", "2.6.0", "2.5.1", "2.4.0"):
        none = pick(f, m, version)
        assert none.variant is None and none.exit == Exit.PROBLEMS
        assert any("no sm_120 code" in r for r in none.reasons)


def test_rtx5090_without_version_takes_the_newest_release_its_driver_allows(m):
    c = pick(facts("rtx5090-570"), m)
    assert c.variant is not None and c.variant.startswith("cu12")  # driver 570 is below CUDA 13's 580 floor
    newer = [v for v in m.torch_versions() if M.vkey(v) > M.vkey(c.torch)]
    for version in newer:  # no newer release has a wheel this machine can use
        assert pick(facts("rtx5090-570"), m, version).variant is None


def test_gtx1080ti_with_535_takes_cu118_which_it_runs_natively_never_cu128(m):
    c = pick(facts("gtx1080ti-535"), m, "2.7.0")
    # 535 is at or above CUDA 11.8's minimum (520.61.05) but below 12.6's (560.28.03): cu118 runs
    # natively, cu126 only through minor-version compatibility, so cu118 is preferred.
    assert c.variant == "cu118" and c.alternatives == ("cu126",)
    assert "cu128" not in c.alternatives
    assert any(r.startswith("rule: a CUDA version driver 535.183.01 runs natively") for r in c.reasons)


def test_rx9070xt_needs_a_rocm_wheel_with_gfx1201(m):
    f = facts("rx9070xt")
    c = pick(f, m, "2.7.0")
    assert c.variant in ("rocm6.3", "rocm6.2.4")
    chosen = next(v for v in m.torch_variants("2.7.0") if v.variant == c.variant)
    assert "gfx1201" in chosen.archs
    assert pick(f, m, "2.6").variant is None
    newest = pick(f, m)
    assert M.vkey(newest.torch) >= (2, 7) and newest.variant.startswith("rocm")
    assert any("system ROCm 7.2.4" in r for r in c.reasons)


def test_driver_470_only_gets_what_minor_version_compatibility_allows(m):
    f = facts("rtx3090-470")
    c = pick(f, m, "2.7.0")
    assert c.variant == "cu118" and c.alternatives == ()
    for version in ("2.8.0", "2.13.0"):  # CUDA 12+ only: 470 is below 525.60.13
        none = pick(f, m, version)
        assert none.variant is None and none.exit == Exit.PROBLEMS
        assert any("minor-version compatibility" in r and "470.256.02" in r for r in none.reasons)
    assert pick(f, m).torch == "2.7.1"  # the last release with a CUDA 11.8 wheel


def test_both_vendors_need_vendor(m):
    f = facts("mixed")
    c = pick(f, m)
    assert c.variant is None and c.exit == Exit.USAGE and "--vendor" in c.reasons[0]
    assert pick(f, m, "2.7.0", vendor="nvidia").variant.startswith("cu")
    assert pick(f, m, "2.7.0", vendor="amd").variant.startswith("rocm")


def test_cpu_only_gets_the_cpu_wheel(m):
    c = pick(facts("cpu-only"), m, "2.7.0")
    assert (c.variant, c.index_url) == ("cpu", "https://download.pytorch.org/whl/cpu")


def test_no_driver_is_judged_by_architecture_from_the_pci_id(m):
    c = pick(facts("rtx4090-nodriver"), m, "2.7.0")
    assert c.gpus[0].arch == "sm_89" and c.gpus[0].via == "matrices"
    assert c.variant == "cu126"  # 2.7.0 cu128 is unconfirmed (its PTX entry), cu126 is not (#42)
    assert any("install an NVIDIA driver >= 560.28" in r for r in c.reasons)


def test_gfx_in_no_wheel_gets_no_wheel(m):
    c = pick(facts("rx6700xt"), m)
    assert c.variant is None and c.exit == Exit.PROBLEMS
    assert c.gpus[0].arch == "gfx1031"


def test_integrated_gpu_is_set_aside_beside_a_discrete_one(m):
    c = pick(facts("rx7900xtx-igpu"), m, "2.7.0")
    assert c.variant in ("rocm6.3", "rocm6.2.4")
    assert [g.arch for g in c.gpus] == ["gfx1100"]
    assert any("integrated" in r and "gfx1036" in r for r in c.reasons)


def test_bad_version_or_vendor(m):
    with pytest.raises(PickError, match="not a bundled torch release"):
        pick(facts("cpu-only"), m, "9.9")
    with pytest.raises(PickError):
        pick(facts("cpu-only"), m, vendor="intel")


def test_binary_compatibility_rules(m):
    cu126 = next(v for v in m.torch_variants("2.7.0") if v.variant == "cu126")
    assert cuda_covers(cu126, "sm_61") == "sm_60"  # same major, higher minor
    assert cuda_covers(cu126, "sm_89") == "sm_86"
    assert cuda_covers(cu126, "sm_120") is None  # no cubin across majors, no PTX in this wheel
    cu130 = next(v for v in m.torch_variants("2.13.0") if v.variant == "cu130")
    assert cuda_covers(cu130, "sm_121") in ("sm_120", "compute_120")


@pytest.mark.parametrize(
    "cc", ["5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]
)
def test_any_pick_covers_the_gpu(m, cc):
    doc = json.loads((FACTS / "torch-rtx5090-570.json").read_text())
    doc["gpus"][0]["compute_capability"] = cc
    doc["nvidia"]["driver_version"] = "595.71.05"
    f = loads(json.dumps(doc))
    for version in m.torch_versions():
        c = pick(f, m, version)
        if c.variant is not None:
            variant = next(v for v in m.torch_variants(version) if v.variant == c.variant)
            assert cuda_covers(variant, "sm_" + cc.replace(".", "")), (version, cc, c.variant)
        else:
            for v in m.torch_variants(version):
                if v.stack == "cuda":
                    assert cuda_covers(v, "sm_" + cc.replace(".", "")) is None, (version, cc, v.variant)


# -- the command -------------------------------------------------------------------------------


def test_json_output_and_exit_codes():
    result = runner.invoke(
        app, ["torch", "--facts", str(FACTS / "torch-rtx5090-570.json"), "--version", "2.7.0", "--json"]
    )
    assert result.exit_code == 0
    out = json.loads(result.output)
    assert out["torch"] == "2.7.0" and out["variant"] == "cu128"
    assert out["index_url"] == "https://download.pytorch.org/whl/cu128"
    assert out["pip"].startswith("pip install torch==2.7.0") and out["uv"].startswith("uv pip install")
    assert out["reasons"]
    result = runner.invoke(
        app, ["torch", "--facts", str(FACTS / "torch-rtx5090-570.json"), "--version", "2.6", "--json"]
    )
    assert result.exit_code == Exit.PROBLEMS
    assert json.loads(result.output)["variant"] is None
    result = runner.invoke(app, ["torch", "--facts", str(FACTS / "torch-mixed.json")])
    assert result.exit_code == Exit.USAGE and "--vendor" in result.output


def test_human_output():
    result = runner.invoke(
        app, ["torch", "--facts", str(FACTS / "torch-gtx1080ti-535.json"), "--version", "2.7.0"]
    )
    assert result.exit_code == 0
    assert "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu118" in result.output
    assert "Why:" in result.output and "sm_61" in result.output


def test_bad_input_is_a_clear_usage_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "gpuenv.facts/1", "host": {}}')
    for args, needle in (
        (["--facts", str(bad)], "host.arch"),
        (["--facts", str(tmp_path / "missing.json")], "No such file"),
        (["--facts", str(bad), "--root", str(tmp_path)], "cannot be used together"),
        (["--facts", str(FACTS / "torch-cpu-only.json"), "--vendor", "intel"], "--vendor"),
        (["--facts", str(FACTS / "torch-cpu-only.json"), "--version", "1.0"], "not a bundled torch release"),
    ):
        result = runner.invoke(app, ["torch", *args])
        assert result.exit_code == Exit.USAGE, args
        assert needle in result.output, (args, result.output)


def test_python_version_must_have_a_wheel(m):
    doc = json.loads((FACTS / "torch-rtx5090-570.json").read_text())
    doc["python"] = {"version": "3.8.18"}
    f = loads(json.dumps(doc))
    c = pick(f, m, "2.7.0")
    assert c.variant is None and any("no wheel for Python 3.8" in r for r in c.reasons)
    assert pick(f, m, "2.4.0").variant is None  # 2.4 has Python 3.8 wheels but no sm_120 code
    doc["python"] = {"version": "3.12.3"}
    assert pick(loads(json.dumps(doc)), m, "2.7.0").variant == "cu128"


def test_root_reads_a_sysroot(tmp_path):
    # An empty tree: no PCI devices, so the CPU wheel; the probe reads nothing outside the root.
    result = runner.invoke(app, ["torch", "--root", str(tmp_path), "--version", "2.7.0", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["variant"] == "cpu"
    result = runner.invoke(app, ["torch", "--root", str(tmp_path / "absent")])
    assert result.exit_code == Exit.USAGE


# -- real-world reports: old GPUs, effective support, driver-native CUDA, unofficial routes -------


def edited(fixture: str, **gpu) -> object:
    """A facts fixture with its first GPU (and the NVIDIA driver, via driver=...) changed."""
    doc = json.loads((FACTS / f"torch-{fixture}.json").read_text())
    driver = gpu.pop("driver", None)
    doc["gpus"][0].update(gpu)
    if driver is not None:
        doc["nvidia"]["driver_version"] = driver
    return loads(json.dumps(doc))


def gtx780():
    doc = json.loads((FACTS / "torch-rtx3090-470.json").read_text())
    doc["gpus"][0].update(pci_id="10de:1004", name="NVIDIA GeForce GTX 780", compute_capability="3.5")
    return loads(json.dumps(doc))


def test_gtx780_kepler_gets_no_wheel_and_is_told_why(m):
    c = pick(gtx780(), m)
    assert c.variant is None and c.exit == Exit.PROBLEMS
    assert any(r.startswith(f"no official CUDA wheel of torch {m.torch_versions()[0]} .. ") for r in c.reasons)
    assert any("no bundled release has a working sm_35 wheel" in r and "2aac90bd" in r for r in c.reasons)


def test_gtx780_without_compute_capability_from_the_driver_is_known_by_pci_id(m):
    doc = json.loads((FACTS / "torch-rtx4090-nodriver.json").read_text())
    doc["gpus"][0]["pci_id"] = "10de:1004"
    doc["gpus"][0].pop("name", None)
    c = pick(loads(json.dumps(doc)), m)
    assert c.gpus[0].arch == "sm_35" and c.gpus[0].via == "matrices"  # "too old", not "unknown"
    assert c.variant is None and not any("unknown" in r for r in c.reasons)


def test_tesla_k80_sm37_on_r470_gets_the_last_cuda_11_wheel(m):
    c = pick(edited("rtx3090-470", pci_id="10de:102d", name="NVIDIA Tesla K80", compute_capability="3.7"), m)
    assert (c.torch, c.variant) == ("2.7.1", "cu118")


def test_fermi_gets_no_wheel(m):
    c = pick(edited("rtx3090-470", pci_id="10de:1080", name="NVIDIA GeForce GTX 580", compute_capability="2.0"), m)
    assert c.variant is None and c.exit == Exit.PROBLEMS


def test_old_release_picks_the_cuda_its_driver_runs_natively(m):
    c = pick(facts("rtx3090-470"), m, "1.12")
    # cu113 (>= 465.19.01) runs natively on 470; cu116 (510.39.01) only through 11.x compatibility.
    assert (c.torch, c.variant) == ("1.12.1", "cu113") and "cu116" in c.alternatives
    assert c.index_url == "https://download.pytorch.org/whl/cu113"


def test_release_without_stated_python_versions_is_not_refused_for_python(m):
    doc = json.loads((FACTS / "torch-rtx3090-470.json").read_text())
    doc["python"] = {"version": "3.8.10"}
    c = pick(loads(json.dumps(doc)), m, "1.9")
    assert c.variant == "cu111"
    assert any("Python versions of torch 1.9.1 are not stated" in r for r in c.reasons)
    assert any("pip -f https://download.pytorch.org/whl/torch_stable.html" in r for r in c.reasons)


def test_mi50_is_not_sent_to_a_rocm7_wheel(m):
    mi50 = edited("rx6700xt", pci_id="1002:66a1")
    c = pick(mi50, m)
    assert (c.torch, c.variant) == ("2.9.1", "rocm6.3") and c.exit == Exit.OK
    assert c.index_url == "https://download.pytorch.org/whl/rocm6.3"
    assert any("bundled rocBLAS has no gfx906 kernels" in r for r in c.reasons)
    for version in ("2.10", "2.11", "2.12", "2.13"):
        none = pick(mi50, m, version)
        assert none.variant is None and none.exit == Exit.PROBLEMS, version
        assert any("last official wheel that ran on gfx906: torch 2.9.1 rocm6.3" in r for r in none.reasons)
    assert pick(mi50, m, "2.9.1").variant == "rocm6.3"  # rocm6.4 of 2.9 lists gfx906 without kernels


def test_radeon_vii_and_vega_are_not_sent_to_a_wheel_without_kernels(m):
    for pci in ("1002:66af", "1002:687f"):  # Radeon VII (gfx906), RX Vega 56/64 (gfx900)
        c = pick(edited("rx6700xt", pci_id=pci), m)
        chosen = next(v for v in m.torch_variants(c.torch) if v.variant == c.variant)
        assert c.gpus[0].arch in chosen.usable_archs, pci
        assert chosen.variant not in ("rocm6.4", "rocm7.0", "rocm7.1", "rocm7.2"), pci


def test_driver_580_gets_cu130_not_cu132(m):
    c = pick(edited("rtx5090-570", driver="580.65.06"), m)
    assert (c.torch, c.variant) == (m.torch_versions()[-1], "cu130") and c.alternatives[0] == "cu132 (unconfirmed)"
    assert any(r.startswith("rule: a CUDA version driver 580.65.06 runs natively is preferred: cu130 over cu132") for r in c.reasons)


def test_a_driver_that_runs_both_natively_gets_the_newest(m):
    c = pick(edited("rtx5090-570", driver="595.71.05"), m)
    assert (c.torch, c.variant) == (m.torch_versions()[-1], "cu132")
    assert any(r == "rule: the newest CUDA version that fits: cu132" for r in c.reasons)


def test_minor_version_compatibility_when_nothing_runs_natively(m):
    c = pick(facts("gtx1080ti-535"), m, "2.13")
    assert c.variant == "cu126"  # 535 < 560.28.03 (12.6) but >= 525.60.13; cu13x needs >= 580
    assert any(r.startswith("rule: no variant of torch 2.13.0 runs natively on driver 535.183.01") for r in c.reasons)


def test_new_blackwell_capabilities_are_covered_by_same_major_cubins(m):
    for pci, cc in (("10de:3182", "10.3"), ("10de:2e12", "12.1")):
        doc = json.loads((FACTS / "torch-rtx4090-nodriver.json").read_text())
        doc["gpus"][0]["pci_id"] = pci
        doc["gpus"][0].pop("name", None)
        c = pick(loads(json.dumps(doc)), m, "2.13")
        assert c.gpus[0].arch == "sm_" + cc.replace(".", "") and c.variant in ("cu130", "cu132"), pci


def test_gfx1031_gets_no_official_wheel_but_the_unofficial_override_route(m):
    c = pick(facts("rx6700xt"), m)
    assert c.variant is None and c.exit == Exit.PROBLEMS
    u = c.unofficial
    assert (u.gfx, u.env, u.runs_as) == ("gfx1031", "HSA_OVERRIDE_GFX_VERSION=10.3.0", "gfx1030")
    chosen = next(v for v in m.torch_variants(u.torch) if v.variant == u.variant)
    assert "gfx1030" in chosen.usable_archs and u.torch == m.torch_versions()[-1]
    assert "rocBLAS#1339" in u.source and u.risk
    out = c.to_dict()["unofficial"]
    assert out["official"] is False and out["env"] == "HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert out["pip"] == f"pip install torch=={u.torch} --index-url {u.index_url}"
    assert any(r.startswith("unofficial route (not an official fit") for r in c.reasons)


def test_gfx1103_override_route_names_its_risk(m):
    doc = json.loads((FACTS / "torch-rx6700xt.json").read_text())
    doc["gpus"][0]["pci_id"] = "1002:15bf"  # Phoenix1 iGPU (Radeon 780M), alone in the machine
    c = pick(loads(json.dumps(doc)), m, "2.12")
    assert c.variant is None and c.exit == Exit.PROBLEMS
    assert (c.unofficial.env, c.unofficial.runs_as) == ("HSA_OVERRIDE_GFX_VERSION=11.0.0", "gfx1100")
    assert "page faults" in c.unofficial.risk and c.unofficial.torch == "2.12.1"
    assert pick(loads(json.dumps(doc)), m, "2.13").variant in ("rocm7.1", "rocm7.2")  # gfx1103 listed in 2.13


def test_unofficial_route_in_the_command_output():
    result = runner.invoke(app, ["torch", "--facts", str(FACTS / "torch-rx6700xt.json")])
    assert result.exit_code == Exit.PROBLEMS
    assert "No official PyTorch wheel fits this machine." in result.output
    assert "Unofficial route for gfx1031" in result.output and "export HSA_OVERRIDE_GFX_VERSION=10.3.0" in result.output
    result = runner.invoke(app, ["torch", "--facts", str(FACTS / "torch-rx6700xt.json"), "--json"])
    assert result.exit_code == Exit.PROBLEMS
    out = json.loads(result.stdout)
    assert out["variant"] is None and out["unofficial"]["runs_as"] == "gfx1030"


def test_render_lines_without_the_route_are_unchanged(m):
    from gpuenv.render.torch import lines

    text = [t for _, t in lines(pick(facts("rx9070xt"), m, "2.7.0"))]
    assert not any("Unofficial" in t for t in text)


# -- #29: arch lists checked against the release branch cuts ------------------------------------


def _variant(m: M.Matrices, torch: str, name: str) -> M.TorchVariant:
    return next(v for v in m.torch_variants(torch) if v.variant == name)


def test_212_rocm_lists_have_no_gfx1103_which_landed_after_the_branch_cut(m):
    for name in ("rocm7.1", "rocm7.2"):
        v = _variant(m, "2.12", name)
        assert "gfx1103" not in v.archs and "gfx1102" in v.archs and "gfx1151" in v.archs
        note = " ".join(v.notes)
        assert "pytorch/pytorch#179653" in note and "de717a4fd60df2a566ca7b794a6eacdfb8d9164d" in note
        assert not v.confirmed  # release/2.12's build script itself was not read


def test_213_rocm_lists_have_gfx1103_which_landed_before_its_cut_unconfirmed(m):
    for name in ("rocm7.1", "rocm7.2"):
        v = _variant(m, "2.13", name)
        assert "gfx1103" in v.archs and not v.confirmed
        assert "pytorch/pull/179788" in " ".join(v.notes)


def test_780m_pick_on_213_says_its_list_is_unconfirmed(tmp_path):
    doc = json.loads((FACTS / "torch-rx6700xt.json").read_text())
    doc["gpus"][0]["pci_id"] = "1002:15bf"  # Phoenix1 iGPU (Radeon 780M)
    path = tmp_path / "phoenix.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["torch", "--facts", str(path), "--version", "2.13", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["variant"] in ("rocm7.1", "rocm7.2") and out["confirmed"] is False
    result = runner.invoke(app, ["torch", "--facts", str(path), "--version", "2.13"])
    assert "is not confirmed by a primary source" in result.output


def test_29_rocm63_64_lists_are_unconfirmed_without_gfx950_gfx115x(m):
    for name in ("rocm6.3", "rocm6.4"):
        v = _variant(m, "2.9", name)
        assert not v.confirmed
        assert not {"gfx950", "gfx1150", "gfx1151"} & set(v.archs)
        assert "pytorch/pytorch#167299" in " ".join(v.notes)


def test_29_rocm_pick_says_unconfirmed_in_gpuenv_torch():
    args = ["torch", "--facts", str(FACTS / "torch-rx9070xt.json"), "--version", "2.9"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["variant"] in ("rocm6.3", "rocm6.4") and out["confirmed"] is False
    result = runner.invoke(app, args)
    assert f"torch 2.9.1 {out['variant']} is not confirmed by a primary source" in result.output


def test_cu129_of_29_to_211_is_unconfirmed_and_cites_public_sources(m):
    for torch in ("2.9", "2.10", "2.11"):
        v = _variant(m, torch, "cu129")
        assert not v.confirmed
        note = " ".join(v.notes)
        assert "pytorch/test-infra ea334aba3" in note and "code index" not in note


# -- #29: torch 2.14, released ----------------------------------------------------------------


def test_214_is_a_release_with_its_sources(m):
    variants = {v.variant: v for v in m.torch_variants("2.14")}
    assert m.torch_versions()[-1] == "2.14.0" and set(variants) == {
        "cpu", "cu126", "cu130", "cu132", "rocm7.2", "rocm7.14"
    }  # fmt: skip
    v = variants["cu130"]
    assert "googlecolab/colabtools#6093" in v.source and "pytorch/pytorch#194367" in v.source
    assert "2026" in (v.released or "")
    assert v.archs == ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120") and v.ptx == ("compute_120",)
    assert variants["cu126"].archs[0] == "sm_50"
    assert not v.confirmed  # the row is not: its ROCm lists were not read (as for 2.12 and 2.13)
    assert "3.14t" in v.python and "3.15" not in v.python  # 3.15 is experimental: left out


def test_214_rocm_lists_not_read_are_unconfirmed_and_714_ranks_below_a_bundled_runtime(m):
    variants = {v.variant: v for v in m.torch_variants("2.14")}
    assert not variants["rocm7.2"].confirmed and "not read" in " ".join(variants["rocm7.2"].notes)
    # The third audit: build.sh's 7.14 path (TheRock wheels) keeps the common list, and only the legacy
    # path (rocm7.2) adds gfx900/gfx906; unconfirmed (main's build.sh, not release/2.14's), and their ROCm
    # comes from pip, so rocm7.2 is preferred where both fit
    v714, v72 = variants["rocm7.14"], variants["rocm7.2"]
    assert v72.archs[:2] == ("gfx900", "gfx906") and v714.archs == v72.archs[2:] and not v714.confirmed
    assert "gfx1201" in v714.archs and "gfx1103" in v714.archs
    notes = " ".join(v714.notes)
    assert "pytorch/pytorch#191688" in notes and "pytorch/pytorch#190276" in notes and "027375bf" in notes
    assert v714.rocm_from_pip == "rocm[libraries,device-all]==7.14"
    assert v714.archs_without_kernels == ()  # no gfx900/gfx906 listed, so none listed without kernels


def test_newest_amd_pick_on_214_says_unconfirmed():
    result = runner.invoke(app, ["torch", "--facts", str(FACTS / "torch-rx9070xt.json"), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["torch"], out["variant"], out["confirmed"]) == ("2.14.0", "rocm7.2", False)
    result = runner.invoke(app, ["torch", "--facts", str(FACTS / "torch-rx9070xt.json")])
    assert "torch 2.14.0 rocm7.2 is not confirmed by a primary source" in result.output
