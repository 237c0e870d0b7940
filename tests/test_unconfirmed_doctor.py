"""Where a value no AMD page confirms decides a doctor finding, the finding says so (#42): ROCm
10.1.0's driver list (read from its install page only) in rocm.driver-mismatch, and the gfx target
the matrices give a GPU by its PCI id where no AMD source confirms it, in amd.gpu-unsupported. And the
corrected 10.0.0 list (31.50 back to 30.10) no longer calls a 30.30 driver a mismatch."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from gpuenv.probe import collect
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose
from gpuenv.standins.record import replace
from tests.probe_helpers import ROOTS

THEROCK_ROOT = ROOTS / "ubuntu2404-rx9070xt-rocm714-therock"  # amdgpu-dkms of the 30.30 line


@pytest.fixture(scope="module")
def m():
    return load()


def as_release(facts, version: str):
    toolkit = replace(facts.toolkits.rocm[0], version=version, path=f"/opt/rocm/core-{version.rsplit('.', 1)[0]}")
    return replace(facts, toolkits=replace(facts.toolkits, rocm=(toolkit,)))


def findings(facts, m, code):
    return [f for f in diagnose(facts, m, Target()).findings if f.code == code]


def test_a_driver_list_amd_does_not_confirm_says_so(m):
    facts = as_release(collect(root=str(THEROCK_ROOT), user="alice"), "10.1.0")
    assert not m.rocm_release("10.1.0").confirmed
    [f] = findings(facts, m, "rocm.driver-mismatch")
    assert "amdgpu 31.60.x" in f.detail
    assert "ROCm 10.1.0's list of compatible amdgpu drivers is not confirmed by AMD" in f.detail


def test_10_0_accepts_the_drivers_amds_table_lists(m):
    assert m.rocm_release("10.0.0").amdgpu_driver_compat == (
        "31.50.x", "31.40.x", "31.30.x", "31.20.x", "31.10.x", "30.30.x", "30.20.x", "30.10.x",
    )  # fmt: skip
    facts = as_release(collect(root=str(THEROCK_ROOT), user="alice"), "10.0.0")
    assert findings(facts, m, "rocm.driver-mismatch") == []


def test_a_confirmed_release_says_nothing_of_confirmation(m):
    release = m.rocm_release("7.2.4")
    assert release.confirmed and release.unconfirmed("anything") == ""


def test_a_gfx_target_known_only_unconfirmed_says_so(m):
    # The R9 290X (1002:67b0): LLVM says gfx702, the KFD 70001 (gfx701), which the matrices use,
    # unconfirmed. No driver reports a target here, so the matrices' decides amd.gpu-unsupported.
    known = m.amd_gpu("1002:67b0")
    assert known.gfx_target == "gfx701" and not known.confirmed
    facts = collect(root=str(THEROCK_ROOT), user="alice")
    gpu = replace(facts.gpus[0], pci_id="1002:67b0", gfx_target=None, name="Radeon R9 290X")
    facts = replace(facts, gpus=(gpu,))
    [f] = [f for f in diagnose(facts, m, Target.parse("rocm@7.2.4")).findings if f.code == "amd.gpu-unsupported"]
    assert "The gfx target of 1002:67b0 -> gfx701 (from its PCI id) is not confirmed by AMD." in f.detail
