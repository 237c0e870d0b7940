"""The doctor's human grouping of findings (the CLI itself: tests/test_cli.py)."""

from __future__ import annotations

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.render.report import grouped, target_line
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import variant


def test_grouping_puts_the_worst_area_first():
    doc, _, _ = variant("rocm.multiple-versions")  # amd: info
    doc["packages"]["unconfigured"] = ["rocm-core"]  # stacks: error
    doc["amd"]["driver_version"] = "6.12.12"  # platform: warning (loaded amdgpu is not the DKMS build)
    report = diagnose(from_dict(doc), load(), Target())
    areas = [a for a, _ in grouped(report.findings)]
    assert areas[:2] == ["stacks", "platform"]
    assert areas.index("amd") > areas.index("platform")
    assert "ROCm 7.2.4 (installed)" in target_line(report)
