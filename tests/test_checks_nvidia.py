"""What the NVIDIA doctor checks (gpuenv/resolve/checks/nvidia.py) say, at their boundaries:
nouveau, a missing or unloaded driver, version mismatches, a driver older than a toolkit needs, the
kernel-module flavour, GPUs a driver branch or a toolkit dropped, persistence mode. Each machine is
the healthy RTX 4090 box (tests/facts/doctor-healthy-cuda.json) with a few facts changed, judged by
the doctor."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from tests.doctor_cases import (
    GTX1080TI,
    RTX5090,
    _nvidia_driver,
    box,
    judged,
    judged_one,
    no_nvidia_packages,
    nvidia_gpu,
)

VOLTA = nvidia_gpu("10de:1d81", "NVIDIA TITAN V", "7.0", "Volta")
TURING = nvidia_gpu("10de:1e02", "NVIDIA TITAN RTX", "7.5", "Turing")
G80 = nvidia_gpu("10de:0191", "NVIDIA GeForce 8800 GTX", "1.0", "Tesla")
# A GPU neither the facts nor the bundled tables name an architecture for.
NAMELESS = {"pci_id": "10de:fff0", "name": "NVIDIA Prototype", "architecture": None}


@pytest.fixture(scope="module")
def matrices():
    return load()


def _driver(version):
    return lambda d: _nvidia_driver(d, version)


def _cuda(*versions):
    return (
        "toolkits.cuda",
        [{"version": v, "path": f"/usr/local/cuda-{v}", "source": "package"} for v in versions],
    )


# -- the healthy box says nothing


@pytest.mark.parametrize(
    "code",
    [
        "nvidia.nouveau-loaded",
        "nvidia.driver-missing",
        "nvidia.driver-not-loaded",
        "nvidia.version-mismatch",
        "nvidia.driver-too-old",
        "nvidia.module-flavor",
        "nvidia.gpu-dropped",
        "nvidia.persistence-off",
    ],
)
@pytest.mark.parametrize("target", [None, "cuda@12.8"])
def test_the_healthy_box_has_no_nvidia_finding(matrices, code, target):
    assert not judged(box("cuda"), matrices, code, target)


# -- nvidia.nouveau-loaded


def test_nouveau_bound_to_the_gpu_names_it_and_the_blacklist_fix(matrices):
    doc = box("cuda", ("gpus.0.kernel_driver", "nouveau"), ("kernel.modules_loaded", ["nouveau"]))
    f = judged_one(doc, matrices, "nvidia.nouveau-loaded")
    assert f.severity.value == "error"
    assert f.detail == (
        "nouveau bound to NVIDIA GeForce RTX 4090 (0000:01:00.0). The NVIDIA driver cannot load while nouveau is loaded."
    )
    assert "blacklist nouveau" in f.fix and "update-initramfs -u" in f.fix
    assert f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize(
    ("os_", "rebuild"),
    [
        ({"id": "fedora", "version_id": "41"}, "sudo dracut --force\nsudo reboot"),
        ({"id": "rocky", "version_id": "9.4", "id_like": ["rhel", "centos", "fedora"]}, "sudo dracut --force\nsudo reboot"),
        ({"id": "opensuse-tumbleweed", "version_id": "20250101", "id_like": ["opensuse", "suse"]}, "sudo dracut --force"),
        ({"id": "cachyos", "version_id": None, "id_like": ["arch"]}, "sudo mkinitcpio -P\nsudo reboot"),
        ({"id": "endeavouros", "version_id": None, "id_like": ["arch"]}, "sudo mkinitcpio -P"),
        ({"id": "linuxmint", "version_id": "22", "id_like": ["ubuntu", "debian"]}, "sudo update-initramfs -u"),
        ({"id": "nixos", "version_id": "24.11"}, "dracut --force on Fedora, RHEL and openSUSE, mkinitcpio -P on Arch)"),
    ],
)  # fmt: skip
def test_the_blacklist_fix_rebuilds_the_initramfs_with_the_distributions_own_tool(matrices, os_, rebuild):
    # A fix that names Debian's update-initramfs on Fedora does not run (a CachyOS-kernel Fedora
    # box of the held-out set got it); each family's tool, and words where it is not known.
    doc = box("cuda", ("os", os_), ("gpus.0.kernel_driver", "nouveau"), ("kernel.modules_loaded", ["nouveau"]))
    fix = judged_one(doc, matrices, "nvidia.nouveau-loaded").fix
    assert rebuild in fix
    assert ("update-initramfs" in fix) == (os_["id"] in ("linuxmint", "nixos"))


def test_nouveau_bound_to_one_of_two_gpus_names_only_that_one(matrices):
    doc = box(
        "cuda",
        ("kernel.modules_loaded", None), gpus=[{"kernel_driver": "nvidia"}, {"kernel_driver": "nouveau"}]
    )
    f = judged_one(doc, matrices, "nvidia.nouveau-loaded")
    assert f.detail.startswith("nouveau bound to NVIDIA GeForce RTX 4090 (0000:02:00.0).")
    assert f.gpus == ("0000:02:00.0",)


def test_nouveau_only_in_proc_modules_says_so_and_names_every_gpu(matrices):
    doc = box("cuda", ("gpus.0.kernel_driver", None), ("kernel.modules_loaded", ["nouveau"]))
    f = judged_one(doc, matrices, "nvidia.nouveau-loaded")
    assert f.detail.startswith("nouveau is in /proc/modules.")
    assert f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize(
    "target, fires",
    [("cuda", True), ("rocm", False)],
)
def test_nouveau_loaded_without_an_nvidia_gpu_matters_only_for_a_cuda_target(matrices, target, fires):
    doc = box("cuda", ("kernel.modules_loaded", ["nouveau"]), gpus=[])
    hits = judged(doc, matrices, "nvidia.nouveau-loaded", target)
    assert bool(hits) is fires
    if fires:
        assert hits[0].detail.startswith("nouveau is in /proc/modules") and hits[0].gpus == ()


@pytest.mark.parametrize("loaded", [[], None])
def test_no_nouveau_finding_when_nouveau_is_not_loaded_or_not_known(matrices, loaded):
    doc = box("cuda", ("gpus.0.kernel_driver", None), ("kernel.modules_loaded", loaded))
    assert not judged(doc, matrices, "nvidia.nouveau-loaded", "cuda")


# -- nvidia.driver-missing


def _driverless(*edits, gpus=None):
    return box(
        "cuda",
        ("gpus.0.kernel_driver", None),
        ("kernel.modules_loaded", []),
        ("kernel.dkms", []),
        ("nvidia", {"nvml": "not_installed"}),
        no_nvidia_packages,
        *edits,
        gpus=gpus,
    )


def test_driver_missing_on_a_bare_box_points_at_the_install(matrices):
    f = judged_one(_driverless(), matrices, "nvidia.driver-missing")
    assert f.severity.value == "error"
    assert f.detail.startswith("NVIDIA GeForce RTX 4090 (0000:01:00.0); no NVIDIA driver package installed")
    assert f.fix.startswith("gpuenv install cuda --dry-run")


def test_driver_missing_in_a_container_points_at_the_host(matrices):
    f = judged_one(_driverless(("platform.container", "docker")), matrices, "nvidia.driver-missing")
    assert f.fix.startswith("Install the NVIDIA driver on the container's host")
    assert "--gpus all" in f.fix and "gpuenv install" not in f.fix


@pytest.mark.parametrize(
    "edit",
    [
        ("platform.wsl", True),  # the Windows driver serves WSL
        ("nvidia.driver_version", "570.133.07"),  # a driver answered
        ("kernel.modules_loaded", ["nvidia"]),  # the module is loaded
        ("packages", None),  # the package list is not known
    ],
)
def test_no_driver_missing_when_a_driver_is_there_or_not_known_to_be_absent(matrices, edit):
    assert not judged(_driverless(edit), matrices, "nvidia.driver-missing")


def test_no_driver_missing_without_an_nvidia_gpu(matrices):
    assert not judged(_driverless(("gpus", [])), matrices, "nvidia.driver-missing")


# -- nvidia.driver-not-loaded (the causes: tests/test_checks_driver_not_loaded.py)


def _unloaded(*edits):
    return box(
        "cuda",
        ("gpus.0.kernel_driver", None),
        ("kernel.modules_loaded", []),
        ("nvidia", {"nvml": "driver_not_loaded"}),
        *edits,
    )


def test_driver_not_loaded_without_nvml_facts_judges_the_packages_and_proc_modules(matrices):
    f = judged_one(_unloaded(("nvidia", None)), matrices, "nvidia.driver-not-loaded")
    assert f.detail.startswith("installed: ") and "nvidia not in /proc/modules" in f.detail
    assert "NVML" not in f.detail


def test_driver_not_loaded_on_nvmls_word_alone_when_proc_modules_is_not_known(matrices):
    f = judged_one(_unloaded(("kernel.modules_loaded", None)), matrices, "nvidia.driver-not-loaded")
    assert "NVML: driver not loaded" in f.detail
    assert "/proc/modules" not in f.detail  # not known, so not said
    assert "nouveau" not in f.detail


def test_driver_not_loaded_without_driver_packages_says_only_what_nvml_saw(matrices):
    f = judged_one(_unloaded(no_nvidia_packages, ("kernel.dkms", [])), matrices, "nvidia.driver-not-loaded")
    assert f.detail.startswith("NVML: driver not loaded; nvidia not in /proc/modules")
    assert "installed:" not in f.detail


@pytest.mark.parametrize(
    "edits",
    [
        [("platform.container", "docker")],
        [("platform.wsl", True)],
        [("nvidia", {"nvml": "ok"}), ("kernel.modules_loaded", None)],  # nothing says it is unloaded
    ],
)
def test_no_driver_not_loaded_when_hosted_or_nothing_says_so(matrices, edits):
    assert not judged(_unloaded(*edits), matrices, "nvidia.driver-not-loaded")


@pytest.mark.parametrize(
    "edits",
    [
        [("kernel.modules_blacklisted", None)],
        [("kernel.headers_installed", None)],
        [("kernel.secure_boot", None)],
    ],
)
def test_an_unknown_blacklist_headers_or_secure_boot_is_no_cause(matrices, edits):
    f = judged_one(_unloaded(*edits), matrices, "nvidia.driver-not-loaded")
    assert "likely:" not in f.detail and f.detail.endswith("; no reboot since the install?")


def test_no_dkms_cause_without_a_dkms_driver(matrices):
    def no_dkms_package(d):
        del d["packages"]["installed"]["nvidia-dkms-570-open"]

    f = judged_one(_unloaded(no_dkms_package, ("kernel.dkms", [])), matrices, "nvidia.driver-not-loaded")
    assert "DKMS" not in f.detail


def test_a_dkms_package_with_no_dkms_entry_is_a_dkms_cause(matrices):
    f = judged_one(_unloaded(("kernel.dkms", [])), matrices, "nvidia.driver-not-loaded")
    assert "likely: DKMS has not built it for 6.8.0-79-generic" in f.detail


def test_a_dkms_entry_without_its_package_is_a_dkms_cause(matrices):
    def no_dkms_package(d):
        del d["packages"]["installed"]["nvidia-dkms-570-open"]

    f = judged_one(
        _unloaded(no_dkms_package, ("kernel.dkms.0.status", "added")), matrices, "nvidia.driver-not-loaded"
    )
    assert "likely: DKMS has not built it for 6.8.0-79-generic" in f.detail


# -- nvidia.version-mismatch


def test_nvmls_version_mismatch_names_the_installed_packages(matrices):
    f = judged_one(box("cuda", ("nvidia.nvml", "version_mismatch")), matrices, "nvidia.version-mismatch")
    assert f.severity.value == "error"
    assert f.detail == (
        "NVML: Driver/library version mismatch; installed packages 570.133.07. nvidia-smi and CUDA fail until they match."
    )
    assert f.fix.startswith("sudo reboot")
    assert f.gpus == ("0000:01:00.0",)


def test_nvmls_word_is_kept_when_the_versions_differ_too(matrices):
    doc = box("cuda", ("nvidia.nvml", "version_mismatch"), ("nvidia.module_version", "565.57.01"))
    f = judged_one(doc, matrices, "nvidia.version-mismatch")
    assert f.detail.startswith("NVML: Driver/library version mismatch;")


def test_a_loaded_module_older_than_the_driver_is_a_mismatch(matrices):
    f = judged_one(box("cuda", ("nvidia.module_version", "565.57.01")), matrices, "nvidia.version-mismatch")
    assert f.detail.startswith(
        "loaded module 565.57.01, user-space driver 570.133.07; installed packages 570.133.07."
    )


def test_a_mismatch_without_driver_packages_names_none(matrices):
    f = judged_one(
        box("cuda", ("nvidia.nvml", "version_mismatch"), no_nvidia_packages), matrices, "nvidia.version-mismatch"
    )
    assert f.detail == "NVML: Driver/library version mismatch. nvidia-smi and CUDA fail until they match."


@pytest.mark.parametrize(
    "edits",
    [
        [("nvidia.module_version", None)],  # the loaded module's version is not known
        [("nvidia.driver_version", None)],
        [("nvidia.module_version", "570.133.07")],
    ],
)
def test_no_mismatch_when_the_versions_agree_or_one_is_not_known(matrices, edits):
    assert not judged(box("cuda", *edits), matrices, "nvidia.version-mismatch")


# -- nvidia.driver-too-old


def test_a_driver_older_than_the_installed_toolkit_names_both_and_the_branch_to_get(matrices):
    f = judged_one(box("cuda", _driver("560.35.03")), matrices, "nvidia.driver-too-old")
    # 560 serves CUDA 12.8's programs under minor-version compatibility: said, but no error.
    assert f.severity.value == "warning"
    assert f.title == "NVIDIA driver 560.35.03 is older than CUDA 12.8 requires (570.124.06)"
    assert f.detail == (
        "installed CUDA 12.8.1 needs driver >= 570.124.06 (Table 3); running 560.35.03. Minor-version compatibility "
        "(>= 525.60.13) runs some applications, without PTX JIT or newer APIs."
    )
    assert f.fix == "Upgrade the driver to a branch >= 570: gpuenv install cuda@12.8 --dry-run"
    assert f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize(
    "driver, fires",
    [("570.124.05", True), ("570.124.06", False), ("570.124.07", False)],
)
def test_driver_too_old_at_exactly_the_toolkits_minimum(matrices, driver, fires):
    assert bool(judged(box("cuda", _driver(driver)), matrices, "nvidia.driver-too-old")) is fires


@pytest.mark.parametrize(
    "driver, compat",
    [("525.60.13", True), ("525.60.12", False)],
)
def test_minor_version_compatibility_is_offered_from_exactly_its_driver(matrices, driver, compat):
    f = judged_one(box("cuda", _driver(driver)), matrices, "nvidia.driver-too-old")
    assert ("Minor-version compatibility (>= 525.60.13)" in f.detail) is compat
    assert f.detail.startswith(
        f"installed CUDA 12.8.1 needs driver >= 570.124.06 (Table 3); running {driver}"
    )


@pytest.mark.parametrize(
    "driver, severity",
    [("525.60.13", "warning"), ("525.60.12", "error"), ("520.61.05", "error")],
)
def test_an_installed_toolkit_is_an_error_only_below_minor_version_compatibility(matrices, driver, severity):
    # Programs of an installed CUDA 12.8 run on any driver of its major release from 525.60.13 on
    # (without PTX JIT or newer APIs): GPU work does not fail there, so the report warns.
    f = judged_one(box("cuda", _driver(driver)), matrices, "nvidia.driver-too-old")
    assert f.severity.value == severity


def test_a_targeted_toolkit_the_driver_serves_only_by_minor_version_compatibility_is_an_error(matrices):
    # Installing CUDA 12.8 is what needs the newer driver: that install is asked for, so an error.
    doc = box("cuda", _driver("560.35.03"), ("toolkits.cuda", []))
    f = judged_one(doc, matrices, "nvidia.driver-too-old", "cuda@12.8")
    assert f.severity.value == "error"
    assert f.detail.startswith("target CUDA 12.8 needs driver >= 570.26 (Table 3); running 560.35.03")


def test_a_toolkit_without_minor_version_compatibility_offers_none(matrices):
    f = judged_one(box("cuda", _driver("418.39.01"), _cuda("10.2.89")), matrices, "nvidia.driver-too-old")
    assert f.detail == "installed CUDA 10.2.89 needs driver >= 440.33 (Table 3); running 418.39.01"
    assert f.fix == "Upgrade the driver to a branch >= 440: gpuenv install cuda@10.2 --dry-run"


def test_each_installed_toolkit_is_judged_and_an_unknown_one_skipped(matrices):
    doc = box("cuda", _driver("560.35.05"), _cuda("12.8.1", "12.6.3", "99.1.0"))
    titles = [f.title for f in judged(doc, matrices, "nvidia.driver-too-old")]
    assert titles == [
        "NVIDIA driver 560.35.05 is older than CUDA 12.8 requires (570.124.06)"
    ]  # 12.6.3 needs 560.35.05
    doc = box("cuda", _driver("550.54.14"), _cuda("12.8.1", "12.6.3"))
    assert len(judged(doc, matrices, "nvidia.driver-too-old")) == 2


def test_a_toolkit_without_a_known_minimum_driver_is_not_judged(matrices):
    assert not judged(box("cuda", _driver("400.10.01"), _cuda("12.3.2")), matrices, "nvidia.driver-too-old")


def test_an_explicit_target_newer_than_the_installed_toolkit_is_judged_too(matrices):
    f = judged_one(box("cuda"), matrices, "nvidia.driver-too-old", "cuda@13.0")
    assert f.detail.startswith("target CUDA 13.0 needs driver >= 580.65.06 (Table 3); running 570.133.07")
    assert f.fix == "Upgrade the driver to a branch >= 580: gpuenv install cuda@13.0 --dry-run"


def test_an_explicit_target_that_is_the_installed_toolkit_is_judged_once(matrices):
    f = judged_one(box("cuda", _driver("560.35.03")), matrices, "nvidia.driver-too-old", "cuda@12.8.1")
    assert f.detail.startswith("installed CUDA 12.8.1 needs")


def test_no_target_toolkit_is_judged_without_an_explicit_target(matrices):
    # judged against the installed 12.8 (its GA 12.8.0 needs 570.26): only 12.8.1 is named
    f = judged_one(box("cuda", _driver("560.35.03")), matrices, "nvidia.driver-too-old")
    assert "target CUDA" not in f.detail


@pytest.mark.parametrize(
    "edits",
    [
        [("nvidia", None), no_nvidia_packages],  # no driver version known at all
        [_driver("560.35.03"), ("gpus", [])],  # no NVIDIA GPU to run it
    ],
)
def test_no_driver_too_old_without_a_known_driver_or_an_nvidia_gpu(matrices, edits):
    assert not judged(box("cuda", *edits), matrices, "nvidia.driver-too-old", "cuda@12.8")


# -- nvidia.module-flavor


def test_blackwell_on_the_proprietary_modules_needs_the_open_ones(matrices):
    doc = box("cuda", ("nvidia.kernel_module", "proprietary"), gpus=[RTX5090])
    f = judged_one(doc, matrices, "nvidia.module-flavor")
    assert f.severity.value == "error"
    assert f.title == "Blackwell GPUs need the open NVIDIA kernel modules, not the proprietary ones"
    assert f.detail == (
        "NVIDIA GeForce RTX 5090 (0000:01:00.0); loaded flavour: proprietary. "
        "Blackwell and Grace Hopper are supported only by the open modules."
    )
    assert f.fix == (
        "Switch flavour (NVIDIA CUDA repository): sudo apt-get install nvidia-open\n"
        "(Ubuntu archive: the nvidia-driver-NNN-open packages)\nsudo reboot"
    )
    assert f.gpus == ("0000:01:00.0",)


def test_pascal_on_the_open_modules_needs_the_proprietary_ones(matrices):
    doc = box("cuda", ("nvidia.kernel_module", "open"), gpus=[GTX1080TI, VOLTA])
    f = judged_one(doc, matrices, "nvidia.module-flavor")
    assert f.title == "Pascal, Volta GPUs need the proprietary NVIDIA kernel modules, not the open ones"
    assert f.detail.endswith(
        "loaded flavour: open. Maxwell, Pascal and Volta are not supported by the open modules."
    )
    assert f.fix == (
        "Switch flavour (NVIDIA CUDA repository): sudo apt-get install cuda-drivers\n"
        "(Ubuntu archive: nvidia-driver-NNN without -open; driver branch <= 580)\nsudo reboot"
    )
    assert f.gpus == ("0000:01:00.0", "0000:02:00.0")


def test_a_gpu_of_no_known_architecture_is_judged_by_its_compute_capability(matrices):
    doc = box("cuda", ("nvidia.kernel_module", "proprietary"), gpus=[{**NAMELESS, "compute_capability": "12.0"}])
    f = judged_one(doc, matrices, "nvidia.module-flavor")
    assert f.title == "these GPUs need the open NVIDIA kernel modules, not the proprietary ones"


@pytest.mark.parametrize("flavour", [None, "unknown"])
def test_an_unknown_loaded_flavour_is_not_judged_wrong(matrices, flavour):
    doc = box("cuda", ("nvidia.kernel_module", flavour), gpus=[RTX5090])
    assert not judged(doc, matrices, "nvidia.module-flavor")


def test_gpus_needing_both_flavours_for_a_cuda_install_name_each_side(matrices):
    doc = box("cuda", ("nvidia", None), gpus=[GTX1080TI, RTX5090])
    f = judged_one(doc, matrices, "nvidia.module-flavor", "cuda")
    assert f.title == "No NVIDIA kernel-module flavour drives all of these GPUs"
    assert f.detail == (
        "NVIDIA GeForce RTX 5090 (0000:02:00.0) need the open modules; NVIDIA GeForce GTX 1080 Ti (0000:01:00.0) "
        "need the proprietary ones. One driver loads one flavour."
    )
    assert f.gpus == ("0000:01:00.0", "0000:02:00.0")


def test_both_flavours_with_one_that_either_drives_still_conflict(matrices):
    doc = box("cuda", ("nvidia", None), gpus=[GTX1080TI, RTX5090, TURING])
    assert judged_one(doc, matrices, "nvidia.module-flavor", "cuda").title.startswith(
        "No NVIDIA kernel-module flavour"
    )


def test_a_wrong_loaded_flavour_is_said_once_not_also_as_a_conflict(matrices):
    doc = box("cuda", ("nvidia.kernel_module", "open"), gpus=[GTX1080TI, RTX5090])
    f = judged_one(doc, matrices, "nvidia.module-flavor", "cuda")
    assert f.title == "Pascal GPUs need the proprietary NVIDIA kernel modules, not the open ones"


@pytest.mark.parametrize(
    "edits, target",
    [
        ([], "rocm"),  # not installing CUDA here
        ([("platform.container", "docker")], "cuda"),  # the host's driver
    ],
)
def test_no_flavour_conflict_when_not_installing_cuda_here(matrices, edits, target):
    doc = box("cuda", ("nvidia", None), *edits, gpus=[GTX1080TI, RTX5090])
    assert not judged(doc, matrices, "nvidia.module-flavor", target)


def test_gpus_of_one_flavour_are_no_conflict(matrices):
    doc = box("cuda", ("nvidia", None), gpus=[RTX5090, TURING])
    assert not judged(doc, matrices, "nvidia.module-flavor", "cuda")


# -- nvidia.gpu-dropped


def test_a_pascal_gpu_past_its_last_driver_branch_names_the_branch_and_the_cuda_to_stay_on(matrices):
    f = judged_one(box("cuda", _driver("590.48.01"), gpus=[GTX1080TI]), matrices, "nvidia.gpu-dropped")
    assert f.severity.value == "error"
    assert f.title == "NVIDIA GeForce GTX 1080 Ti (Pascal, compute capability 6.1) is no longer supported"
    assert f.detail == "driver 590.48.01 (branch R590); Pascal ends with R580."
    assert (
        f.fix
        == "Stay on a driver branch up to R580 and CUDA 12.9 or older: gpuenv install cuda@12.9 --dry-run"
    )
    assert f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize(
    "driver, fires",
    [("570.133.07", False), ("580.95.05", False), ("590.48.01", True)],
)
def test_a_gpu_on_exactly_its_last_driver_branch_is_still_supported(matrices, driver, fires):
    assert bool(judged(box("cuda", _driver(driver), gpus=[GTX1080TI]), matrices, "nvidia.gpu-dropped")) is fires


def test_a_branch_known_only_from_a_package_name_is_judged(matrices):
    def branch_only(d):
        d["nvidia"] = None
        no_nvidia_packages(d)
        d["packages"]["installed"]["nvidia-driver-590"] = "590"

    f = judged_one(box("cuda", branch_only, gpus=[GTX1080TI]), matrices, "nvidia.gpu-dropped")
    assert f.detail == "driver 590 (branch R590); Pascal ends with R580."


def test_no_branch_is_judged_when_no_driver_is_known(matrices):
    doc = box("cuda", ("nvidia", None), no_nvidia_packages, gpus=[GTX1080TI])
    assert not judged(doc, matrices, "nvidia.gpu-dropped")


@pytest.mark.parametrize(
    "gpu, fires",
    [(VOLTA, True), (TURING, False)],
)
def test_a_gpu_below_exactly_the_toolkits_lowest_compute_capability_is_dropped(matrices, gpu, fires):
    doc = box("cuda", _driver("580.95.05"), _cuda("13.0.2"), gpus=[gpu])
    hits = judged(doc, matrices, "nvidia.gpu-dropped")
    assert bool(hits) is fires
    if fires:
        # 7.5 is CUDA 13's lowest capability (by version: "10.0" sorts first as text)
        assert hits[0].detail == "installed CUDA 13.0.2 supports compute capability 7.5 and newer."
        assert hits[0].fix.startswith("Stay on a driver branch up to R580 and CUDA 12.9 or older")


def test_an_explicit_target_toolkit_drops_a_gpu_the_installed_one_supports(matrices):
    f = judged_one(box("cuda", _driver("580.95.05"), gpus=[VOLTA]), matrices, "nvidia.gpu-dropped", "cuda@13.0")
    assert f.detail == "target CUDA 13.0 supports compute capability 7.5 and newer."


def test_a_gpu_past_its_branch_and_its_toolkit_names_both_reasons(matrices):
    f = judged_one(box("cuda", _driver("590.48.01"), _cuda("13.1.1"), gpus=[VOLTA]), matrices, "nvidia.gpu-dropped")
    assert f.detail == (
        "driver 590.48.01 (branch R590); Volta ends with R580; "
        "installed CUDA 13.1.1 supports compute capability 7.5 and newer."
    )


def test_a_gpu_no_toolkit_supports_gets_the_generic_advice(matrices):
    f = judged_one(box("cuda", gpus=[G80]), matrices, "nvidia.gpu-dropped")
    assert f.title == "NVIDIA GeForce 8800 GTX (Tesla, compute capability 1.0) is no longer supported"
    assert f.detail == (
        "driver 570.133.07 (branch R570); Tesla ends with R340; "
        "installed CUDA 12.8.1 supports compute capability 5.0 and newer."
    )
    assert f.fix == (
        "Stay on a driver branch up to R340 and a CUDA toolkit that still supports Tesla (`gpuenv matrix show cuda`)."
    )


def test_a_gpu_of_no_known_architecture_is_judged_by_compute_capability_alone(matrices):
    f = judged_one(box("cuda", gpus=[{**NAMELESS, "compute_capability": "3.0"}]), matrices, "nvidia.gpu-dropped")
    assert f.title == "NVIDIA Prototype (this, compute capability 3.0) is no longer supported"
    assert f.detail == "installed CUDA 12.8.1 supports compute capability 5.0 and newer."
    assert (
        f.fix == "Stay on an older driver branch and CUDA 10.2 or older: gpuenv install cuda@10.2 --dry-run"
    )


def test_an_architecture_the_tables_do_not_know_is_named_as_the_facts_give_it(matrices):
    gpu = {**NAMELESS, "architecture": "Kepler2", "compute_capability": "1.5"}
    f = judged_one(box("cuda", gpus=[gpu]), matrices, "nvidia.gpu-dropped")
    assert f.title == "NVIDIA Prototype (Kepler2, compute capability 1.5) is no longer supported"
    assert f.fix == (
        "Stay on an older driver branch and a CUDA toolkit that still supports Kepler2 (`gpuenv matrix show cuda`)."
    )


def test_a_gpu_of_unknown_compute_capability_is_not_judged_dropped(matrices):
    doc = box("cuda", _driver("590.48.01"), gpus=[{**NAMELESS, "compute_capability": None}])
    assert not judged(doc, matrices, "nvidia.gpu-dropped")


def test_a_gpu_of_an_architecture_without_a_last_branch_is_not_dropped_by_a_new_driver(matrices):
    assert not judged(box("cuda", _driver("610.43.02"), gpus=[TURING]), matrices, "nvidia.gpu-dropped")


def test_each_dropped_gpu_is_its_own_finding(matrices):
    hits = judged(box("cuda", _driver("590.48.01"), gpus=[GTX1080TI, TURING, VOLTA]), matrices, "nvidia.gpu-dropped")
    assert [h.gpus for h in hits] == [("0000:01:00.0",), ("0000:03:00.0",)]


# -- nvidia.persistence-off


def test_a_headless_node_without_persistence_mode_gets_the_override(matrices):
    f = judged_one(box("cuda", ("nvidia.persistence_mode", False)), matrices, "nvidia.persistence-off")
    assert f.severity.value == "info"
    assert f.detail.startswith("NVIDIA GeForce RTX 4090 (0000:01:00.0); no display server installed")
    assert "--persistence-mode" in f.fix and "override.conf" in f.fix
    assert f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize(
    "edits",
    [
        [lambda d: d["packages"]["installed"].__setitem__("xserver-xorg-core", "2:21.1.12-1ubuntu1")],
        [("platform.container", "docker")],
        [("gpus", [])],
        [("nvidia.persistence_mode", None)],  # not known: not judged off
    ],
)
def test_no_persistence_finding_with_a_display_in_a_container_without_a_gpu_or_unknown(matrices, edits):
    assert not judged(box("cuda", ("nvidia.persistence_mode", False), *edits), matrices, "nvidia.persistence-off")
