"""`gpuenv doctor` end to end: facts files, sysroots, this machine, named checks, usage errors,
many files in one process; every JSON output validated against gpuenv/schemas/report.schema.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner, app
from tests.doctor_cases import FACTS_DIR, variant
from tests.schemas import validate

ROOTS = Path(__file__).resolve().parent / "roots"
runner = CliRunner()

# What each sysroot machine (tests/roots, the probe's fixtures) must report, and nothing else
# at error/warning level.
ROOT_EXPECTED = {
    "ubuntu2404-rx9070xt-fresh": {
        "kernel.headers-missing", "amd.driver-missing", "os.point-release", "kernel.secure-boot",
    },
    "ubuntu2404-rx9070xt-igpu-rocm": {"amd.no-device-access", "amd.igpu-present"},
    "ubuntu2204-8xmi300x-rocm": set(),
    "ubuntu2404-rtx5090-driver570": {"torch.arch-missing"},
    "ubuntu2204-a100-nouveau": {
        "nvidia.nouveau-loaded", "nvidia.driver-missing", "kernel.headers-missing", "kernel.secure-boot",
    },
    "wsl2-ubuntu2404": set(),
    "docker-rocm-no-kfd": {"platform.container", "amd.kfd-missing"},
    "debian12-cuda-and-rocm-halfconfigured": {
        "dpkg.interrupted", "kernel.dkms-not-built", "apt.source-insecure", "stack.leftovers", "amd.gpu-preview",
    },
}  # fmt: skip


def run(*args: str):
    return runner.invoke(app, ["doctor", *args])


def write_variant(tmp_path: Path, code: str) -> Path:
    doc, _, _ = variant(code)
    path = tmp_path / f"{code}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("name", sorted(ROOT_EXPECTED))
def test_sysroot_end_to_end(name):
    root = ROOTS / name
    if not root.is_dir():
        pytest.skip(f"no sysroot fixture {name}")
    args = json.loads((ROOTS / f"{name}.args.json").read_text())
    cmd = ["doctor", "--root", str(root), "--json"]
    if args.get("user"):
        cmd += ["--user", args["user"]]
    if args.get("python"):
        cmd += ["--python", args["python"]]
    result = runner.invoke(app, cmd)
    report = json.loads(result.stdout)
    validate(report, "report")
    loud = {f["code"] for f in report["findings"] if f["severity"] != "info"}
    assert loud == ROOT_EXPECTED[name]
    assert result.exit_code == (1 if report["summary"]["error"] else 0)


def test_wsl_root_says_wsl():
    result = run("--root", str(ROOTS / "wsl2-ubuntu2404"), "--json")
    codes = [f["code"] for f in json.loads(result.stdout)["findings"]]
    assert "platform.wsl" in codes


def test_live_machine_json_validates():
    proc = subprocess.run(
        [sys.executable, "-m", "gpuenv", "doctor", "--json"], capture_output=True, text=True
    )
    assert proc.returncode in (0, 1), proc.stderr
    validate(json.loads(proc.stdout), "report")
    assert "Traceback" not in proc.stderr


def test_healthy_facts_get_a_calm_all_good():
    result = run("--facts", str(FACTS_DIR / "doctor-healthy-rocm.json"))
    assert result.exit_code == 0
    assert "All good" in result.stdout
    assert "RX 9070 XT" in result.stdout and "ROCm 7.2.4" in result.stdout
    assert "fix:" not in result.stdout


def test_problems_are_grouped_with_fixes_and_exit_1(tmp_path):
    result = run("--facts", str(write_variant(tmp_path, "nvidia.nouveau-loaded")))
    assert result.exit_code == 1
    assert "NVIDIA and CUDA" in result.stdout
    assert "blacklist nouveau" in result.stdout and "update-initramfs" in result.stdout


def test_named_check_runs_alone(tmp_path):
    path = write_variant(tmp_path, "dpkg.interrupted")
    path.write_text(
        json.dumps({**json.loads(path.read_text()), "errors": [{"probe": "dpkg", "message": "x"}]})
    )
    result = run("--facts", str(path), "--json", "dpkg.interrupted")
    report = json.loads(result.stdout)
    assert [f["code"] for f in report["findings"]] == ["dpkg.interrupted"]
    assert result.exit_code == 1


def test_ignore_drops_a_code(tmp_path):
    path = write_variant(tmp_path, "dpkg.interrupted")
    result = run("--facts", str(path), "--json", "--ignore", "dpkg.interrupted")
    assert "dpkg.interrupted" not in [f["code"] for f in json.loads(result.stdout)["findings"]]
    assert result.exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["no.such-code"],
        ["--ignore", "no.such-code"],
        ["--target", "opencl"],
        ["--target", "rocm@9.9.9"],
        ["--torch", "0.1.0"],
        ["--facts", "/nonexistent/facts.json"],
    ],
)
def test_usage_errors_exit_2(args):
    extra = [] if "--facts" in args else ["--facts", str(FACTS_DIR / "doctor-healthy-rocm.json")]
    result = run(*extra, *args)
    assert result.exit_code == 2
    assert result.stdout == ""


@pytest.mark.parametrize(
    "text", ["{", "[]", '{"schema": "gpuenv.facts/1"}', '{"schema": "other/1"}', "\xff\xfe"]
)
def test_malformed_facts_exit_2_without_traceback(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_bytes(text.encode("latin-1"))
    proc = subprocess.run(
        [sys.executable, "-m", "gpuenv", "doctor", "--facts", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and str(path) in proc.stderr
    assert proc.stdout == ""


def test_explicit_target_judges_against_it():
    healthy = str(FACTS_DIR / "doctor-healthy-rocm.json")
    report = json.loads(run("--facts", healthy, "--json", "--target", "rocm@6.2.4").stdout)
    assert report["target"] == {"stack": "rocm", "version": "6.2.4", "torch": None, "basis": "explicit"}
    # ROCm 6.2.4 predates gfx1201 (RX 9070 XT support came in 6.4.1).
    assert "amd.gpu-unsupported" in [f["code"] for f in report["findings"]]
    series = json.loads(run("--facts", healthy, "--json", "--target", "rocm@7.2").stdout)
    assert series["target"]["version"] == "7.2.4"


def test_torch_target_judges_that_release(tmp_path):
    doc, _, _ = variant("nvidia.module-flavor")  # an RTX 5090
    doc["nvidia"]["kernel_module"] = "open"
    path = tmp_path / "rtx5090.json"
    path.write_text(json.dumps(doc))
    old = json.loads(run("--facts", str(path), "--json", "--torch", "2.6.0").stdout)
    new = json.loads(run("--facts", str(path), "--json", "--torch", "2.7.0").stdout)
    assert "torch.arch-missing" in [f["code"] for f in old["findings"]]  # nothing in 2.6 has sm_120
    assert "torch.arch-missing" not in [f["code"] for f in new["findings"]]  # 2.7.0 cu128 does


def test_many_files_one_json_line_each(tmp_path):
    good = tmp_path / "a-healthy.json"
    good.write_text((FACTS_DIR / "doctor-healthy-cuda.json").read_text())
    write_variant(tmp_path, "dpkg.interrupted")
    result = run("--facts", str(tmp_path), "--json")
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    docs = [json.loads(line) for line in lines]
    for d in docs:
        validate(d, "report")
    assert [Path(d["source"]).name for d in docs] == ["a-healthy.json", "dpkg.interrupted.json"]
    assert result.exit_code == 1
    (tmp_path / "z-broken.json").write_text("{")
    result = run("--facts", str(tmp_path), "--json")
    docs = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(docs) == 3 and "error" in docs[2]
    validate(docs[2], "report")
    assert result.exit_code == 2


def test_many_files_human_summary(tmp_path):
    write_variant(tmp_path, "dpkg.interrupted")
    result = run("--facts", str(tmp_path), "--facts", str(FACTS_DIR / "doctor-healthy-rocm.json"))
    assert "dpkg.interrupted" in result.stdout and ": ok" in result.stdout


def test_list_names_every_code():
    from gpuenv.resolve.registry import all_checks

    result = run("--list")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == len(all_checks())


@pytest.mark.parametrize("path", sorted(FACTS_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_every_facts_fixture_renders_for_humans(path):
    # The human report (summary rows included) must survive facts that leave fields out, such as
    # a facts file written without NVML ("nvml" omitted): a traceback is never a verdict.
    result = run("--facts", str(path))
    assert result.exit_code in (0, 1, 5), result.output
    assert result.exit_code != 5 or "not judged:" in result.stdout, result.output  # 5: part was not judged
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "judged against" in result.stdout


def test_a_running_driver_without_packages_is_judged_as_installed():
    result = run("--facts", str(FACTS_DIR / "torch-rtx3090-470.json"), "--json")
    report = json.loads(result.stdout)
    assert report["target"]["basis"] == "installed" and report["target"]["stack"] == "cuda"
    assert not {"kernel.headers-missing", "kernel.secure-boot"} & {f["code"] for f in report["findings"]}
