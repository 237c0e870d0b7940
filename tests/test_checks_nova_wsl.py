"""nvidia.nova-core-bound (Linux 7.0's nova-core holds an NVIDIA GPU, read from the PCI device's
sysfs driver link) and rocm.wsl-release-unsupported (ROCm inside WSL 2, judged against what AMD's
WSL path supports, and said not judged where gpuenv has no data), from facts and sysroots."""

from __future__ import annotations

import os

import pytest

from gpuenv.matrices import load
from gpuenv.probe import collect
from tests.doctor_cases import box, judged, judged_one

NOVA = "nvidia.nova-core-bound"
WSL = "rocm.wsl-release-unsupported"


@pytest.fixture(scope="module")
def matrices():
    return load()


@pytest.mark.parametrize("driver", ["NovaCore", "nova_core"])
def test_a_gpu_bound_to_nova_core_is_an_error(matrices, driver):
    f = judged_one(box("cuda", ("gpus.0.kernel_driver", driver)), matrices, NOVA)
    assert f.severity.value == "error"
    assert driver in f.detail and "blacklist nova_core" in f.fix
    assert f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize("driver", ["nvidia", "nouveau", None])
def test_other_drivers_are_not_nova(matrices, driver):
    assert judged(box("cuda", ("gpus.0.kernel_driver", driver)), matrices, NOVA) == []


def test_the_probe_reads_nova_from_the_driver_link(tmp_path):
    dev = tmp_path / "sys/bus/pci/devices/0000:01:00.0"
    dev.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("device", "0x2684"), ("class", "0x030000")):
        (dev / name).write_text(value + "\n")
    drivers = tmp_path / "sys/bus/pci/drivers/NovaCore"
    drivers.mkdir(parents=True)
    os.symlink("../../../bus/pci/drivers/NovaCore", dev / "driver")
    facts = collect(str(tmp_path))
    assert [g.kernel_driver for g in facts.gpus] == ["NovaCore"]


# -- ROCm on WSL ---------------------------------------------------------------------------------


def _wsl(*edits):
    return box(
        "rocm",
        ("platform.wsl", True),
        ("kernel.release", "5.15.167.4-microsoft-standard-WSL2"),
        ("gpus", []),
        *edits,
    )


def test_a_native_rocm_box_is_not_judged_as_wsl(matrices):
    assert judged(box("rocm"), matrices, WSL) == []


def test_a_wsl_guest_without_rocm_says_nothing(matrices):
    doc = box("cuda", ("platform.wsl", True), ("gpus", []))
    assert judged(doc, matrices, WSL) == []


def test_a_guest_that_is_not_ubuntu_is_an_error(matrices):
    os_ = {"id": "ol", "version_id": "9.4", "pretty_name": "Oracle Linux Server 9.4"}
    f = judged_one(_wsl(("os", os_)), matrices, WSL)
    assert f.severity.value == "error"
    assert "(Oracle Linux Server 9.4)" in f.title
    assert any("3561" in r for r in f.refs)


@pytest.mark.parametrize(
    "os_",
    [
        {"id": "linuxmint", "version_id": "22", "pretty_name": "Linux Mint 22", "ubuntu_codename": "noble",
         "id_like": ["ubuntu", "debian"]},
        {"id": "linux", "version_id": None, "pretty_name": "Linux"},
    ],
)  # fmt: skip
def test_an_ubuntu_based_or_unnamed_guest_is_not_called_another_distribution(matrices, os_):
    f = judged_one(_wsl(("os", os_), ("platform.windows_build", "10.0.22631.4541")), matrices, WSL)
    assert f.severity.value == "warning" and "not judged" in f.title


def test_windows_10_is_outside_the_matrix(matrices):
    f = judged_one(_wsl(("platform.windows_build", "10.0.19045.5011")), matrices, WSL)
    assert f.severity.value == "warning" and "Windows 10" in f.title


def test_ubuntu_on_windows_11_is_said_not_judged(matrices):
    from gpuenv.resolve.registry import not_judged_codes

    f = judged_one(_wsl(("platform.windows_build", "10.0.22631.4541")), matrices, WSL)
    assert f.severity.value == "warning" and "not judged" in f.title
    assert "10.0.22631.4541" in f.detail
    assert WSL in not_judged_codes()  # exit 5, not "All good"


def test_the_probe_reads_the_windows_build_through_the_mount(tmp_path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/dxg").write_text("")
    for build in ("10.0.22621.2506", "10.0.22631.4541", "junk"):
        (tmp_path / "mnt/c/Windows/servicing/Version" / build).mkdir(parents=True)
    assert collect(str(tmp_path)).platform.windows_build == "10.0.22631.4541"


def test_the_probe_follows_wsl_conf_automount_root(tmp_path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/dxg").write_text("")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/wsl.conf").write_text("[automount]\nroot = /win/\n")
    (tmp_path / "win/c/Windows/servicing/Version/10.0.26100.1").mkdir(parents=True)
    assert collect(str(tmp_path)).platform.windows_build == "10.0.26100.1"


def test_outside_wsl_no_windows_build_is_read(tmp_path):
    (tmp_path / "mnt/c/Windows/servicing/Version/10.0.22631.4541").mkdir(parents=True)
    facts = collect(str(tmp_path))
    assert facts.platform.windows_build is None and "windows_build" not in facts.to_dict()["platform"]
