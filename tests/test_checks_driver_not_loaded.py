"""What nvidia.driver-not-loaded says, not only that it fires: each cause it names, and what it saw."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from tests.doctor_cases import found, judge, setp, variant


@pytest.fixture(scope="module")
def matrices():
    return load()


def _not_loaded(matrices, *edits):
    doc, target, _ = variant("nvidia.driver-not-loaded")
    for path, value in edits:
        setp(doc, path, value)
    hits = found(judge(doc, matrices, target), "nvidia.driver-not-loaded")
    assert len(hits) == 1
    return hits[0]


def test_driver_not_loaded_says_what_it_saw_and_no_cause_when_none_is_known(matrices):
    f = _not_loaded(matrices)
    assert f.severity.value == "error"
    assert f.detail.startswith("installed: ") and "nvidia-driver-570-open 570.133.07" in f.detail
    assert "NVML: driver not loaded" in f.detail
    assert "nvidia not in /proc/modules" in f.detail
    assert "likely:" not in f.detail and "no reboot since the install?" in f.detail
    assert "sudo modprobe nvidia" in f.fix and "sudo reboot" in f.fix
    assert f.gpus


@pytest.mark.parametrize(
    "edits, cause",
    [
        ([("kernel.modules_blacklisted", ["nvidia"])], "nvidia is blacklisted in /etc/modprobe.d"),
        ([("kernel.dkms.0.status", "added")], "DKMS has not built it for 6.8.0-79-generic"),
        ([("kernel.dkms.0.kernel", "6.8.0-1-generic")], "DKMS has not built it for 6.8.0-79-generic"),
        ([("kernel.headers_installed", False)], "no kernel headers for 6.8.0-79-generic (DKMS cannot build)"),
        ([("kernel.secure_boot", True)], "Secure Boot is on (an unsigned module is refused)"),
        ([("kernel.modules_loaded", ["nouveau"])], "nouveau is loaded"),
        ([("gpus.0.kernel_driver", "nouveau")], "nouveau is loaded"),
    ],
)
def test_driver_not_loaded_names_each_cause(matrices, edits, cause):
    f = _not_loaded(matrices, *edits)
    assert f"likely: {cause}" in f.detail
    assert "no reboot since the install?" not in f.detail


def test_driver_not_loaded_names_every_cause_at_once(matrices):
    f = _not_loaded(
        matrices,
        ("kernel.modules_blacklisted", ["nvidia"]),
        ("kernel.headers_installed", False),
        ("kernel.secure_boot", True),
        ("gpus.0.kernel_driver", "nouveau"),
    )
    likely = f.detail.split("likely: ", 1)[1]
    assert likely.count("; ") == 3
    assert "DKMS has not built" not in likely  # it was built for the running kernel


def test_a_built_module_and_unblacklisted_driver_are_not_causes(matrices):
    f = _not_loaded(matrices, ("kernel.modules_blacklisted", ["nouveau"]))
    assert "blacklisted" not in f.detail and "DKMS" not in f.detail


def test_no_finding_when_the_module_is_loaded(matrices):
    doc, target, _ = variant("nvidia.driver-not-loaded")
    setp(doc, "nvidia", {"nvml": "ok"})
    setp(doc, "kernel.modules_loaded", ["nvidia"])
    assert not found(judge(doc, matrices, target), "nvidia.driver-not-loaded")
