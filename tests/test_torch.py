"""`gpuenv torch`: the wheel a machine needs, from facts files under tests/facts/torch-*.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gpuenv import matrices as M
from gpuenv.commands import torch as torch_command
from gpuenv.exitcodes import Exit
from gpuenv.facts import loads
from gpuenv.torchpick import PickError, cuda_covers, pick
from tests.schemas import validate

FACTS = Path(__file__).resolve().parent / "facts"
runner = CliRunner()
app = typer.Typer()
torch_command.register(app)


@app.callback()
def _group() -> None:
    """Keep the app a command group."""


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


def test_gtx1080ti_with_535_takes_cu126_or_cu118_never_cu128(m):
    c = pick(facts("gtx1080ti-535"), m, "2.7.0")
    assert c.variant in ("cu126", "cu118")
    assert "cu128" not in c.alternatives
    assert set(c.alternatives) | {c.variant} == {"cu126", "cu118"}
    assert any("minor-version compatibility" in r for r in c.reasons) or c.variant == "cu118"


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
    assert c.variant == "cu128"
    assert any("install an NVIDIA driver >= 570.26" in r for r in c.reasons)


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
    assert "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu126" in result.output
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
