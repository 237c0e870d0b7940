"""What the kernel doctor checks (gpuenv/resolve/checks/kernel.py) say, at their boundaries:
unlisted kernel series and the fix per distribution, missing headers for an installed or a planned
DKMS driver, the next boot's and this boot's DKMS builds, Secure Boot, reboots after a driver
upgrade, and iommu=pt. Each machine is a healthy box (tests/facts/doctor-healthy-*.json) with a few
facts changed, judged by the doctor."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from gpuenv.probe import collect
from tests.doctor_cases import (
    DEBIAN,
    MI300X,
    box,
    found,
    installed,
    judge,
    judged,
    judged_one,
    no_nvidia_packages,
    no_rocm,
    setp,
)

RUNNING = "6.8.0-79-generic"
JAMMY = {"id": "ubuntu", "version_id": "22.04", "codename": "jammy", "id_like": ["debian"], "pretty_name": "Ubuntu 22.04.5 LTS"}  # fmt: skip


@pytest.fixture(scope="module")
def matrices():
    return load()


def _dkms(*entries):
    """kernel.dkms from (module, version, kernel, status) tuples."""
    keys = ("module", "version", "kernel", "status")
    return ("kernel.dkms", [dict(zip(keys, e, strict=True)) for e in entries])


def _no_amdgpu_dkms(doc):
    """ROCm's user space on the distribution's own amdgpu: no DKMS driver."""
    doc["kernel"]["dkms"] = []
    for name in ("amdgpu-dkms", "amdgpu-dkms-firmware"):
        del doc["packages"]["installed"][name]


KERNEL_CODES = [
    "kernel.unsupported",
    "kernel.headers-missing",
    "kernel.next-boot-no-module",
    "kernel.dkms-not-built",
    "kernel.secure-boot",
    "kernel.reboot-required",
    "kernel.iommu",
]


@pytest.mark.parametrize("code", KERNEL_CODES)
@pytest.mark.parametrize("name", ["rocm", "cuda"])
def test_the_healthy_boxes_have_no_kernel_finding(matrices, code, name):
    assert not judged(box(name), matrices, code)


# -- kernel.unsupported and its fix


def _kernel(release):
    return lambda d: (setp(d, "kernel.release", release), setp(d, "kernel.dkms.0.kernel", release))


def test_a_kernel_older_than_the_hwe_series_moves_up_with_the_hwe_package(matrices):
    f = judged_one(box("rocm", _kernel("6.11.0-29-generic")), matrices, "kernel.unsupported")
    assert f.severity.value == "warning"
    assert f.title == "Kernel 6.11 is not a series ROCm 7.2.4 lists for ubuntu 24.04"
    assert f.detail.startswith("running 6.11.0-29-generic; ROCm 7.2.4 lists 6.8, 6.17 (GA/HWE).")
    assert (
        f.fix == "sudo apt-get install linux-generic-hwe-24.04  # the HWE kernel series (6.17)\nsudo reboot"
    )


def test_a_kernel_newer_than_every_listed_series_goes_back_to_the_ga_kernel(matrices):
    f = judged_one(box("rocm", _kernel("6.18.0-5-generic")), matrices, "kernel.unsupported")
    assert f.fix.startswith(
        "sudo apt-get install linux-generic  # the GA kernel series (6.8)\n"
        "sudo apt-get remove linux-generic-hwe-24.04  # stop following newer HWE kernels\n"
    )
    assert f.fix.endswith("then remove the 6.18 kernel packages")


@pytest.mark.parametrize(
    "release, fix",
    [
        # 6.0.0 lists 6.6, 6.2, 5.19 for 22.04 and names no GA series: the oldest is the GA one
        (
            "5.15.0-100-generic",
            "sudo apt-get install linux-generic-hwe-22.04  # the HWE kernel series (6.6)\nsudo reboot",
        ),
        ("6.8.0-40-generic", "sudo apt-get install linux-generic  # the GA kernel series (5.19)\n"),
    ],
)
def test_the_newest_listed_series_is_the_hwe_one_and_the_oldest_the_ga_one(matrices, release, fix):
    f = judged_one(box("rocm", ("os", JAMMY), _kernel(release)), matrices, "kernel.unsupported", "rocm@6.0.0")
    assert f.fix.startswith(fix)


def test_on_another_distribution_the_fix_is_its_own_kernel_package(matrices):
    f = judged_one(box("rocm", ("os", DEBIAN)), matrices, "kernel.unsupported")
    assert f.title == "Kernel 6.8 is not a series ROCm 7.2.4 lists for debian 12"
    assert (
        f.fix
        == "Boot a listed kernel series (install it with the distribution's kernel meta-package), then reboot."
    )


@pytest.mark.parametrize(
    "edits, target",
    [
        ([("os.version_id", "25.04")], None),  # a release the ROCm matrix does not list
        ([("os", {**DEBIAN, "id": "rhel", "version_id": "9.4"})], None),  # listed, kernels not confirmed
        (
            [("os", {**DEBIAN, "id": "azurelinux", "version_id": "3.0"})],
            "rocm@6.3.2",
        ),  # listed with no kernels
        ([("kernel.release", "unknown")], None),  # the running kernel is not known
        ([("platform.container", "docker")], None),  # the host's kernel
        ([], "cuda"),  # no ROCm release to judge against
    ],
)
def test_no_unsupported_kernel_when_nothing_lists_it_or_it_is_not_known(matrices, edits, target):
    assert not judged(box("rocm", _kernel("6.11.0-29-generic"), *edits), matrices, "kernel.unsupported", target)


# -- kernel.headers-missing


def test_missing_headers_for_an_installed_dkms_driver(matrices):
    f = judged_one(box("rocm", ("kernel.headers_installed", False)), matrices, "kernel.headers-missing")
    assert f.severity.value == "error"
    assert f.title == f"No kernel headers for the running kernel {RUNNING}"
    assert f.detail == (
        f"/lib/modules/{RUNNING}/build is missing; installed DKMS drivers: amdgpu-dkms, which cannot build without it."
    )
    assert (
        f.fix
        == f"sudo apt-get install linux-headers-{RUNNING} linux-modules-extra-{RUNNING}\nsudo dkms autoinstall"
    )


def test_off_ubuntu_the_headers_fix_names_no_modules_extra(matrices):
    f = judged_one(box("rocm", ("kernel.headers_installed", False), ("os", DEBIAN)), matrices, "kernel.headers-missing")
    assert f.fix == f"sudo apt-get install linux-headers-{RUNNING}\nsudo dkms autoinstall"


@pytest.mark.parametrize(
    "target, said",
    [
        ("rocm", "; the ROCm 7.2.4 install (explicit target) builds the amdgpu DKMS driver, which cannot build"),
        ("rocm@7.2.4", "; the ROCm 7.2.4 install (explicit target) builds the amdgpu DKMS driver, which cannot build"),
        (None, "; the ROCm 7.2.4 install (auto target) builds the amdgpu DKMS driver, which cannot build"),
    ],
)
def test_missing_headers_for_the_dkms_driver_an_install_would_build(matrices, target, said):
    """Only planned, on a distribution kernel: the plan installs the headers itself (planner._headers),
    so nothing fails for it and the finding is a warning that says so (#43: a fresh box is not told in red)."""
    f = judged_one(box("rocm", no_rocm, ("kernel.headers_installed", False)), matrices, "kernel.headers-missing", target)
    assert said in f.detail
    assert f.detail.endswith(f"gpuenv's install plan installs them first (linux-headers-{RUNNING}).")
    assert f.severity.value == "warning"
    assert f.fix == f"sudo apt-get install linux-headers-{RUNNING} linux-modules-extra-{RUNNING}"


def test_a_planned_dkms_build_on_a_kernel_no_package_carries_is_an_error(matrices):
    """A self-built kernel (dpkg's whole list known, no linux-image package of the running release): no
    plan can install its headers, so the planned DKMS build cannot succeed."""
    doc = box("rocm", no_rocm, ("kernel.headers_installed", False))
    doc["packages"]["installed"] = {"dpkg": "1.22.6ubuntu6", "linux-image-6.8.0-40-generic": "6.8.0-40.40"}
    f = judged_one(doc, matrices, "kernel.headers-missing", "rocm@7.2.4")
    assert f.severity.value == "error"
    assert "is not a distribution kernel" in f.detail and "install plan installs them" not in f.detail



def test_an_unloaded_nvidia_driver_known_only_from_nvml_is_the_installed_driver_the_headers_fail(matrices):
    """No package list, NVML's own driver_not_loaded: the driver is installed and its module cannot be
    built without headers, an error (the cause nvidia.driver-not-loaded nests under), never "the
    install would build it"; and an unread kernel release (the probe's "unknown") is named in the fix
    as $(uname -r), never as a package linux-headers-unknown."""
    doc = box("cuda", ("kernel.headers_installed", False), ("kernel.release", "unknown"),
              ("nvidia", {"nvml": "driver_not_loaded"}), ("kernel.modules_loaded", []))  # fmt: skip
    doc.pop("packages")
    doc["kernel"].pop("dkms", None)
    f = judged_one(doc, matrices, "kernel.headers-missing")
    assert f.severity.value == "error"
    assert f.title == "No kernel headers for the running kernel"
    assert f.detail == (
        "/lib/modules/$(uname -r)/build is missing; the installed NVIDIA driver's kernel module is not loaded "
        "(NVML: driver not loaded), and DKMS cannot build it without them."
    )
    assert f.commands == ("sudo apt-get install linux-headers-$(uname -r) linux-modules-extra-$(uname -r)",
                          "sudo dkms autoinstall")  # fmt: skip
    [unloaded] = judged(doc, matrices, "nvidia.driver-not-loaded")
    assert unloaded.cause == "kernel.headers-missing" and "unknown" not in unloaded.detail


def test_an_unread_kernel_release_is_never_a_package_name_in_the_finding_or_the_plan(matrices):
    """The probe's "unknown" release on a box whose driver the install would build: the plan can name
    no headers package (no linux-headers-unknown step; a note says what to install), so the finding
    stays an error and does not promise the plan installs them."""
    from gpuenv.facts import from_dict
    from gpuenv.plan import planner, repos
    from gpuenv.plan.plan import Action, Request

    doc = box("rocm", no_rocm, ("kernel.headers_installed", False), ("kernel.release", "unknown"))
    f = judged_one(doc, matrices, "kernel.headers-missing", "rocm@7.2.4")
    assert f.severity.value == "error" and "install plan installs them" not in f.detail
    assert f.fix == "sudo apt-get install linux-headers-$(uname -r) linux-modules-extra-$(uname -r)"
    plan = planner.make_plan(from_dict(doc), matrices, repos.load(),
                             Request(action=Action.INSTALL, stack="rocm", version="7.2.4", user="alice"))  # fmt: skip
    assert "headers" not in [s.id for s in plan.steps]
    assert not any("linux-headers-unknown" in " ".join(s.argv or ()) for s in plan.steps)
    assert any("the running kernel's release is not known" in n for n in plan.notes)

@pytest.mark.parametrize("target", ["rocm@7.14.0", "rocm@10.0.0"])
def test_a_new_stream_install_builds_no_dkms_driver_so_headers_and_secure_boot_say_nothing(matrices, target):
    """The new stream's plans leave the kernel driver as it is (plan/therock.py): no DKMS build
    to need headers or a signing key, unless a DKMS driver is already installed."""
    bare = box("rocm", no_rocm, ("kernel.headers_installed", False), ("kernel.secure_boot", True))
    assert judged(bare, matrices, "kernel.headers-missing", target) == []
    assert judged(bare, matrices, "kernel.secure-boot", target) == []
    kept = box("rocm", ("kernel.headers_installed", False), ("kernel.secure_boot", True), _unloaded)
    headers = judged_one(kept, matrices, "kernel.headers-missing", target)
    assert "; installed DKMS drivers: amdgpu-dkms, which cannot build without it." in headers.detail
    assert "install" not in headers.detail.split("; ", 1)[1].replace("installed DKMS", "")
    secure = judged_one(kept, matrices, "kernel.secure-boot", target)
    assert secure.title == "Secure Boot is on and the DKMS module amdgpu is not loaded"


@pytest.mark.parametrize(
    "edits, target",
    [
        ([_no_amdgpu_dkms], None),  # ROCm on the distribution's amdgpu: nothing to build
        ([no_rocm, ("platform.container", "docker")], "rocm"),
        ([no_rocm, ("gpus", [])], None),  # nothing would be installed
        ([("kernel.headers_installed", None)], None),  # not known: not judged missing
    ],
)
def test_no_headers_finding_without_a_dkms_driver_to_build(matrices, edits, target):
    doc = box("rocm", ("kernel.headers_installed", False), *edits)
    assert not judged(doc, matrices, "kernel.headers-missing", target)


# -- kernel.next-boot-no-module


NEXT = "6.8.0-85-generic"


def test_the_next_boots_kernel_without_the_module_is_named_with_the_build_to_run(matrices):
    f = judged_one(box("rocm", installed(f"linux-image-{NEXT}", "6.8.0-85.85")), matrices, "kernel.next-boot-no-module")
    assert f.severity.value == "error"
    assert f.title == f"The next boot (kernel {NEXT}) has no amdgpu module built"
    assert f.detail.startswith(
        f"running {RUNNING}; kernel {NEXT} is installed and boots next, but DKMS has not built amdgpu (amdgpu-dkms)"
    )
    assert f.fix.startswith(
        f"sudo apt-get install linux-headers-{NEXT} linux-modules-extra-{NEXT}\nsudo dkms autoinstall -k {NEXT}\n"
    )


def test_the_newest_installed_kernel_is_the_next_boot(matrices):
    doc = box(
        "rocm",
        installed(f"linux-image-{NEXT}", "1"),
        installed("linux-image-6.8.0-90-generic", "1"),
        installed("linux-image-6.8.0-60-generic", "1"),
    )
    assert judged_one(doc, matrices, "kernel.next-boot-no-module").title.startswith(
        "The next boot (kernel 6.8.0-90-generic)"
    )


@pytest.mark.parametrize(
    "status, fires",
    [("installed", False), ("built", True), ("added", True)],
)
def test_the_next_boot_is_fine_only_once_dkms_installed_the_module_for_it(matrices, status, fires):
    doc = box(
        "rocm",
        installed(f"linux-image-{NEXT}", "1"),
        _dkms(("amdgpu", "6.16.6", RUNNING, "installed"), ("amdgpu", "6.16.6", NEXT, status)),
    )
    assert bool(judged(doc, matrices, "kernel.next-boot-no-module")) is fires


@pytest.mark.parametrize(
    "edits",
    [
        [installed("linux-image-6.8.0-40-generic", "1")],  # an older kernel is not the next boot
        [_dkms(("amdgpu", "6.16.6", RUNNING, "built"))],  # the running one is not either
        [installed(f"linux-image-{NEXT}", "1"), ("platform.container", "docker")],
    ],
)
def test_no_next_boot_finding_without_a_newer_kernel_or_on_a_hosts_kernel(matrices, edits):
    assert not judged(box("rocm", *edits), matrices, "kernel.next-boot-no-module")


def test_each_dkms_driver_is_judged_for_the_next_boot(matrices):
    doc = box("rocm", installed(f"linux-image-{NEXT}", "1"), installed("nvidia-dkms-570-open", "570.133.07-1"))
    titles = [f.title for f in judged(doc, matrices, "kernel.next-boot-no-module")]
    assert titles == [f"The next boot (kernel {NEXT}) has no {m} module built" for m in ("amdgpu", "nvidia")]


# -- kernel.dkms-not-built


@pytest.mark.parametrize(
    "entries, seen",
    [
        ([("amdgpu", "6.16.6", RUNNING, "built")], f"amdgpu/6.16.6: built for {RUNNING}"),
        (
            [("amdgpu", "6.16.6", "6.8.0-40-generic", "installed")],
            "amdgpu/6.16.6: installed for 6.8.0-40-generic",
        ),
        ([("amdgpu", "6.16.6", None, "added")], "amdgpu/6.16.6: added (no kernel)"),
        ([("amdgpu", "6.16.6", RUNNING, None)], f"amdgpu/6.16.6: ? for {RUNNING}"),
        ([], "no DKMS entry"),
        (
            [("amdgpu", "6.16.6", RUNNING, "built"), ("amdgpu", "6.12.12", "6.8.0-40-generic", "installed")],
            f"amdgpu/6.16.6: built for {RUNNING}; amdgpu/6.12.12: installed for 6.8.0-40-generic",
        ),
    ],
)
def test_a_dkms_driver_not_installed_for_the_running_kernel_shows_dkms_status(matrices, entries, seen):
    f = judged_one(box("rocm", _dkms(*entries)), matrices, "kernel.dkms-not-built")
    assert f.severity.value == "error"
    assert f.title == f"amdgpu-dkms is installed but its amdgpu module is not built for kernel {RUNNING}"
    assert f.detail == (
        f"dkms status: {seen}. The vendor module is not what runs on this kernel "
        "(kernel API drift, missing headers or a custom kernel)."
    )
    assert f.fix.startswith(
        f"sudo apt-get install linux-headers-{RUNNING} linux-modules-extra-{RUNNING}\nsudo dkms autoinstall -k {RUNNING}\n"
    )
    assert f.fix.endswith("sudo apt-get install --reinstall amdgpu-dkms")


@pytest.mark.parametrize(
    "doc_of, vendor, package, module",
    [
        (
            lambda: box("rocm", ("gpus", []), _dkms(("amdgpu", "6.16.6", RUNNING, "built"))),
            "AMD",
            "amdgpu-dkms",
            "amdgpu",
        ),
        (
            lambda: box("cuda", ("gpus", []), _dkms(("nvidia", "570.133.07", RUNNING, "built"))),
            "NVIDIA",
            "nvidia-dkms-570-open",
            "nvidia",
        ),
    ],
)
def test_a_dkms_driver_whose_gpu_is_gone_is_a_leftover_to_purge(matrices, doc_of, vendor, package, module):
    f = judged_one(doc_of(), matrices, "kernel.dkms-not-built")
    assert f.detail.startswith(f"dkms status: {module}/")
    assert f"There is no {vendor} GPU here: this is a leftover driver" in f.detail
    assert f.fix == f"sudo apt-get purge {package}\nsudo dkms status  # expect no {module} entry"


def test_an_nvidia_dkms_driver_not_built_beside_its_gpu_is_rebuilt(matrices):
    f = judged_one(box("cuda", _dkms(("nvidia", "570.133.07", RUNNING, "added"))), matrices, "kernel.dkms-not-built")
    assert "The vendor module is not what runs on this kernel" in f.detail
    assert f.fix.endswith("--reinstall nvidia-dkms-570-open")


def test_no_dkms_finding_on_a_hosts_kernel(matrices):
    doc = box("rocm", _dkms(("amdgpu", "6.16.6", RUNNING, "built")), ("platform.container", "docker"))
    assert not judged(doc, matrices, "kernel.dkms-not-built")


# -- kernel.dkms-not-built from akmods (Fedora, RPM Fusion)

FEDORA = {"id": "fedora", "version_id": "41", "pretty_name": "Fedora Linux 41 (Workstation Edition)"}
CACHY_KERNEL = "6.12.0-cb1.0.lto.fc41.x86_64"


def _akmods(*failures, loaded=None, driver="nouveau"):
    return box(
        "cuda",
        ("os", FEDORA),
        ("kernel.release", CACHY_KERNEL),
        ("kernel.dkms", None),
        ("kernel.modules_loaded", loaded),
        ("gpus.0.kernel_driver", driver),
        ("packages", {"manager": "rpm", "installed": {"akmod-nvidia": "3:560.35.03-1.fc41"}}),
        ("kernel.akmods_failed", [{"module": m, "version": v, "kernel": k} for m, v, k in failures]),
    )


def test_an_akmods_build_that_failed_for_the_running_kernel_is_the_cause_and_nouveau_follows(matrices):
    # CachyOS/copr-linux-cachyos#16: akmods' log "560.35.03-1-for-6.12.0-cb1.0.lto.fc41.x86_64.failed.log",
    # and the GPU fell back to nouveau.
    report = judge(_akmods(("nvidia", "560.35.03-1", CACHY_KERNEL)), matrices)
    (f,) = found(report, "kernel.dkms-not-built")
    assert f.severity.value == "error" and not f.cause
    assert f.title == f"akmods could not build the nvidia module 560.35.03-1 for kernel {CACHY_KERNEL}"
    assert f"/var/cache/akmods/nvidia/560.35.03-1-for-{CACHY_KERNEL}.failed.log" in f.detail
    assert f.commands == (f"sudo dnf install kernel-devel-{CACHY_KERNEL}", f"sudo akmods --force --kernels {CACHY_KERNEL}")
    (nouveau,) = found(report, "nvidia.nouveau-loaded")
    assert nouveau.cause == "kernel.dkms-not-built"


@pytest.mark.parametrize(
    ("failures", "loaded"),
    [
        ([("nvidia", "560.35.03-1", "6.11.10-300.fc41.x86_64")], None),  # another kernel's failure
        ([("nvidia", "560.35.03-1", CACHY_KERNEL)], ["nvidia", "nvidia_uvm"]),  # loaded: built after all
        ([("v4l2loopback", "0.13.2-1", CACHY_KERNEL)], None),  # not a GPU driver
        ([], None),
    ],
)
def test_no_akmods_finding_where_the_running_kernel_has_its_module(matrices, failures, loaded):
    assert not judged(_akmods(*failures, loaded=loaded), matrices, "kernel.dkms-not-built")


def test_an_akmod_is_not_judged_by_dkms_status(matrices):
    # DKMS installed for something else: akmod-nvidia has no DKMS entry, and `dkms autoinstall`
    # would not build it; only akmods' own log speaks for it.
    doc = _akmods()
    doc["kernel"]["dkms"] = [{"module": "v4l2loopback", "version": "0.13.2", "kernel": CACHY_KERNEL, "status": "installed"}]
    assert not judged(doc, matrices, "kernel.dkms-not-built")


def test_the_probe_reads_akmods_failure_logs(tmp_path):
    cache = tmp_path / "var/cache/akmods"
    (cache / "nvidia").mkdir(parents=True)
    (cache / "nvidia" / f"560.35.03-1-for-{CACHY_KERNEL}.failed.log").write_text("error: ...\n")
    (cache / "nvidia" / f"560.35.03-1-for-{CACHY_KERNEL}.log").write_text("ok\n")  # a build log, not a failure
    (cache / "nvidia" / "junk.failed.log").write_text("")
    (cache / "akmods.log").write_text("")
    kernel = collect(str(tmp_path)).kernel
    assert [(a.module, a.version, a.kernel) for a in kernel.akmods_failed] == [("nvidia", "560.35.03-1", CACHY_KERNEL)]
    bare = tmp_path / "bare"
    bare.mkdir()
    assert collect(str(bare)).kernel.akmods_failed is None  # no akmods cache: not known, not "none failed"


# -- kernel.secure-boot


def _unloaded(doc):
    doc["kernel"]["modules_loaded"] = ["amdxcp"]
    doc["gpus"][0]["kernel_driver"] = None


def test_secure_boot_refusing_a_built_module_is_an_error_with_the_mok_steps(matrices):
    f = judged_one(box("rocm", ("kernel.secure_boot", True), _unloaded), matrices, "kernel.secure-boot")
    assert f.severity.value == "error"
    assert f.title == "Secure Boot is on and the DKMS module amdgpu is not loaded"
    assert f.detail.startswith("DKMS packages: amdgpu-dkms; not in /proc/modules: amdgpu. An unsigned module")
    assert f.fix.startswith(
        "sudo update-secureboot-policy --new-key  # only if /var/lib/shim-signed/mok/MOK.der is missing\n"
        "sudo update-secureboot-policy --enroll-key\nreboot and accept the key"
    )


def test_secure_boot_refusing_the_nvidia_module_on_an_nvidia_box(matrices):
    doc = box("cuda", ("kernel.secure_boot", True), ("kernel.modules_loaded", []), ("gpus.0.kernel_driver", None))
    f = judged_one(doc, matrices, "kernel.secure-boot")
    assert f.title == "Secure Boot is on and the DKMS module nvidia is not loaded"
    assert f.detail.startswith("DKMS packages: nvidia-dkms-570-open; not in /proc/modules: nvidia.")


def test_off_ubuntu_the_key_is_enrolled_with_mokutil(matrices):
    f = judged_one(box("rocm", ("kernel.secure_boot", True), _unloaded, ("os", DEBIAN)), matrices, "kernel.secure-boot")
    assert f.fix.startswith("sudo mokutil --import /var/lib/dkms/mok.pub\n")


@pytest.mark.parametrize(
    "edits",
    [
        [("kernel.modules_loaded", None)],  # not known to be refused
        [
            _unloaded,
            _dkms(("amdgpu", "6.16.6", "6.8.0-40-generic", "installed")),
        ],  # not built for this kernel
        [_unloaded, _dkms(("amdgpu", "6.16.6", RUNNING, "built"))],
    ],
)
def test_a_module_not_proven_loaded_is_a_warning_to_keep_the_key_enrolled(matrices, edits):
    f = judged_one(box("rocm", ("kernel.secure_boot", True), *edits), matrices, "kernel.secure-boot")
    assert f.severity.value == "warning"
    assert f.title == "Secure Boot is on: DKMS modules must be signed with an enrolled key"
    assert f.detail.startswith("DKMS GPU driver: amdgpu-dkms. A kernel or driver update")
    assert "sudo update-secureboot-policy --enroll-key\nthen accept it in the MOK manager" in f.fix


@pytest.mark.parametrize(
    "doc_of, target, what",
    [
        (lambda: box("rocm", ("kernel.secure_boot", True), no_rocm), "rocm",
         "the amdgpu driver the ROCm 7.2.4 install (explicit target) builds."),
        (lambda: box("rocm", ("kernel.secure_boot", True)), "cuda", "the nvidia driver the CUDA "),
    ],
)
def test_a_planned_dkms_driver_under_secure_boot_is_a_warning(matrices, doc_of, target, what):
    f = judged_one(doc_of(), matrices, "kernel.secure-boot", target)
    assert f.severity.value == "warning"
    assert f.detail.startswith(f"DKMS GPU driver: {what}")


@pytest.mark.parametrize(
    "edits, target",
    [
        ([], None),  # the loaded module is signed with an enrolled key
        ([], "rocm"),  # the planned driver is the one loaded
        ([("gpus", []), ("kernel.modules_loaded", [])], None),  # a leftover: no GPU for it
        ([_unloaded, ("platform.container", "docker")], None),
        ([_unloaded, ("kernel.secure_boot", False)], None),
        ([_unloaded, ("kernel.secure_boot", None)], None),
    ],
)
def test_no_secure_boot_finding_when_the_module_loaded_or_is_no_business_of_it(matrices, edits, target):
    doc = box("rocm", ("kernel.secure_boot", True), *edits)
    assert not judged(doc, matrices, "kernel.secure-boot", target)


# -- kernel.reboot-required


def test_nvmls_mismatch_says_reboot_and_names_both_versions(matrices):
    f = judged_one(
        box("cuda", ("nvidia.nvml", "version_mismatch"), ("nvidia.module_version", "565.57.01")),
        matrices,
        "kernel.reboot-required",
    )
    assert f.severity.value == "warning"
    assert f.title == "The NVIDIA driver was upgraded under the loaded module: reboot"
    assert (
        f.detail
        == "NVML: Driver/library version mismatch; loaded module 565.57.01; installed driver 570.133.07."
    )
    assert f.fix == "sudo reboot"


@pytest.mark.parametrize(
    "edits, detail",
    [
        (
            [("nvidia.module_version", None)],
            "NVML: Driver/library version mismatch; installed driver 570.133.07.",
        ),
        (
            [no_nvidia_packages],
            "NVML: Driver/library version mismatch; loaded module 570.133.07; installed driver 570.133.07.",
        ),
        (
            [no_nvidia_packages, ("nvidia.driver_version", "570.172.08")],
            "NVML: Driver/library version mismatch; loaded module 570.133.07; installed driver 570.172.08.",
        ),
        (
            [no_nvidia_packages, ("nvidia.driver_version", None), ("nvidia.module_version", None)],
            "NVML: Driver/library version mismatch.",
        ),
    ],
)
def test_nvmls_mismatch_names_what_is_known(matrices, edits, detail):
    f = judged_one(box("cuda", ("nvidia.nvml", "version_mismatch"), *edits), matrices, "kernel.reboot-required")
    assert f.detail == detail


def test_a_loaded_module_other_than_the_installed_packages_says_reboot(matrices):
    f = judged_one(box("cuda", ("nvidia.module_version", "565.57.01")), matrices, "kernel.reboot-required")
    assert f.title == "The loaded NVIDIA module is not the installed driver: reboot"
    assert f.detail == "loaded nvidia module 565.57.01; installed driver packages 570.133.07."


@pytest.mark.parametrize(
    "edits",
    [
        [("nvidia.module_version", None)],
        [("nvidia.module_version", "565.57.01"), no_nvidia_packages],
        [("nvidia.nvml", "version_mismatch"), ("platform.container", "docker")],  # the host's module
    ],
)
def test_no_nvidia_reboot_finding_when_a_version_is_not_known_or_the_module_is_the_hosts(matrices, edits):
    assert not judged(box("cuda", *edits), matrices, "kernel.reboot-required")


def test_a_loaded_amdgpu_other_than_the_dkms_build_says_reboot(matrices):
    f = judged_one(box("rocm", ("amd.driver_version", "6.12.12")), matrices, "kernel.reboot-required")
    assert f.title == "The loaded amdgpu module is not the installed amdgpu-dkms build: reboot"
    assert f.detail == f"loaded amdgpu 6.12.12; DKMS built 6.16.6-2255209.24.04 for {RUNNING}."


@pytest.mark.parametrize(
    "edits",
    [
        [("amd.driver_version", "6.16.6")],  # the build's version starts with the loaded one
        [
            ("amd.driver_version", "6.16.6-2255209.24.04-1"),
            _dkms(("amdgpu", "6.16.6-2255209.24.04", RUNNING, "installed")),
        ],
        [("amd.driver_version", None)],
        [("amd", None)],
        [
            ("amd.driver_version", "6.12.12"),
            _dkms(("amdgpu", "6.16.6", RUNNING, "built")),
        ],  # nothing installed yet
        [("amd.driver_version", "6.12.12"), _dkms(("amdgpu", "6.16.6", "6.8.0-40-generic", "installed"))],
    ],
)
def test_no_amdgpu_reboot_finding_when_the_build_matches_or_is_not_installed_here(matrices, edits):
    assert not judged(box("rocm", *edits), matrices, "kernel.reboot-required")


# -- kernel.iommu


def _instincts(*gpus):
    def apply(doc):
        first = doc["gpus"][0]
        doc["gpus"] = [
            {**first, "pci_slot": f"0000:{0x11 + 0x10 * i:02x}:00.0", **g} for i, g in enumerate(gpus)
        ]

    return apply


def test_two_instinct_gpus_without_iommu_pt_are_told_to_add_it(matrices):
    f = judged_one(box("rocm", _instincts(MI300X, MI300X)), matrices, "kernel.iommu")
    assert f.severity.value == "info"
    assert f.title == "2 Instinct GPUs without iommu=pt on the kernel command line"
    assert f.detail.startswith(
        "GPUs: AMD Instinct MI300X (0000:11:00.0), AMD Instinct MI300X (0000:21:00.0); /proc/cmdline: BOOT_IMAGE="
    )
    assert f.fix.startswith('Add "iommu=pt" to GRUB_CMDLINE_LINUX_DEFAULT')
    assert f.gpus == ("0000:11:00.0", "0000:21:00.0")


@pytest.mark.parametrize(
    "cpu, params",
    [
        ("Intel(R) Xeon(R) Platinum 8480+", "intel_iommu=on iommu=pt"),
        ("AMD EPYC 9654 96-Core Processor", "iommu=pt"),
        (None, "iommu=pt"),
    ],
)
def test_an_intel_host_also_needs_intel_iommu_on(matrices, cpu, params):
    f = judged_one(box("rocm", _instincts(MI300X, MI300X), ("host.cpu_model", cpu)), matrices, "kernel.iommu")
    assert f.fix.startswith(f'Add "{params}" to GRUB_CMDLINE_LINUX_DEFAULT')


@pytest.mark.parametrize(
    "gpus, count",
    [
        ([MI300X], None),  # one GPU has no peer
        ([MI300X, MI300X, MI300X], 3),
        ([{**MI300X, "name": "AMD MI210", "gfx_target": "gfx90a"}] * 2, 2),  # by gfx target
        ([{**MI300X, "name": "AMD Instinct MI50", "gfx_target": "gfx906"}] * 2, 2),  # by name
        ([{**MI300X, "name": "AMD Radeon Pro VII", "gfx_target": "gfx906"}] * 2, None),
        ([{**MI300X, "name": "AMD Radeon RX 9070 XT", "gfx_target": None, "pci_id": "1002:7550"}] * 2, None),
    ],
)
def test_instinct_gpus_are_known_by_name_or_gfx_target_and_need_a_peer(matrices, gpus, count):
    hits = judged(box("rocm", _instincts(*gpus)), matrices, "kernel.iommu")
    assert [h.title.split(" ")[0] for h in hits] == ([str(count)] if count else [])


@pytest.mark.parametrize("cmdline, fires", [("ro quiet iommu=pt", False), ("ro iommu=ptx", True), ("", True)])
def test_iommu_pt_must_be_a_word_of_the_command_line(matrices, cmdline, fires):
    doc = box("rocm", _instincts(MI300X, MI300X), ("kernel.cmdline", cmdline))
    assert bool(judged(doc, matrices, "kernel.iommu")) is fires
