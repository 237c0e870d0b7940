"""torch.rocm-bundled (#26 4d): a ROCm torch build beside another ROCm release on the machine. PyTorch's
index wheels carry their ROCm user space (pytorch/builder manywheel/build_rocm.sh), so the machine's
release does not matter to them; for any other build that is said to be unknown."""

from __future__ import annotations

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve.checks.torch_rocm import bundled_rocm
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import base

CODE = "torch.rocm-bundled"


@pytest.fixture(scope="module")
def m():
    return load()


def box(torch_version: str, hip: str, rocm: str) -> dict:
    doc = base("doctor-healthy-rocm")
    doc["python"]["packages"]["torch"] = torch_version
    doc["python"]["torch"].update(version=torch_version, hip=hip)
    doc["toolkits"]["rocm"] = [{"version": rocm, "path": "/opt/rocm", "source": "package"}]
    return doc


def found(doc, m):
    report = diagnose(from_dict(doc), m, Target())
    return [f for f in report.findings if f.code == CODE], report


@pytest.mark.parametrize(
    ("version", "carried"),
    [("2.0.1+rocm5.4.2", "5.4.2"), ("2.11.0+rocm7.2", "7.2"), ("2.10.0.dev20250101+rocm7.0", "7.0"),
     ("2.9.1+rocm7.2.0.lw.git7e1940d4", None), ("2.1.0", None), ("2.1.0+cu121", None), (None, None),
     ("2.14.0+rocm7.14", None)],
)  # fmt: skip
def test_only_pytorch_index_wheels_are_known_to_carry_their_rocm(version, carried):
    assert bundled_rocm(version) == carried


def test_a_rocm_5_4_2_wheel_on_rocm_5_7_runs_its_own_runtime_and_says_so(m):
    [f], _ = found(box("2.0.1+rocm5.4.2", "5.4.22803-474e8620", "5.7.1"), m)
    assert f.severity is Severity.INFO
    assert "runs on its own ROCm 5.4, not the machine's ROCm 5.7.1" in f.title
    assert "does not matter to this build" in f.detail and "torch.rocm-mismatch" in f.detail
    assert len(f.refs) == 1 and f.refs[0].startswith("https://github.com/pytorch/pytorch/blob/")
    assert f.refs[0].endswith("/.ci/manywheel/build_rocm.sh")


def test_a_build_not_from_the_index_is_not_judged_fine(m):
    [f], _ = found(box("2.1.0", "5.4.22803-474e8620", "5.7.1"), m)
    assert "was not judged" in f.title and "cannot tell" in f.detail
    [f], _ = found(box("2.9.1+rocm7.2.0.lw.git7e1940d4", "7.2.53211", "6.4.3"), m)
    assert "was not judged" in f.title


def test_same_series_or_unknown_system_rocm_says_nothing(m):
    assert not found(box("2.11.0+rocm7.2", "7.2.53211", "7.2.4-70204"), m)[0]
    assert not found(base("doctor-healthy-rocm"), m)[0]
    doc = box("2.0.1+rocm5.4.2", "5.4.22803-474e8620", "5.7.1")
    doc["toolkits"]["rocm"] = []
    doc["packages"]["installed"] = {
        n: v for n, v in doc["packages"]["installed"].items() if not n.startswith("rocm")
    }
    assert not found(doc, m)[0]
