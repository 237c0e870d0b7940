"""rocm.driver-conflict (#26 4c): a Radeon Software / AMDGPU-PRO amdgpu-dkms where ROCm wants its
own kernel driver package, rock-dkms (ROCm before 4.5). Facts variants of the healthy ROCm box."""

from __future__ import annotations

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve.checks.rock import radeon_software_release
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import base

CODE = "rocm.driver-conflict"


@pytest.fixture(scope="module")
def m():
    return load()


def judge(doc, m, target=None):
    return diagnose(from_dict(doc), m, Target.parse(target))


def found(report):
    return [f for f in report.findings if f.code == CODE]


def old_box(packages: dict[str, str], rocm: str | None = None, unconfigured=()) -> dict:
    """The healthy ROCm box with its ROCm/amdgpu packages replaced by the given ones."""
    doc = base("doctor-healthy-rocm")
    pk = doc["packages"]
    pk["installed"] = {
        n: v for n, v in pk["installed"].items() if not n.startswith(("rocm", "amdgpu", "hip"))
    }
    pk["installed"].update(packages)
    pk["unconfigured"] = list(unconfigured)
    doc["toolkits"]["rocm"] = [{"version": rocm, "path": "/opt/rocm", "source": "package"}] if rocm else []
    doc["kernel"]["dkms"] = []
    doc["python"] = None
    return doc


@pytest.mark.parametrize(
    ("version", "release"),
    [("18.30-641594", "18.30"), ("19.50-967956", "19.50"), ("1:5.11.32.40502-1350682", None),
     ("1:6.16.6.30300400-2255209.24.04", None), ("garbage", None)],
)  # fmt: skip
def test_amdgpu_pro_numbering_names_its_release(version, release):
    assert radeon_software_release(version) == release


def test_amdgpu_pro_driver_before_installing_an_old_rocm_is_the_error(m):
    # the packages of ROCm/legacy-rocm-build#551: amdgpu-pro 18.30's amdgpu-dkms and ROCm 1.9's rock-dkms
    report = judge(old_box({"amdgpu-dkms": "18.30-641594", "rock-dkms": "1.9-211"}), m)
    [f] = found(report)
    assert f.severity is Severity.ERROR
    assert "amdgpu-dkms 18.30-641594 (Radeon Software / AMDGPU-PRO 18.30)" in f.title
    assert "rock-dkms is installed" in f.detail
    assert "sudo apt-get purge amdgpu-dkms" in f.fix and "rock-dkms" in f.fix
    assert f.refs and all(r.startswith("https://github.com/ROCm/") for r in f.refs)


def test_a_half_installed_rock_dkms_beside_the_pro_driver_fires_without_a_target(m):
    doc = old_box({"amdgpu-dkms": "19.50-967956", "rock-dkms": "3.1-44"}, unconfigured=["rock-dkms"])
    [f] = found(judge(doc, m))
    assert "19.50" in f.title and "rock-dkms is installed" in f.detail


def test_the_firmware_package_of_a_radeon_software_release_blocks_rocm_4_3(m):
    # ROCm/legacy-rocm-build#1543: amdgpu-dkms-firmware 1:5.11.5.26-1271047 against ROCm 4.3's
    doc = old_box({"amdgpu-dkms-firmware": "1:5.11.5.26-1271047"}, rocm="4.3.0")
    [f] = found(judge(doc, m))
    assert "amdgpu-dkms-firmware 1:5.11.5.26-1271047" in f.title
    assert "ROCm 4.3.0 is installed" in f.detail
    assert "never shipped amdgpu-dkms" in f.title


def test_rocm_4_5_and_later_own_amdgpu_dkms_so_nothing_conflicts(m):
    doc = old_box({"amdgpu-dkms": "1:5.11.32.40502-1350682"}, rocm="4.5.2")
    assert not found(judge(doc, m))
    assert not found(judge(base("doctor-healthy-rocm"), m))
    assert not found(judge(base("doctor-healthy-rocm"), m, "rocm@7.2.4"))


def test_no_rocm_in_sight_is_no_conflict(m):
    # the Radeon Software driver with no ROCm user space installed and none asked for (no AMD GPU left)
    doc = old_box({"amdgpu-dkms": "19.50-967956"})
    doc["gpus"] = []
    report = judge(doc, m)
    assert not found(report)


@pytest.mark.parametrize("target", ["rocm", "rocm@6.4.1"])
def test_a_pro_numbered_driver_under_a_later_rocm_is_a_warning_to_remove_it_first(m, target):
    [f] = found(judge(old_box({"amdgpu-dkms": "19.50-967956"}), m, target))
    assert f.severity is Severity.WARNING and "AMDGPU-PRO 19.50" in f.title
    assert f.detail.startswith("The target is ROCm ")
    assert "sudo apt autoremove amdgpu-dkms" in f.fix
    installed = old_box({"amdgpu-dkms": "19.50-967956"}, rocm="5.7.1")
    [f] = found(judge(installed, m))
    assert f.severity is Severity.WARNING and "ROCm 5.7.1 is installed" in f.detail
    # a later Radeon Software amdgpu-dkms (epoch numbering) is rocm.driver-mismatch's to judge
    assert not found(judge(old_box({"amdgpu-dkms": "1:5.11.5.26-1271047"}), m, target))


def test_unknown_packages_are_not_judged(m):
    doc = old_box({"amdgpu-dkms": "18.30-641594"}, rocm="3.5.0")
    doc["packages"] = None
    report = judge(doc, m)
    assert not found(report)
    assert "doctor.check-crashed" not in {f.code for f in report.findings}
