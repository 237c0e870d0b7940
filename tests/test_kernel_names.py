"""The kernels a machine can boot, named as each distribution names them: Debian 13's ``+debNN``,
Debian's backports (``+bpo``, ``0.deb11.N``), Ubuntu's flavours and its ``linux-image-unsigned-``
packages; debug-symbol and meta packages are no kernel. Judged through the facts: the healthy
ROCm box running one kernel with another installed, where ``kernel.next-boot-no-module`` must
name the kernel that boots next (the newest, as GRUB orders them: dpkg's order)."""

from __future__ import annotations

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve import inventory as inv
from tests.doctor_cases import edited, judged, judged_one, setp

CODE = "kernel.next-boot-no-module"


@pytest.fixture(scope="module")
def matrices():
    return load()


def _booting(running: str, *packages: str) -> dict:
    """The healthy ROCm box running ``running`` (amdgpu built for it) with ``packages`` installed."""

    def edit(doc):
        setp(doc, "kernel.release", running)
        setp(doc, "kernel.dkms.0.kernel", running)
        installed = doc["packages"]["installed"]
        for name in [n for n in installed if n.startswith("linux-image-")]:
            del installed[name]
        for name in packages:
            installed[name] = "1"

    return edited("doctor-healthy-rocm", edit)


@pytest.mark.parametrize(
    ("running", "package", "nxt"),
    [
        ("6.12.38+deb13-amd64", "linux-image-6.12.41+deb13-amd64", "6.12.41+deb13-amd64"),  # Debian 13
        ("6.12.38+deb13-cloud-amd64", "linux-image-6.12.41+deb13-cloud-amd64", "6.12.41+deb13-cloud-amd64"),
        ("6.12.38+deb13-arm64", "linux-image-6.12.41+deb13-arm64-unsigned", "6.12.41+deb13-arm64"),
        ("6.1.0-28-amd64", "linux-image-6.12.12+bpo-amd64", "6.12.12+bpo-amd64"),  # Debian 12 backports
        ("6.1.0-0.deb11.17-amd64", "linux-image-6.1.0-0.deb11.21-amd64", "6.1.0-0.deb11.21-amd64"),  # 11's
        ("6.1.0-28-amd64", "linux-image-6.1.0-31-rt-amd64", "6.1.0-31-rt-amd64"),
        ("6.8.0-79-generic", "linux-image-6.8.0-85-generic", "6.8.0-85-generic"),
        ("6.8.0-79-lowlatency", "linux-image-6.8.0-85-lowlatency", "6.8.0-85-lowlatency"),
        ("6.8.0-1017-aws", "linux-image-6.8.0-1021-aws", "6.8.0-1021-aws"),
        ("6.8.0-1017-azure", "linux-image-6.8.0-1021-azure", "6.8.0-1021-azure"),
        ("6.8.0-1017-gcp", "linux-image-6.8.0-1021-gcp", "6.8.0-1021-gcp"),
        ("6.8.0-1017-oracle", "linux-image-6.8.0-1021-oracle", "6.8.0-1021-oracle"),
        ("6.8.0-1017-nvidia", "linux-image-unsigned-6.8.0-1021-nvidia", "6.8.0-1021-nvidia"),
        ("6.8.0-79-generic-64k", "linux-image-6.8.0-85-generic-64k", "6.8.0-85-generic-64k"),
        ("6.8.0-79-generic", "linux-image-6.11.0-29-generic", "6.11.0-29-generic"),  # HWE
        ("6.8.0-79-generic", "linux-image-unsigned-6.8.0-85-generic", "6.8.0-85-generic"),
    ],
)
def test_the_next_boots_kernel_is_recognised_in_each_distributions_names(matrices, running, package, nxt):
    f = judged_one(_booting(running, package), matrices, CODE)
    assert f.title == f"The next boot (kernel {nxt}) has no amdgpu module built"


@pytest.mark.parametrize(
    "package",
    [
        "linux-image-amd64",  # Debian's meta package
        "linux-image-cloud-amd64",
        "linux-image-generic-hwe-24.04",  # Ubuntu's
        "linux-image-6.12.41+deb13-amd64-dbg",  # debug symbols: nothing boots from them
        "linux-image-unsigned-6.8.0-85-generic-dbgsym",
    ],
)
def test_meta_and_debug_packages_are_no_kernel(matrices, package):
    assert not judged(_booting("6.8.0-79-generic", package), matrices, CODE)


def test_an_older_or_the_running_kernel_boots_nothing_new(matrices):
    doc = _booting("6.12.41+deb13-amd64", "linux-image-6.12.38+deb13-amd64", "linux-image-6.12.41+deb13-amd64")
    assert not judged(doc, matrices, CODE)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("6.12.38+deb13-amd64", "6.12.41+deb13-amd64"),
        ("6.1.0-0.deb11.17-amd64", "6.1.0-0.deb11.21-amd64"),
        ("6.8.0-99-generic", "6.8.0-100-generic"),
        ("6.4.0-150600.23.7-default", "6.4.0-150600.23.25-default"),  # SUSE
        ("5.14.0-427.13.1.el9_4.x86_64", "5.14.0-503.11.1.el9_5.x86_64"),  # RHEL
        ("5.15.0-1063-nvidia", "6.8.0-1017-nvidia"),
    ],
)
def test_kernel_releases_order_as_grub_orders_them(older, newer):
    assert inv.kernel_key(older) < inv.kernel_key(newer)
    doc = _booting(older, *(f"linux-image-{r}" for r in (newer, older)))
    assert inv.installed_kernels(from_dict(doc)) == [older, newer]
