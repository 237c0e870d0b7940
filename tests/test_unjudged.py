"""What the doctor could not judge is said, never passed as "All good" (issue 26): ROCm and CUDA
releases, distributions and GPUs the matrices do not know; GPU support across releases; `auto`
choosing the release that fits the machine; evidence a container or Secure Boot leaves."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuenv.exitcodes import Exit
from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.plan import planner, repos
from gpuenv.plan.plan import Action, Request
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.registry import not_judged_codes
from gpuenv.resolve.report import diagnose
from gpuenv.resolve.target import choose_auto
from tests.cli_runner import CliRunner, app
from tests.doctor_cases import FACTS_DIR, base

runner = CliRunner()

RADEON_VII = {"vendor": "amd", "pci_id": "1002:66af", "pci_slot": "0000:03:00.0", "name": "AMD Radeon VII",
              "gfx_target": "gfx906", "integrated": False, "kernel_driver": "amdgpu"}  # fmt: skip
RX5500 = {"vendor": "amd", "pci_id": "1002:7340", "pci_slot": "0000:03:00.0", "name": "AMD Radeon RX 5500 XT",
          "gfx_target": "gfx1012", "integrated": False, "kernel_driver": "amdgpu"}  # fmt: skip


@pytest.fixture(scope="module")
def m():
    return load()


def judge(doc, m, target=None):
    return diagnose(from_dict(doc), m, Target.parse(target))


def codes(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f)
    return out


def rocm_box(version: str, os_id: str, os_version: str | None, gpu: dict, kernel: str) -> dict:
    doc = base("doctor-healthy-rocm")
    doc["os"] = {"id": os_id, "version_id": os_version, "pretty_name": f"{os_id} {os_version or ''}".strip()}
    doc["kernel"]["release"] = kernel
    doc["gpus"] = [copy.deepcopy(gpu)]
    doc["toolkits"]["rocm"] = [{"version": version, "path": "/opt/rocm", "source": "package"}]
    doc["packages"]["installed"] = {
        n: v for n, v in doc["packages"]["installed"].items() if not n.startswith(("rocm", "amdgpu"))
    }
    doc["kernel"]["dkms"] = []
    doc["python"] = None
    return doc


def test_rocm_4_1_on_tumbleweed_with_a_radeon_vii_is_not_judged_and_says_why(m):
    report = judge(rocm_box("4.1.0", "opensuse-tumbleweed", "20210330", RADEON_VII, "5.11.6-1-default"), m)
    found = codes(report)
    assert report.exit_code() is Exit.NOT_JUDGED
    [unknown] = found["rocm.release-unknown"]
    assert unknown.severity is Severity.WARNING
    assert "4.1.0 is older than the oldest release the matrices know (5.0.0)" in unknown.detail
    assert "opensuse-tumbleweed" in unknown.detail and "5.11.6-1-default" in unknown.detail
    assert "gfx906: the newest ROCm release that lists it is 6.3.3 (deprecated" in unknown.detail
    assert "amd.gpu-unsupported" not in found  # 5.x lists gfx906: nothing says the GPU is unsupported
    assert report.target.extra["installed"] == "4.1.0" and report.target.version is None


def test_rocm_3_10_with_an_rx_5500_says_no_release_supports_gfx1012(m):
    report = judge(rocm_box("3.10.0", "ubuntu", "20.04", RX5500, "5.4.0-58-generic"), m)
    found = codes(report)
    assert report.exit_code() is Exit.NOT_JUDGED
    [gpu] = found["amd.gpu-unsupported"]
    assert gpu.severity is Severity.WARNING  # whether 3.10 served it is not known
    assert "no release from 5.0.0 to 10.1.0 lists gfx1012" in gpu.detail
    assert "no ROCm release the matrices know (5.0.0 to 10.1.0) lists it" in found["rocm.release-unknown"][0].detail


def test_the_cli_never_says_all_good_and_exits_5_when_something_was_not_judged(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(rocm_box("4.1.0", "opensuse-tumbleweed", "20210330", RADEON_VII, "5.11.6")))
    result = runner.invoke(app, ["doctor", "--facts", str(path)])
    assert result.exit_code == 5
    first = result.stdout.splitlines()[0]
    assert "All good" not in result.stdout
    assert "not judged: rocm.release-unknown" in first
    assert "ROCm 4.1.0 (installed, not in the matrices: not judged)" in first


def test_a_newer_rocm_than_the_matrices_know_asks_for_a_matrix_update(m):
    # a hypothetical 10.2.0 (no source names it), past the newest bundled 10.1.0 (#29)
    report = judge(rocm_box("10.2.0", "ubuntu", "24.04", RADEON_VII, "6.8.0-51-generic"), m)
    [unknown] = codes(report)["rocm.release-unknown"]
    assert "newer than the newest release the matrices know (10.1.0)" in unknown.detail
    assert unknown.fix.startswith("gpuenv matrix update")


def test_a_rocm_whose_version_cannot_be_read_is_not_judged(m):
    doc = rocm_box("7.2.4", "ubuntu", "24.04", RADEON_VII, "6.8.0-51-generic")
    doc["toolkits"]["rocm"] = []
    doc["packages"]["installed"]["rocm-hip-runtime"] = "unknown"
    report = judge(doc, m)
    assert "could not be read" in codes(report)["rocm.release-unknown"][0].detail
    assert report.exit_code() is Exit.NOT_JUDGED


@pytest.mark.parametrize("version, why", [("7.5.18", "older than the oldest"), ("14.2.0", "newer than the newest")])
def test_a_cuda_toolkit_outside_the_matrices_is_not_judged(m, version, why):
    doc = base("doctor-healthy-cuda")
    doc["toolkits"]["cuda"] = [{"version": version, "path": f"/usr/local/cuda-{version[:4]}", "source": "package"}]
    doc["python"] = None
    report = judge(doc, m)
    [unknown] = codes(report)["cuda.release-unknown"]
    assert why in unknown.detail
    assert report.exit_code() is Exit.NOT_JUDGED


@pytest.mark.parametrize("base_name", ["doctor-healthy-rocm", "doctor-healthy-cuda"])
def test_an_os_the_facts_do_not_name_is_not_judged(m, base_name):
    doc = base(base_name)
    doc["os"] = {"id": "unknown", "version_id": None}
    report = judge(doc, m)
    assert "the facts do not say which distribution" in codes(report)["os.unknown"][0].detail
    assert report.exit_code() is Exit.NOT_JUDGED


def test_healthy_machines_still_exit_0(m):
    for name in ("doctor-healthy-rocm", "doctor-healthy-cuda", "doctor-cpu-laptop"):
        report = judge(base(name), m)
        assert report.exit_code() is Exit.OK and not report.unjudged(), name


# -- GPU support across releases, and the deprecated level ------------------------------------


def test_an_unsupported_gpu_names_the_newest_release_that_supports_it(m):
    report = judge(rocm_box("6.4.0", "ubuntu", "24.04", RADEON_VII, "6.8.0-51-generic"), m)
    [gpu] = codes(report)["amd.gpu-unsupported"]
    assert gpu.severity is Severity.ERROR
    assert "the newest ROCm release that lists it is 6.3.3" in gpu.detail
    assert "--version 6.3.3" in gpu.fix


@pytest.mark.parametrize("version", ["6.0.2", "6.2.4", "6.3.3"])
def test_an_mi50_on_rocm_6_0_to_6_3_is_deprecated_not_unsupported(m, version):
    mi50 = {**RADEON_VII, "pci_id": "1002:66a1", "name": "AMD Instinct MI50"}
    report = judge(rocm_box(version, "ubuntu", "22.04", mi50, "5.15.0-131-generic"), m)
    found = codes(report)
    assert "amd.gpu-unsupported" not in found
    [old] = found["amd.gpu-deprecated"]
    assert old.severity is Severity.WARNING and "Deprecated" in old.detail
    assert report.exit_code() is not Exit.PROBLEMS or any(f.code != "amd.gpu-deprecated" for f in report.findings
                                                          if f.severity is Severity.ERROR)  # fmt: skip


# -- auto fits the machine ---------------------------------------------------------------------


def mi50_box() -> dict:
    return json.loads((FACTS_DIR / "rocm-auto-ubuntu2204-mi50.json").read_text())


def test_auto_and_the_doctor_choose_a_release_that_supports_the_mi50(m):
    facts = from_dict(mi50_box())
    assert choose_auto(facts, m).version == "6.3.3"
    report = diagnose(facts, m, Target())
    assert report.target.version == "6.3.3" and report.target.extra["basis"] == "auto"
    assert "amd.gpu-unsupported" not in codes(report)
    plan = planner.make_plan(facts, m, repos.load(), Request(action=Action.INSTALL, stack="rocm"))
    assert plan.target.version == "6.3.3" and "amd.gpu-unsupported" not in plan.blockers
    assert any(n.startswith("amd.gpu-deprecated: ROCm 6.3.3 supports gfx906 as deprecated") for n in plan.notes)
    lists = "".join(s.content for s in plan.steps if s.content and "repo.radeon.com" in s.content)
    assert "https://repo.radeon.com/rocm/apt/6.3.3 jammy main" in lists and "/graphics/" not in lists


def test_install_auto_dry_run_plans_rocm_6_3_3_for_an_mi50_and_names_the_level():
    result = runner.invoke(app, ["install", "auto", "--dry-run", "--facts", str(FACTS_DIR / "rocm-auto-ubuntu2204-mi50.json")])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "install rocm 6.3.3" in result.stdout
    assert "supports gfx906 as deprecated" in result.stdout


def test_a_supported_gpu_keeps_the_default_release(m):
    assert choose_auto(from_dict(base("doctor-healthy-rocm")), m).version == m.default_rocm().version


# -- evidence ----------------------------------------------------------------------------------


def cuda_container(cuda_driver: str, torch_cuda: str) -> dict:
    doc = base("doctor-healthy-cuda")
    doc["platform"]["container"] = "docker"
    doc["nvidia"] = {"cuda_driver_version": cuda_driver}
    doc["packages"]["installed"] = {n: v for n, v in doc["packages"]["installed"].items() if "nvidia" not in n}
    doc["kernel"]["dkms"] = []
    doc["python"]["torch"] = {"version": f"2.1.0+cu{torch_cuda.replace('.', '')}", "cuda": torch_cuda, "hip": None,
                              "arch_list": None}  # fmt: skip
    return doc


def test_a_driver_known_only_by_its_cuda_version_is_too_old_for_a_newer_major(m):
    report = judge(cuda_container("11.0", "12.1"), m)
    [old] = codes(report)["torch.driver-too-old"]
    assert old.severity is Severity.ERROR and "supports CUDA 11.0" in old.title


@pytest.mark.parametrize("cuda_driver", ["12.0", "12.2"])
def test_minor_version_compatibility_covers_the_same_major(m, cuda_driver):
    assert "torch.driver-too-old" not in codes(judge(cuda_container(cuda_driver, "12.1"), m))


def toolkit_target_box(cuda_driver: str) -> dict:
    doc = cuda_container(cuda_driver, "12.1")
    doc["python"] = None
    doc["toolkits"]["cuda"] = []
    doc["packages"]["installed"] = {n: v for n, v in doc["packages"]["installed"].items() if not n.startswith("cuda")}
    return doc


def test_a_driver_known_only_by_its_cuda_version_is_too_old_for_a_newer_cuda_target(m):
    # open-webui/docs#507: a driver that supports CUDA 12.2 and an image that requires cuda>=12.8
    [old] = codes(judge(toolkit_target_box("12.2"), m, "cuda@12.8"))["nvidia.driver-too-old"]
    assert old.severity is Severity.ERROR and "supports CUDA 12.2, older than CUDA 12.8" in old.title
    assert "Minor-version compatibility" in old.detail and "cuda>=12.8" in old.detail
    [old] = codes(judge(toolkit_target_box("11.4"), m, "cuda@12.8"))["nvidia.driver-too-old"]
    assert "Minor-version compatibility" not in old.detail


@pytest.mark.parametrize("cuda_driver", ["12.8", "12.9", "13.0"])
def test_a_driver_that_supports_the_target_cuda_is_not_too_old(m, cuda_driver):
    assert "nvidia.driver-too-old" not in codes(judge(toolkit_target_box(cuda_driver), m, "cuda@12.8"))


def test_secure_boot_is_the_error_when_an_installed_nvidia_driver_is_not_loaded(m):
    doc = base("doctor-healthy-cuda")
    doc["kernel"]["secure_boot"] = True
    doc["kernel"]["dkms"] = None  # `dkms status` not in the facts
    doc["kernel"]["modules_loaded"] = [x for x in doc["kernel"]["modules_loaded"] if not x.startswith("nvidia")]
    doc["nvidia"] = None
    [sb] = codes(judge(doc, m))["kernel.secure-boot"]
    assert sb.severity is Severity.ERROR and "not loaded" in sb.title


def test_no_gpu_at_all_does_not_send_one_target_to_the_other(m):
    for target in ("rocm", "cuda"):
        [none] = codes(judge(base("doctor-cpu-laptop"), m, target))["gpu.none"]
        assert "--target" in none.fix and "Target the stack of the GPUs present" not in none.fix
        assert "No NVIDIA or AMD GPU is present" in none.fix


def test_a_many_files_run_exits_with_errors_before_unjudged(tmp_path):
    unjudged = rocm_box("4.1.0", "opensuse-tumbleweed", "20210330", RADEON_VII, "5.11.6")
    broken = base("doctor-healthy-rocm")
    broken["gpus"][0]["kernel_driver"] = None
    broken["kernel"]["modules_loaded"] = []
    (tmp_path / "a.json").write_text(json.dumps(unjudged))
    assert runner.invoke(app, ["doctor", "--facts", str(tmp_path)]).exit_code == 5
    (tmp_path / "b.json").write_text(json.dumps(broken))
    assert runner.invoke(app, ["doctor", "--facts", str(tmp_path)]).exit_code == 1


# -- the property ------------------------------------------------------------------------------

KNOWN_OS = {"ubuntu", "debian", "rhel", "sles", "ol", "centos", "rocky", "azurelinux", "almalinux", "fedora",
            "opensuse-leap", "amzn"}  # fmt: skip
# Older than the oldest bundled ROCm (5.0) or newer than the newest (read from the data: the
# newest moves as releases are added).
_NEWEST_ROCM_MAJOR = int(load().rocm_releases()[-1].version.split(".")[0])
outside_rocm = st.one_of(
    st.tuples(st.integers(1, 4), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.integers(_NEWEST_ROCM_MAJOR + 1, _NEWEST_ROCM_MAJOR + 20), st.integers(0, 9), st.integers(0, 9)),
).map(lambda t: ".".join(map(str, t)))
outside_cuda = st.one_of(
    st.tuples(st.integers(1, 7), st.integers(0, 5)), st.tuples(st.integers(14, 40), st.integers(0, 9))
).map(lambda t: f"{t[0]}.{t[1]}.0")
outside_os = st.from_regex(r"[a-z]{3,12}", fullmatch=True).filter(lambda s: s not in KNOWN_OS)
outside_pci = st.integers(0xE000, 0xEFFF).map(lambda n: f"{n:04x}")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    stack=st.sampled_from(["rocm", "cuda"]),
    what=st.sets(st.sampled_from(["stack", "os", "gpu"]), min_size=1),
    rocm=outside_rocm,
    cuda=outside_cuda,
    os_id=outside_os,
    pci=outside_pci,
)
def test_nothing_outside_the_matrices_gets_all_good_or_exit_0_unsaid(stack, what, rocm, cuda, os_id, pci):
    m = load()
    doc = base("doctor-healthy-rocm" if stack == "rocm" else "doctor-healthy-cuda")
    said = set()
    if "stack" in what:
        if stack == "rocm":
            doc["toolkits"]["rocm"][0]["version"] = rocm
            for name in [n for n in doc["packages"]["installed"] if n.startswith("rocm")]:
                doc["packages"]["installed"][name] = rocm
            said.add("rocm.release-unknown")
        else:
            doc["toolkits"]["cuda"][0]["version"] = cuda
            said.add("cuda.release-unknown")
    if "os" in what:
        doc["os"] = {"id": os_id, "version_id": "1", "pretty_name": os_id}
        said.add("os")
    if "gpu" in what:
        vendor = doc["gpus"][0]["pci_id"].split(":")[0]
        doc["gpus"][0]["pci_id"] = f"{vendor}:{pci}"
        said.add("gpu.unknown")
    report = diagnose(from_dict(doc), m, Target())
    found = {f.code for f in report.findings if f.severity is not Severity.INFO}
    assert report.exit_code() is not Exit.OK
    assert found  # so the summary line is no "All good"
    for code in said - {"os"}:
        assert code in found, (code, sorted(found))
    if "os" in said and "rocm.release-unknown" not in found:
        assert found & {"os.unsupported", "os.unknown"}, sorted(found)
    # Nothing unjudged hides behind exit 1: the unjudged findings are in the report either way.
    assert set(said - {"os"}) <= {f.code for f in report.findings if f.code in not_judged_codes()}


def test_a_driver_beside_a_release_whose_pairing_the_matrices_lack_is_not_judged(m, tmp_path):
    """A bundle (an older or hand-made one, `matrix update`) holding a release without its amdgpu
    driver list: an installed amdgpu-dkms beside it is said to be unjudged, never passed silently;
    the bundled data, which has the list, judges it instead."""
    import shutil

    import gpuenv.matrices as M

    bundle = tmp_path / "bundle"
    shutil.copytree(M.bundled_dir(), bundle)
    doc = json.loads((bundle / "rocm.json").read_text())
    [rel] = [r for r in doc["releases"] if r["version"] == "10.1.0"]
    rel["amdgpu_driver"], rel["amdgpu_driver_compat"] = None, []
    (bundle / "rocm.json").write_text(json.dumps(doc))
    lacking = M.parse_dir(bundle, "installed")
    doc = base("doctor-healthy-rocm")
    doc["toolkits"]["rocm"] = [{"version": "10.1.0", "path": "/opt/rocm/core-10.1", "source": "package", "stream": "therock"}]
    found = codes(judge(doc, lacking))
    [unjudged] = found["rocm.driver-unjudged"]
    assert unjudged.title.startswith("amdgpu driver ") and "not judged against ROCm 10.1.0" in unjudged.title
    assert "amdgpu-dkms" in unjudged.detail and "was not checked" in unjudged.detail
    assert "rocm.driver-mismatch" not in found and "rocm.driver-unjudged" in not_judged_codes()
    # the bundled 10.1.0 pairs with 31.60.x: the 7.2-era driver of this box is a mismatch there
    found = codes(judge(doc, m))
    assert "rocm.driver-unjudged" not in found and "31.60.x" in found["rocm.driver-mismatch"][0].title
    # no driver package installed: nothing to judge, nothing said
    doc["packages"]["installed"] = {n: v for n, v in doc["packages"]["installed"].items() if not n.startswith("amdgpu")}
    assert "rocm.driver-unjudged" not in codes(judge(doc, lacking))
