"""A PCI bus that was not read is "not known", never "no GPU" (Facts.bus_read).

A sysroot copied or mounted without sysfs (a rescue mount, a chroot that never mounted /sys, a
report's tree) has no GPU list to go by. Before, its empty ``gpus`` read as "no GPU here", and the
doctor called the installed driver a leftover to purge and the box GPU-less: advice that removes
the driver of a GPU that is there.
"""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from gpuenv.probe import collect
from tests.doctor_cases import box, judge, judged

PCI_UNREAD = [{"probe": "pci", "message": "/sys is empty (sysfs not mounted): the GPUs on the PCI bus could not be read"}]


@pytest.fixture(scope="module")
def matrices():
    return load()


def test_a_tree_without_sysfs_has_its_bus_unread(tmp_path):
    facts = collect(str(tmp_path))
    assert facts.gpus == () and not facts.bus_read
    assert "pci" in [e.probe for e in facts.errors]


def test_a_mounted_sysfs_without_pci_devices_is_a_machine_without_them(tmp_path):
    (tmp_path / "sys/class").mkdir(parents=True)
    facts = collect(str(tmp_path))
    assert facts.gpus == () and facts.bus_read
    assert "pci" not in [e.probe for e in facts.errors]


def _gpuless(*edits, unread: bool):
    return box("cuda", ("gpus", []), *edits, *((("errors", PCI_UNREAD),) if unread else ()))


@pytest.mark.parametrize("unread", [False, True])
def test_no_driver_is_called_a_leftover_when_the_bus_was_not_read(matrices, unread):
    report = judge(_gpuless(unread=unread), matrices)
    codes = {f.code for f in report.findings}
    assert ("stack.leftovers" in codes) is not unread
    assert ("doctor.probe-failed" in codes) is unread


@pytest.mark.parametrize("unread", [False, True])
def test_an_unbuilt_dkms_driver_is_purged_only_where_its_gpu_is_known_gone(matrices, unread):
    dkms = [{"module": "nvidia", "version": "570.133.07", "kernel": "6.8.0-79-generic", "status": "added"}]
    doc = _gpuless(("kernel.release", "6.8.0-79-generic"), ("kernel.dkms", dkms), unread=unread)
    (f,) = judged(doc, matrices, "kernel.dkms-not-built")
    assert ("apt-get purge" in f.fix) is not unread
    assert ("dkms autoinstall" in f.fix) is unread


@pytest.mark.parametrize("unread", [False, True])
def test_no_gpu_for_an_explicit_target_is_said_only_of_a_bus_that_was_read(matrices, unread):
    # No driver that answered either (nvidia-smi's version would show a GPU runs: unknown, not none).
    doc = _gpuless(("nvidia.driver_version", None), ("nvidia.cuda_driver_version", None), unread=unread)
    found = judged(doc, matrices, "gpu.none", target="cuda")
    assert bool(found) is not unread
