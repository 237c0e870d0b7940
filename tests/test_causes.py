"""One cause, one error (#43): a finding that follows from another carries `cause`, is shown under
it in text and markdown, and is counted apart in the summary; nvidia.driver-missing and
nvidia.driver-not-loaded never stand together."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.render.report import counts_line, nested
from gpuenv.resolve import registry
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.report import diagnose
from tests.cli_runner import CliRunner, app
from tests.doctor_cases import base
from tests.schemas import validate

CASES = Path(__file__).resolve().parent / "cases"
# A GTX 1050 that driver branch 595 dropped: the GPU has no driver bound because of it.
DROPPED = CASES / "nixos-hardware-1880-gtx1050-ignored-by-595.71.facts.json"


@pytest.fixture(scope="module")
def matrices():
    return load()


def _report(doc_or_path, matrices, target=None):
    doc = json.loads(doc_or_path.read_text()) if isinstance(doc_or_path, Path) else doc_or_path
    return diagnose(from_dict(doc), matrices, Target.parse(target))


def test_a_driverless_gpu_that_the_branch_dropped_is_a_consequence(matrices):
    report = _report(DROPPED, matrices)
    by_code = {f.code: f for f in report.findings}
    assert by_code["gpu.no-driver"].cause == "nvidia.gpu-dropped"
    assert by_code["nvidia.gpu-dropped"].cause == ""
    s = report.summary()
    assert s["error"] == 1 and s["consequences"] == 1
    doc = report.to_dict()
    validate(doc, "report")
    assert [f.get("cause") for f in doc["findings"] if f["code"] == "gpu.no-driver"] == ["nvidia.gpu-dropped"]
    assert report.exit_code() == 1  # a consequence is still an error: the exit status does not soften


def test_the_summary_says_the_consequences_beside_the_errors():
    assert (
        counts_line({"error": 1, "warning": 3, "info": 0, "consequences": 2})
        == "1 error (+2 consequences), 3 warnings"
    )
    assert counts_line({"error": 2, "warning": 0, "info": 1}) == "2 errors, 1 info"


def test_text_and_markdown_show_the_consequence_under_its_cause(matrices):
    runner = CliRunner()
    text = runner.invoke(app, ["doctor", "--facts", str(DROPPED)]).output
    lines = text.splitlines()
    cause = next(i for i, line in enumerate(lines) if line.rstrip().endswith("nvidia.gpu-dropped"))
    follows = next(i for i, line in enumerate(lines) if "gpu.no-driver" in line)
    assert cause < follows and lines[follows].startswith("    ↳ ")
    assert "follows from nvidia.gpu-dropped" in lines[follows]
    assert lines[0].startswith("1 error (+1 consequence)")
    md = runner.invoke(app, ["doctor", "--facts", str(DROPPED), "--format", "markdown"]).output
    quoted = [line for line in md.splitlines() if "(`gpu.no-driver`)" in line]
    assert quoted and all(line.startswith("> ") for line in quoted)
    assert md.index("`nvidia.gpu-dropped`") < md.index("`gpu.no-driver`")


def test_grouping_puts_each_consequence_under_its_cause_only():
    cause = Finding(severity=Severity.ERROR, title="t", detail="", fix="", code="nvidia.gpu-dropped")
    other = Finding(severity=Severity.ERROR, title="t", detail="", fix="", code="nvidia.nouveau-loaded")
    after = Finding(
        severity=Severity.ERROR, title="t", detail="", fix="", code="gpu.no-driver", cause=cause.code
    )
    rows = [row for _, rs in nested([cause, other, after]) for row in rs]
    assert (cause, [after]) in rows and (other, []) in rows and len(rows) == 2


def test_a_consequence_of_another_gpus_trouble_is_not_nested():
    dropped = Finding(
        severity=Severity.ERROR,
        title="t",
        detail="",
        fix="",
        gpus=("0000:01:00.0",),
        code="nvidia.gpu-dropped",
    )
    elsewhere = Finding(
        severity=Severity.ERROR, title="t", detail="", fix="", gpus=("0000:02:00.0",), code="gpu.no-driver"
    )
    same = Finding(
        severity=Severity.ERROR, title="t", detail="", fix="", gpus=("0000:01:00.0",), code="gpu.no-driver"
    )
    out = registry.nest([dropped, elsewhere, same])
    assert [f.cause for f in out] == ["", "", "nvidia.gpu-dropped"]


def test_a_warning_is_no_cause():
    warned = Finding(severity=Severity.WARNING, title="t", detail="", fix="", code="kernel.secure-boot")
    unloaded = Finding(severity=Severity.ERROR, title="t", detail="", fix="", code="nvidia.driver-not-loaded")
    assert [f.cause for f in registry.nest([warned, unloaded])] == ["", ""]
    refused = Finding(severity=Severity.ERROR, title="t", detail="", fix="", code="kernel.secure-boot")
    assert [f.cause for f in registry.nest([refused, unloaded])] == ["", "kernel.secure-boot"]


def test_every_follows_names_a_registered_check_and_none_follows_itself():
    checks = registry.all_checks()
    names = {c.name: c.code for c in checks}
    for c in checks:
        for name in c.follows:
            assert name in names, f"{c.code} follows {name}, which is no check"
            assert names[name] != c.code


def test_installed_but_not_loaded_is_never_also_missing(matrices):
    """NVML's own 'driver not loaded' (its library is installed) and no driver package in the list
    (a runfile or akmods install): driver-not-loaded, never driver-missing beside it."""
    doc = base("doctor-healthy-cuda")
    doc["packages"]["installed"] = {"linux-image-6.8.0-79-generic": "6.8.0-79.79"}
    doc["nvidia"] = {"nvml": "driver_not_loaded"}
    doc["kernel"]["modules_loaded"] = [
        m for m in doc["kernel"]["modules_loaded"] if not m.startswith("nvidia")
    ]
    codes = [f.code for f in _report(doc, matrices).findings]
    assert "nvidia.driver-not-loaded" in codes and "nvidia.driver-missing" not in codes



def test_nvml_saying_not_loaded_is_an_installed_driver_for_every_check(matrices):
    """NVML's 'driver not loaded' on a box whose package list is not known and whose GPU no driver
    took: one reading (facts_view.nvml_unloaded) for driver-missing, driver-not-loaded and
    gpu.no-driver, so the report says driver-not-loaded alone."""
    doc = base("doctor-healthy-cuda")
    doc.pop("packages")
    doc["nvidia"] = {"nvml": "driver_not_loaded"}
    doc["gpus"][0]["driver_bound"] = False
    doc["gpus"][0].pop("kernel_driver", None)
    doc["kernel"]["modules_loaded"] = [m for m in doc["kernel"]["modules_loaded"] if not m.startswith("nvidia")]
    codes = [f.code for f in _report(doc, matrices).findings if f.severity is Severity.ERROR]
    assert codes == ["nvidia.driver-not-loaded"]

def test_secure_boot_refusing_the_module_is_the_cause_of_the_unloaded_driver(matrices):
    """fedora-nvautoinstall-75: Secure Boot on, NVML says the driver is not loaded, nouveau holds the GPU."""
    report = _report(CASES / "fedora-nvautoinstall-75-secure-boot-blocks-akmod-nvidia.facts.json", matrices)
    by_code = {f.code: f for f in report.findings}
    assert (
        by_code["kernel.secure-boot"].severity is Severity.ERROR and not by_code["kernel.secure-boot"].cause
    )
    assert by_code["nvidia.driver-not-loaded"].cause == "kernel.secure-boot"
    assert by_code["nvidia.nouveau-loaded"].cause == "kernel.secure-boot"
    assert report.summary()["error"] == 1



def test_a_container_without_kfd_mapped_is_one_cause(matrices):
    """A ROCm container run without --device /dev/kfd: platform.container's error is the cause (its fix
    maps the node in), amd.kfd-missing its consequence; one error. Outside a container an absent
    /dev/kfd stands alone (the kernel's compute interface failed)."""
    from gpuenv.probe import collect

    root = Path(__file__).resolve().parent / "roots" / "docker-rocm-no-kfd"
    report = diagnose(collect(root=str(root)), matrices, Target.parse(None))
    by_code = {f.code: f for f in report.findings}
    assert by_code["platform.container"].severity is Severity.ERROR and not by_code["platform.container"].cause
    assert by_code["amd.kfd-missing"].cause == "platform.container"
    assert report.summary()["error"] == 1
    doc = base("doctor-healthy-rocm")
    doc["amd"]["kfd"] = False
    alone = {f.code: f for f in _report(doc, matrices).findings}
    assert "platform.container" not in alone and not alone["amd.kfd-missing"].cause


def test_nouveau_on_a_gpu_with_no_nvidia_driver_follows_the_missing_driver(matrices):
    """No NVIDIA driver at all: nouveau binds the GPU by default, so the missing driver is the one
    error and nouveau its consequence (the driver's plan blacklists it). With the driver installed
    (NVML answers), nouveau holding the GPU stands alone."""
    from gpuenv.probe import collect

    root = Path(__file__).resolve().parent / "roots" / "ubuntu2204-a100-nouveau"
    report = diagnose(collect(root=str(root)), matrices, Target.parse(None))
    by_code = {f.code: f for f in report.findings}
    assert not by_code["nvidia.driver-missing"].cause
    assert by_code["nvidia.nouveau-loaded"].cause == "nvidia.driver-missing"
    assert report.summary()["error"] == 1
    doc = base("doctor-healthy-cuda")
    doc["gpus"][0]["kernel_driver"] = "nouveau"
    alone = {f.code: f for f in _report(doc, matrices).findings}
    assert "nvidia.driver-missing" not in alone and not alone["nvidia.nouveau-loaded"].cause

def test_findings_md_documents_the_nesting_as_declared():
    text = (Path(__file__).resolve().parent.parent / "FINDINGS.md").read_text()
    rows = re.findall(r"^\| `([a-z0-9]+\.[a-z0-9-]+)` \| (.+) \|$", text, flags=re.M)
    documented = {code: re.findall(r"[a-z0-9]+\.[a-z0-9]+(?:-[a-z0-9]+)*", under.split(" (")[0]) for code, under in rows}
    checks = registry.all_checks()
    code_of = {c.name: c.code for c in checks}
    declared = {c.code: [code_of[n] for n in c.follows] for c in checks if c.follows}
    assert documented == declared


def test_the_fleet_page_shows_the_consequence_under_its_cause_and_counts_one_error(matrices, tmp_path):
    from gpuenv.fleet import build
    from gpuenv.render.fleet import fleet_html

    (tmp_path / "gtx1050.doctor.json").write_text(json.dumps(_report(DROPPED, matrices).to_dict()))
    fleet = build([str(tmp_path)], max_age_days=3650.0)
    (host,) = fleet.hosts
    assert host.count("error") == 1 and host.to_dict()["summary"]["error"] == 1
    page = fleet_html(fleet)
    cell = page[page.index('<ul class="codes">') :]
    cell = cell[: cell.index("</td>")]
    assert cell.index("nvidia.gpu-dropped") < cell.index('<li class="consequence">↳ gpu.no-driver</li>')
    assert cell.count("gpu.no-driver") == 1


@pytest.mark.parametrize("answered", [{"cuda_driver_version": "12.2"}, {"driver_version": "535.183.01"}, None])
def test_no_gpu_in_the_list_while_the_driver_answers_is_not_no_gpu(matrices, answered):
    """open-webui-docs-507: nvidia-smi's header is all a report shows; the GPU list is empty because
    nobody read the bus, not because there is no GPU."""
    doc = base("doctor-healthy-cuda")
    doc["gpus"] = []
    doc["nvidia"] = answered
    if answered is None:
        del doc["nvidia"]
    codes = {f.code: f for f in _report(doc, matrices, "cuda@12.8").findings}
    if answered is None:
        assert codes["gpu.none"].severity is Severity.ERROR
    else:
        assert "gpu.none" not in codes


def test_a_torch_release_without_rocm_builds_is_wrong_vendor_not_arch_missing(matrices):
    """pytorch-51213: torch 1.6.0 (no official ROCm build existed) on an AMD-only machine."""
    report = _report(CASES / "pytorch-51213-amd-raven-apu-cuda-torch-installed.facts.json", matrices)
    codes = [f.code for f in report.findings]
    assert "torch.wrong-vendor" in codes and "torch.arch-missing" not in codes
    doc = json.loads((CASES / "pytorch-51213-amd-raven-apu-cuda-torch-installed.facts.json").read_text())
    doc["python"]["torch"]["version"] = "2.4.0"  # ROCm builds existed: which one this is, arch-missing judges
    assert "torch.wrong-vendor" not in [f.code for f in _report(doc, matrices).findings]
