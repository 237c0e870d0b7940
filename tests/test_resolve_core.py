"""The resolver's machinery: the registry loop (crashes, needs, only/ignore), the target choice,
blockers, and the conditional severities of findings.md."""

from __future__ import annotations

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve import registry
from gpuenv.resolve.blockers import blockers
from gpuenv.resolve.checks.torch import cuda_arch_ok
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.registry import check, run_checks
from gpuenv.resolve.report import diagnose
from gpuenv.resolve.target import choose_auto, effective_target
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
    assert [f.code for f in blockers(facts_of(doc), matrices, Target.parse("rocm"))] == [
        "platform.arch-unsupported"
    ]
    fresh, _, _ = variant("amd.driver-missing")  # the install brings the driver: not a blocker
    assert blockers(facts_of(fresh), matrices, Target.parse("rocm")) == []


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
        ("12.0", ["sm_90", "compute_90"], True),  # PTX JIT
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
