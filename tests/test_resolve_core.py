"""The resolver's machinery: the registry loop (crashes, needs, only/ignore), the target choice,
blockers, and the conditional severities of findings.md."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve import inventory, registry
from gpuenv.resolve.blockers import judge
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.registry import check, run_checks
from gpuenv.resolve.report import diagnose
from gpuenv.resolve.target import choose_auto, effective_target
from gpuenv.resolve.torcharch import cuda_arch_ok
from tests.doctor_cases import base, variant
from tests.schemas import validate


@pytest.fixture(scope="module")
def matrices():
    return load()


def facts_of(doc):
    return from_dict(doc)


def codes(report_or_list):
    findings = getattr(report_or_list, "findings", report_or_list)
    return {f.code: f.severity.value for f in findings}


@pytest.fixture
def crashing_check():
    registry.all_checks()
    before = list(registry._REGISTERED)

    @check(code="gpu.mixed-vendors", area="gpus")
    def explodes(facts, matrices, target):
        raise KeyError("boom")
        yield  # pragma: no cover

    yield
    registry._REGISTERED[:] = before


def test_a_crashing_check_becomes_a_finding_and_the_others_run(crashing_check, matrices):
    doc, _, _ = variant("dpkg.interrupted")
    report = diagnose(facts_of(doc), matrices, Target())
    found = codes(report)
    assert found["doctor.check-crashed"] == "warning"
    assert found["dpkg.interrupted"] == "error"
    crash = next(f for f in report.findings if f.code == "doctor.check-crashed")
    assert "explodes" in crash.detail and "KeyError" in crash.detail
    validate(report.to_dict(), "report")


def test_checks_whose_facts_are_unknown_are_skipped(matrices):
    doc = base("doctor-healthy-rocm")
    doc["packages"] = None
    doc["kernel"]["dkms"] = None
    doc["packages"] = None
    found = run_checks(facts_of(doc), matrices, Target())
    assert not any(f.code.startswith(("kernel.dkms", "dpkg.")) for f in found)


def test_without_matrices_the_matrix_checks_are_skipped():
    doc, _, _ = variant("os.unsupported")
    assert "os.unsupported" not in codes(
        run_checks(facts_of(doc), None, Target(stack="rocm", version="7.2.4"))
    )


def test_unknown_codes_are_refused(matrices):
    with pytest.raises(ValueError, match="no.such"):
        run_checks(facts_of(base("doctor-cpu-laptop")), matrices, Target(), only=["no.such"])


def test_choose_auto(matrices):
    assert choose_auto(facts_of(base("doctor-cpu-laptop")), matrices) is None
    amd = base("doctor-healthy-rocm")
    assert choose_auto(facts_of(amd), matrices).stack == "rocm"
    assert choose_auto(facts_of(amd), matrices).version == matrices.default_rocm().version
    nvidia = choose_auto(facts_of(base("doctor-healthy-cuda")), matrices)
    assert nvidia.stack == "cuda"
    both, _, _ = variant("gpu.mixed-vendors")
    assert choose_auto(facts_of(both), matrices) is None


def test_auto_cuda_version_fits_old_gpus(matrices):
    doc, _, _ = variant("torch.arch-missing")  # a GTX 1080 Ti (sm_61): CUDA 13 dropped Pascal
    target = choose_auto(facts_of(doc), matrices)
    assert target.version.startswith("12.")


def test_effective_target(matrices):
    healthy = facts_of(base("doctor-healthy-rocm"))
    assert effective_target(healthy, matrices, Target()).extra["basis"] == "installed"
    assert effective_target(healthy, matrices, Target()).version == "7.2.4"
    explicit = effective_target(healthy, matrices, Target.parse("rocm"))
    assert (explicit.version, explicit.extra["basis"]) == (matrices.default_rocm().version, "explicit")
    fresh, _, _ = variant("nvidia.driver-missing")
    fresh["toolkits"]["cuda"] = []
    fresh["packages"]["installed"] = {
        n: v for n, v in fresh["packages"]["installed"].items() if "cuda" not in n
    }
    fresh_doc = facts_of(fresh)
    assert effective_target(fresh_doc, matrices, Target()).extra["basis"] == "auto"


def test_blockers_list_what_an_install_cannot_fix(matrices):
    doc, _, _ = variant("platform.arch-unsupported")
    assert [f.code for f in judge(facts_of(doc), matrices, Target.parse("rocm")).blockers] == [
        "platform.arch-unsupported"
    ]
    fresh, _, _ = variant("amd.driver-missing")  # the install brings the driver: not a blocker
    assert judge(facts_of(fresh), matrices, Target.parse("rocm")).blockers == ()


# -- conditional severities (findings.md) -----------------------------------------------------


def test_wsl_without_a_linux_driver_is_info(matrices):
    doc, _, _ = variant("platform.wsl")
    for name in [n for n in doc["packages"]["installed"] if "nvidia" in n]:
        del doc["packages"]["installed"][name]
    assert codes(diagnose(facts_of(doc), matrices, Target()))["platform.wsl"] == "info"


def test_container_with_devices_mapped_is_info(matrices):
    doc = base("doctor-healthy-rocm")
    doc["platform"]["container"] = "podman"
    assert codes(diagnose(facts_of(doc), matrices, Target()))["platform.container"] == "info"


@pytest.mark.parametrize(
    "nodes, missing",
    [
        (("/dev/nvidiactl", "/dev/nvidia1"), None),  # `--gpus device=1`: any numbered node will do
        (("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-modeset"), "/dev/nvidia[0-9]*"),
        (("/dev/nvidiactl", "/dev/nvidia0x"), "/dev/nvidia[0-9]*"),
        (("/dev/nvidia0",), "/dev/nvidiactl"),
    ],
)
def test_a_container_needs_nvidiactl_and_a_numbered_nvidia_node(matrices, nodes, missing):
    doc = base("plan-ubuntu2204-gtx1080-container")
    doc["device_nodes"] = {n: {"exists": True} for n in nodes}
    report = diagnose(facts_of(doc), matrices, Target())
    finding = next(f for f in report.findings if f.code == "platform.container")
    assert finding.severity.value == ("info" if missing is None else "error")
    if missing is not None:
        assert f"NVIDIA: {missing} missing" in finding.detail


def test_newer_point_release_is_a_warning(matrices):
    doc = base("doctor-healthy-rocm")
    doc["os"]["pretty_name"] = "Ubuntu 24.04.9 LTS"
    assert codes(diagnose(facts_of(doc), matrices, Target()))["os.unsupported"] == "warning"


def test_secure_boot_with_the_module_refused_is_an_error(matrices):
    doc = base("doctor-healthy-rocm")
    doc["kernel"]["secure_boot"] = True
    doc["kernel"]["modules_loaded"] = []
    doc["gpus"][0]["kernel_driver"] = None
    assert codes(diagnose(facts_of(doc), matrices, Target()))["kernel.secure-boot"] == "error"


def test_gpu_none_is_info_without_a_target_and_error_with_one(matrices):
    laptop = facts_of(base("doctor-cpu-laptop"))
    assert codes(diagnose(laptop, matrices, Target()))["gpu.none"] == "info"
    assert codes(diagnose(laptop, matrices, Target.parse("cuda")))["gpu.none"] == "error"


def test_headers_missing_is_silent_when_no_dkms_driver_is_installed_or_planned(matrices):
    doc = base("doctor-cpu-laptop")
    doc["kernel"]["headers_installed"] = False
    assert "kernel.headers-missing" not in codes(diagnose(facts_of(doc), matrices, Target()))


# -- torch architecture rules ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cc", "archs", "ok"),
    [
        ("8.6", ["sm_80"], True),  # same major, higher minor: the sm_80 cubin runs
        ("8.0", ["sm_86"], False),
        ("12.0", ["sm_50", "sm_90"], False),  # RTX 5090 on a cu126 wheel
        # PTX of an older major is not counted: the build's own CUDA libraries have no code for
        # the newer GPU (RTX 3090s on compute_37 builds fail: tests/cases pytorch-46794, spice-26)
        ("12.0", ["sm_90", "compute_90"], False),
        ("12.1", ["sm_100", "compute_120"], True),  # PTX of the same major JIT-compiles (GB10)
        ("8.6", ["sm_37", "compute_37"], False),
        ("6.1", ["sm_75", "sm_80", "sm_120"], False),  # GTX 1080 Ti on cu128
        ("9.0", ["sm_90a"], True),
    ],
)
def test_cuda_arch_rules(cc, archs, ok):
    assert cuda_arch_ok(cc, archs) is ok


def test_gtx1080ti_on_cu128_is_missing_its_arch(matrices):
    doc, _, _ = variant("torch.arch-missing")
    doc["python"]["torch"]["arch_list"] = None  # from the bundled cu128 list
    found = diagnose(facts_of(doc), matrices, Target())
    assert codes(found)["torch.arch-missing"] == "error"
    assert "sm_61" in next(f.title for f in found.findings if f.code == "torch.arch-missing")


def test_errors_make_exit_1(matrices):
    doc, _, _ = variant("dpkg.interrupted")
    assert diagnose(facts_of(doc), matrices, Target()).exit_code() == 1
    assert diagnose(facts_of(base("doctor-healthy-cuda")), matrices, Target()).exit_code() == 0


def test_severity_enum_is_the_contract():
    assert [s.value for s in Severity] == ["error", "warning", "info"]


def test_choose_auto_without_matrices_still_picks_the_vendor():
    target = choose_auto(facts_of(base("doctor-healthy-rocm")), None)
    assert (target.stack, target.version) == ("rocm", None)


def test_explicit_target_without_its_vendor_gpu_is_gpu_none(matrices):
    amd_only = facts_of(base("doctor-healthy-rocm"))
    found = codes(diagnose(amd_only, matrices, Target.parse("cuda")))
    assert found["gpu.none"] == "error"
    assert "gpu.none" not in codes(diagnose(amd_only, matrices, Target.parse("rocm")))


def test_both_installed_is_left_to_leftovers_when_one_vendor_is_gone(matrices):
    doc = base("doctor-healthy-rocm")
    doc["packages"]["installed"]["cuda-toolkit-12-8"] = "12.8.1-1"
    found = codes(diagnose(facts_of(doc), matrices, Target()))
    assert "stack.both-installed" not in found and found["stack.leftovers"] == "warning"


# -- no false positives on real machines, and details that name what was seen -------------------


def finding(report, code):
    found = [f for f in report.findings if f.code == code]
    return found[0] if found else None


def raphael(**kw):
    g = {"vendor": "amd", "pci_id": "1002:164e", "pci_slot": "0000:10:00.0", "pci_class": "0300",
         "name": "Raphael", "kernel_driver": "amdgpu", "gfx_target": "gfx1036", "integrated": True,
         "sources": ["sysfs", "kfd"]}  # fmt: skip
    g.update(kw)
    return g


def test_nvidia_repository_driver_is_one_owner(matrices):
    # NVIDIA's CUDA repository ships Ubuntu's package names: cuda-drivers-570 pulls nvidia-driver-570.
    doc = base("doctor-healthy-cuda")
    version = doc["packages"]["installed"]["nvidia-driver-570-open"]
    doc["packages"]["installed"]["cuda-drivers-570"] = version
    doc["packages"]["installed"]["cuda-drivers"] = version
    assert "cuda.mixed-install" not in codes(diagnose(facts_of(doc), matrices, Target()))


def test_runfile_toolkit_beside_a_packaged_driver_is_fine_beside_a_packaged_toolkit_is_not(matrices):
    doc = base("doctor-healthy-cuda")
    doc["toolkits"]["cuda"] = [{"version": "12.6.3", "path": "/usr/local/cuda-12.6", "source": "runfile"}]
    for name in ("cuda-toolkit-12-8", "cuda-nvcc-12-8"):
        del doc["packages"]["installed"][name]
    assert "cuda.mixed-install" not in codes(diagnose(facts_of(doc), matrices, Target()))
    doc["packages"]["installed"]["cuda-toolkit-12-8"] = "12.8.1-1"
    f = finding(diagnose(facts_of(doc), matrices, Target()), "cuda.mixed-install")
    assert f.severity is Severity.ERROR
    assert "12.6.3 at /usr/local/cuda-12.6" in f.detail
    assert "sudo /usr/local/cuda-12.6/bin/cuda-uninstaller" in f.fix


def test_mixed_driver_owners_name_both_versions(matrices):
    doc, _, _ = variant("cuda.mixed-install")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "cuda.mixed-install")
    assert "cuda-drivers 570.133.20-1" in f.detail and "570.133.07" in f.detail


def test_secure_boot_error_only_for_a_built_module_of_a_present_gpu(matrices):
    doc = base("doctor-healthy-rocm")
    doc["kernel"]["secure_boot"] = True
    # a leftover NVIDIA DKMS package, never built, no NVIDIA GPU: not Secure Boot's doing
    doc["packages"]["installed"]["nvidia-dkms-570-open"] = "570.133.07-0ubuntu1"
    found = diagnose(facts_of(doc), matrices, Target())
    # amdgpu is loaded (so signed and enrolled); the NVIDIA leftover has no GPU: nothing to warn of.
    assert "kernel.secure-boot" not in codes(found)
    leftover = finding(found, "kernel.dkms-not-built")
    assert leftover.fix.startswith("sudo apt-get purge nvidia-dkms-570-open")
    assert "no NVIDIA GPU" in leftover.detail


def test_secure_boot_is_silent_when_the_dkms_module_loaded_and_warns_when_unknown(matrices):
    doc = base("doctor-healthy-rocm")
    doc["kernel"]["secure_boot"] = True
    assert "kernel.secure-boot" not in codes(diagnose(facts_of(doc), matrices, Target()))
    doc["kernel"]["modules_loaded"] = None  # /proc/modules unreadable: cannot prove it loaded
    assert codes(diagnose(facts_of(doc), matrices, Target()))["kernel.secure-boot"] == "warning"


def test_dkms_not_built_names_the_status_and_the_build_command(matrices):
    doc, _, _ = variant("kernel.dkms-not-built")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "kernel.dkms-not-built")
    assert "amdgpu/6.16.6-2255209.24.04: built" in f.detail
    assert "sudo apt-get install linux-headers-6.8.0-79-generic linux-modules-extra-6.8.0-79-generic" in f.fix
    assert "sudo dkms autoinstall -k 6.8.0-79-generic" in f.fix


def test_igpu_alone_or_passed_through_is_not_igpu_present(matrices):
    doc = base("doctor-healthy-rocm")
    doc["gpus"] = [raphael()]
    found = codes(diagnose(facts_of(doc), matrices, Target()))
    assert "amd.igpu-present" not in found
    doc = base("doctor-healthy-rocm")
    doc["gpus"].append(raphael(kernel_driver="vfio-pci", sources=["sysfs"]))
    found = codes(diagnose(facts_of(doc), matrices, Target()))
    assert "amd.igpu-present" not in found and "gpu.no-driver" not in found


def test_igpu_present_names_both_gpus_and_the_hiding_variable(matrices):
    doc, _, _ = variant("amd.igpu-present")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "amd.igpu-present")
    assert "Raphael (0000:10:00.0)" in f.detail and "0000:03:00.0" in f.detail
    assert "HIP_VISIBLE_DEVICES" in f.fix and f.gpus == ("0000:10:00.0",)


def test_unbound_igpu_beside_a_discrete_gpu_is_no_error(matrices):
    doc = base("doctor-healthy-rocm")
    doc["gpus"].append(raphael(kernel_driver=None, sources=["sysfs"]))
    assert "gpu.no-driver" not in codes(diagnose(facts_of(doc), matrices, Target()))


def test_apu_laptop_torch_builds_are_not_wrong(matrices):
    # Ryzen 7000 laptop, only the Raphael iGPU (no official wheel has gfx1036): a CPU or the
    # default CUDA build of torch is no error there.
    doc = base("doctor-healthy-rocm")
    doc["gpus"] = [raphael()]
    for version, cuda in (("2.7.0+cpu", None), ("2.7.0+cu128", "12.8")):
        doc["python"]["torch"] = {"version": version, "cuda": cuda, "hip": None, "arch_list": None}
        found = codes(diagnose(facts_of(doc), matrices, Target()))
        # A CUDA build there runs on the CPU: said, as a warning; a CPU build is no mistake.
        assert "torch.cpu-build" not in found
        assert found.get("torch.wrong-vendor") == ("warning" if cuda else None)


def test_torch_arch_rule_is_wheelfits(matrices):
    from gpuenv.resolve.wheelfit import cuda_covers

    for version in matrices.torch_versions():
        for v in matrices.torch_variants(version):
            if v.stack != "cuda":
                continue
            for cc in ("3.7", "5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0", "12.1"):
                sm = "sm_" + cc.replace(".", "")
                assert cuda_arch_ok(cc, v.archs + v.ptx) is (cuda_covers(v, sm) is not None), (version, v.variant, cc)


def test_gtx1080ti_on_driver_535_can_use_torch_270(matrices):
    doc, _, _ = variant("torch.arch-missing")
    doc["nvidia"]["driver_version"] = doc["nvidia"]["module_version"] = "535.183.01"
    found = codes(diagnose(facts_of(doc), matrices, Target(torch="2.7.0")))
    assert "torch.arch-missing" not in found and "torch.driver-too-old" not in found


def test_rtx5090_with_torch_26_has_no_wheel(matrices):
    doc = base("doctor-healthy-cuda")
    doc["gpus"][0].update(pci_id="10de:2b85", name="NVIDIA GeForce RTX 5090", compute_capability="12.0",
                          architecture="Blackwell")  # fmt: skip
    f = finding(diagnose(facts_of(doc), matrices, Target(torch="2.6.0")), "torch.arch-missing")
    assert f.severity is Severity.ERROR and "sm_120" in f.title
    assert "torch.arch-missing" not in codes(diagnose(facts_of(doc), matrices, Target(torch="2.7.0")))


def test_minor_version_compatibility_keeps_an_older_driver_quiet(matrices):
    # a cu128 wheel on driver 550: CUDA 12 minor-version compatibility (>= 525) runs its cubins
    doc = base("doctor-healthy-cuda")
    doc["nvidia"]["driver_version"] = doc["nvidia"]["module_version"] = "550.163.01"
    assert "torch.driver-too-old" not in codes(diagnose(facts_of(doc), matrices, Target()))
    # ... but not PTX: a GB10 (12.1) that only a compute_120 PTX entry covers needs 570
    doc["gpus"][0].update(compute_capability="12.1", architecture="Blackwell", pci_id="10de:2e12")
    doc["python"]["torch"]["arch_list"] = ["sm_80", "sm_90", "compute_120"]
    f = finding(diagnose(facts_of(doc), matrices, Target()), "torch.driver-too-old")
    assert f.severity is Severity.ERROR and "PTX" in f.detail and "550.163.01" in f.detail


def test_driver_470_is_too_old_for_a_cu128_wheel(matrices):
    doc, _, _ = variant("torch.driver-too-old")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "torch.driver-too-old")
    assert "525.60.13" in f.detail and "470.256.02" in f.detail


def test_ld_library_path_at_the_wheels_own_version_is_fine(matrices):
    doc = base("doctor-healthy-cuda")
    doc["environment"]["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.8/lib64:/usr/local/cuda/lib64"
    assert "torch.ld-library-path" not in codes(diagnose(facts_of(doc), matrices, Target()))
    doc, _, _ = variant("torch.ld-library-path")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "torch.ld-library-path")
    assert "/usr/local/cuda-12.4/lib64 (CUDA 12.4)" in f.detail and "12.8" in f.detail


def test_unknown_environment_says_nothing_about_paths(matrices):
    doc = base("doctor-healthy-cuda")
    doc["environment"] = None
    found = codes(diagnose(facts_of(doc), matrices, Target()))
    assert not {"cuda.not-on-path", "torch.ld-library-path", "cuda.forward-compat-unsupported"} & set(found)


def test_hsa_override_advice_depends_on_support(matrices):
    doc, _, _ = variant("amd.hsa-override")  # RX 9070 XT (gfx1201) is supported: harmful
    f = finding(diagnose(facts_of(doc), matrices, Target()), "amd.hsa-override")
    assert f.fix.startswith("unset HSA_OVERRIDE_GFX_VERSION") and "supported natively" in f.detail
    doc["gpus"][0].update(pci_id="1002:73df", name="AMD Radeon RX 6700 XT", gfx_target="gfx1031")
    doc["environment"]["HSA_OVERRIDE_GFX_VERSION"] = "10.3.0"  # the same-family workaround
    f = finding(diagnose(facts_of(doc), matrices, Target()), "amd.hsa-override")
    assert "gfx1030" in f.detail and "same family" in f.detail and not f.fix.startswith("unset")


def test_point_release_is_an_rdna4_matter(matrices):
    doc, _, _ = variant("os.point-release")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "os.point-release")
    assert "24.04.1" in f.detail and "24.04.4" in f.title and f.gpus == ("0000:03:00.0",)
    doc["gpus"][0].update(pci_id="1002:74a1", name="AMD Instinct MI300X", gfx_target="gfx942",
                          architecture="CDNA3")  # fmt: skip
    assert "os.point-release" not in codes(diagnose(facts_of(doc), matrices, Target()))


def test_listed_hwe_kernel_is_supported_and_fixes_fit_the_series(matrices):
    doc = base("doctor-healthy-rocm")
    doc["kernel"]["release"] = "6.17.0-14-generic"
    doc["kernel"]["dkms"][0]["kernel"] = "6.17.0-14-generic"
    assert "kernel.unsupported" not in codes(diagnose(facts_of(doc), matrices, Target()))
    doc, _, _ = variant("kernel.unsupported")  # 6.11 on 24.04, ROCm 7.2.4 lists 6.8 and 6.17
    f = finding(diagnose(facts_of(doc), matrices, Target()), "kernel.unsupported")
    assert "6.11.0-29-generic" in f.detail and f.fix.startswith("sudo apt-get install linux-generic-hwe-24.04")
    doc["kernel"]["release"] = "6.14.0-37-generic"
    f = finding(diagnose(facts_of(doc), matrices, Target.parse("rocm@7.1.1")), "kernel.unsupported")
    assert f is None  # 7.1.1 lists 6.14 HWE
    doc["kernel"]["release"] = "6.17.0-14-generic"
    f = finding(diagnose(facts_of(doc), matrices, Target.parse("rocm@7.1.1")), "kernel.unsupported")
    assert f.fix.startswith("sudo apt-get install linux-generic ")


def test_persistence_is_not_asked_of_a_desktop(matrices):
    doc, _, _ = variant("nvidia.persistence-off")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "nvidia.persistence-off")
    assert "--persistence-mode" in f.fix and "0000:01:00.0" in f.detail
    doc["packages"]["installed"]["xserver-xorg-core"] = "2:21.1.12-1ubuntu1"
    assert "nvidia.persistence-off" not in codes(diagnose(facts_of(doc), matrices, Target()))


def test_ryzen_igpu_beside_an_nvidia_card_is_no_second_vendor(matrices):
    from gpuenv.resolve.torchpick import pick

    doc = base("doctor-healthy-cuda")
    doc["gpus"].append(raphael(gfx_target=None, sources=["sysfs"]))
    assert codes(diagnose(facts_of(doc), matrices, Target())) == {}
    choice = pick(facts_of(doc), matrices)
    assert choice.vendor == "nvidia" and choice.variant is not None
    assert any("integrated" in r for r in choice.reasons)


def test_libnvidia_compute_alone_is_no_driver(matrices):
    doc, _, _ = variant("nvidia.driver-missing")
    doc["packages"]["installed"]["libnvidia-compute-570"] = "570.133.07-0ubuntu1"
    found = codes(diagnose(facts_of(doc), matrices, Target()))
    assert found["nvidia.driver-missing"] == "error" and "nvidia.driver-not-loaded" not in found


def test_versions_are_shown_as_the_vendor_writes_them(matrices):
    doc, _, _ = variant("kernel.reboot-required")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "kernel.reboot-required")
    assert "loaded nvidia module 565.57.01" in f.detail and "570.133.07" in f.detail


def test_amdgpu_pairing_is_read_from_the_installed_package(matrices):
    from gpuenv.resolve.facts_view import dkms_release

    assert dkms_release("1:6.12.12.60401-2164967.22.04") == "6.4.1"
    assert dkms_release("1:6.16.6.30300400-2255209.24.04") == "30.30.4"
    doc, _, _ = variant("rocm.driver-mismatch")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "rocm.driver-mismatch")
    assert "amdgpu driver 6.2.4" in f.detail and "30.30.x" in f.title
    # the package is what runs: a repository file edited later does not make a mismatch
    doc = base("doctor-healthy-rocm")
    doc["apt_sources"][1]["uri"] = "https://repo.radeon.com/amdgpu/6.2.4/ubuntu"
    assert "rocm.driver-mismatch" not in codes(diagnose(facts_of(doc), matrices, Target()))


def test_leftovers_fix_names_the_packages_and_files(matrices):
    doc, _, _ = variant("stack.leftovers")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "stack.leftovers")
    assert f.fix.splitlines()[:2] == [
        "sudo apt-get -s purge cuda-toolkit-12-8  # simulate: check nothing else goes with them",
        "sudo apt-get purge cuda-toolkit-12-8",
    ]


def test_not_on_path_says_what_path_held(matrices):
    doc, _, _ = variant("cuda.not-on-path")
    f = finding(diagnose(facts_of(doc), matrices, Target()), "cuda.not-on-path")
    assert "PATH has no CUDA directory" in f.detail and "/usr/local/cuda-12.8/bin" in f.fix


def test_rocm_wheel_and_driver_window_comes_from_the_matrix(matrices):
    doc, _, _ = variant("torch.rocm-mismatch")  # a rocm6.3 wheel on amdgpu-dkms 30.30.4 (ROCm 7.2)
    f = finding(diagnose(facts_of(doc), matrices, Target()), "torch.rocm-mismatch")
    assert "30.30.4" in f.title and "6.3.x" in f.detail
    # PyTorch's wheels lag ROCm: ROCm 7.2 (driver 30.30) still lists 6.4 drivers, so a rocm6.4 wheel fits
    doc["python"]["torch"].update(version="2.9.0+rocm6.4", hip="6.4.43482")
    assert "torch.rocm-mismatch" not in codes(diagnose(facts_of(doc), matrices, Target()))


def test_quiet_where_the_judgement_does_not_apply(matrices):
    # an old Radeon display card on the legacy radeon driver in a CUDA box
    doc = base("doctor-healthy-cuda")
    doc["gpus"].append(raphael(pci_id="1002:68f9", name="Cedar [Radeon HD 5450]", integrated=False,
                               gfx_target=None, kernel_driver="radeon", pci_slot="0000:05:00.0"))  # fmt: skip
    assert "amd.driver-missing" not in codes(diagnose(facts_of(doc), matrices, Target()))
    # a CUDA container image on a CPU-only runner carries its stack on purpose
    doc, _, _ = variant("stack.leftovers")
    doc["platform"]["container"] = "docker"
    assert "stack.leftovers" not in codes(diagnose(facts_of(doc), matrices, Target()))
    # no source names AMD's suite for Debian 14: not judged. Debian 13's is noble (AMD's docs), so
    # jammy there is judged: its packages need what trixie lacks (libstdc++-11-dev, ROCm#4323).
    doc = base("doctor-healthy-rocm")
    doc["os"].update(id="debian", version_id="14", codename="forky", pretty_name="Debian GNU/Linux 14 (forky)")
    for src in doc["apt_sources"][1:]:
        src["suites"] = ["jammy"]
    assert "apt.source-mismatch" not in codes(diagnose(facts_of(doc), matrices, Target()))
    doc["os"].update(version_id="13", codename="trixie", pretty_name="Debian GNU/Linux 13 (trixie)")
    found = diagnose(facts_of(doc), matrices, Target())
    assert codes(found).get("apt.source-mismatch") == "error"
    assert any("expected noble" in f.detail for f in found.findings if f.code == "apt.source-mismatch")


PHOENIX = {"vendor": "amd", "pci_id": "1002:15bf", "name": "Phoenix1", "gfx_target": "gfx1103", "integrated": True}


def _apu_box(*gpus):
    doc = base("doctor-cpu-laptop")
    doc["gpus"] = [dict(g) for g in gpus]
    return facts_of(doc)


def test_an_apu_only_box_whose_gpu_no_rocm_lists_is_told_so(matrices):
    # Raphael (gfx1036): no release lists it; Phoenix (gfx1103) is listed by 7.14 and 10.0
    raphael = {**PHOENIX, "pci_id": "1002:164e", "name": "Raphael", "gfx_target": "gfx1036"}
    report = diagnose(_apu_box(raphael), matrices, Target())
    found = [f for f in report.findings if f.code == "amd.gpu-unsupported"]
    assert len(found) == 1
    f = found[0]
    assert f.severity is Severity.ERROR  # the catalog's severity for this code
    assert f.title == "No ROCm release lists gfx1036, this machine's only GPU"
    assert f"up to {matrices.default_rocm().version}, the default" in f.detail
    assert "run on the CPU" in f.detail and "HSA_OVERRIDE_GFX_VERSION" in f.fix


@pytest.mark.parametrize(
    "other",
    [
        {"vendor": "nvidia", "pci_id": "10de:2684", "name": "RTX 4090"},
        {"vendor": "amd", "pci_id": "1002:7550", "name": "RX 9070 XT", "gfx_target": "gfx1201", "integrated": False},
        {"vendor": "intel", "pci_id": "8086:56a0", "name": "Arc A770"},
    ],
)
def test_the_apu_rule_stays_silent_beside_another_gpu(matrices, other):
    report = diagnose(_apu_box(PHOENIX, other), matrices, Target())
    assert not [f for f in report.findings if f.code == "amd.gpu-unsupported" and "only GPU" in f.title]


def test_an_apu_the_default_release_lists_is_judged_against_it(matrices):
    """Strix Halo: listed for 7.1.1-7.2.4 by AMD's Ryzen pages (unconfirmed) and by the 7.14 / 10.0
    Ryzen tables (#29): the bare box is judged against the default release, which lists it."""
    strix = {**PHOENIX, "pci_id": "1002:1586", "name": "Strix Halo", "gfx_target": "gfx1151"}
    report = diagnose(_apu_box(strix), matrices, Target())
    # supported, on secondary sources only: said as information for install auto's pick (#42)
    found = [(f.severity, f.title) for f in report.findings if f.code == "amd.gpu-unsupported"]
    assert found == [(Severity.INFO, "ROCm 7.2.4's support for gfx1151 is not confirmed by AMD")]
    assert (report.target.stack, report.target.version) == ("rocm", "7.2.4")


def test_an_apu_a_rocm_release_lists_is_judged_as_install_auto_would(matrices):
    listed = next(g for g in sorted(matrices.default_rocm().gpus) if g.startswith("gfx11"))
    apu = {**PHOENIX, "gfx_target": listed}
    found = [f for f in diagnose(_apu_box(apu), matrices, Target()).findings if f.code == "amd.gpu-unsupported"]
    assert found == []


def _rocm_box(**os_fields):
    doc = base("doctor-healthy-rocm")
    doc["os"] = {"version_id": None, **os_fields}  # the schema requires version_id (null: not known)
    return facts_of(doc)


@pytest.mark.parametrize("target", ["rocm", "cuda"])
def test_an_unknown_distribution_is_not_unsupported(matrices, target):
    report = diagnose(_rocm_box(id="unknown"), matrices, Target.parse(target))
    assert "os.unsupported" not in codes(report)


def test_a_listed_distribution_without_its_release_is_not_judged(matrices):
    report = diagnose(_rocm_box(id="ubuntu"), matrices, Target.parse("rocm"))
    assert "os.unsupported" not in codes(report)


def test_the_release_is_read_from_pretty_name_when_version_id_is_left_out(matrices):
    """rocm-4323: a report shows only 'Debian GNU/Linux 13 (trixie)'; ROCm 6.3.1 lists Debian 12."""
    report = diagnose(
        _rocm_box(id="debian", codename="trixie", pretty_name="Debian GNU/Linux 13 (trixie)"),
        matrices,
        Target.parse("rocm@6.3.1"),
    )
    found = [f for f in report.findings if f.code == "os.unsupported"]
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "VERSION_ID=13" in found[0].detail and "debian 12" in found[0].detail
    listed = diagnose(
        _rocm_box(id="debian", pretty_name="Debian GNU/Linux 12 (bookworm)"), matrices, Target.parse("rocm@6.3.1")
    )
    assert "os.unsupported" not in codes(listed)


def test_an_unknown_kernel_is_not_an_unlisted_series(matrices):
    doc = base("doctor-healthy-rocm")
    doc["kernel"]["release"] = "unknown"
    assert "kernel.unsupported" not in codes(diagnose(facts_of(doc), matrices, Target.parse("rocm")))


@pytest.mark.parametrize("family", inventory.FAMILIES, ids=lambda f: f.prefixes[0])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_name_a_package_family_matches_starts_with_its_prefixes(family, data):
    # The prefixes decide whether the pattern is tried at all: a name it matches that none of
    # them starts would go uncounted (an installed driver called missing).
    name = data.draw(st.from_regex(family.pattern, fullmatch=True))
    assert name.startswith(family.prefixes)


def test_a_package_family_is_judged_from_its_candidates_only():
    doc = base("doctor-cpu-laptop")
    doc["packages"] = {"manager": "dpkg", "installed": {
        "linux-libc-dev": "6.1", "nvidia-driver-570": "570.133.07-0ubuntu1", "nvidia-settings": "570",
        "libnvidia-compute-570": "570.133.07", "cuda-toolkit-12-8": "12.8.1-1", "rocm-core": "7.2.4.70204-1",
        "hipcc": "1.1", "amdgpu-dkms": "6.16", "gdm3": "46"}}  # fmt: skip
    facts = from_dict(doc)
    assert inventory.nvidia_driver_packages(facts) == {
        "libnvidia-compute-570": "570.133.07", "nvidia-driver-570": "570.133.07-0ubuntu1"}  # fmt: skip
    assert inventory.cuda_toolkit_packages(facts) == {"cuda-toolkit-12-8": "12.8.1-1"}
    assert inventory.rocm_packages(facts) == {"hipcc": "1.1", "rocm-core": "7.2.4.70204-1"}
    assert inventory.amd_driver_packages(facts) == {"amdgpu-dkms": "6.16"}
    assert inventory.display_packages(facts) == {"gdm3": "46"}
    assert inventory.nvidia_dkms_packages(facts) == {}
