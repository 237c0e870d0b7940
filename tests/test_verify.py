"""`gpuenv verify`, run through the CLI against a stand-in PyTorch (tests/verify/standin/torch).

This box has no GPU. Each case puts the stand-in on the import path of a bare venv's interpreter
(a .pth file; no torch of its own) with a config.json describing the machine it plays, and points
--root at a sysroot fixture (tests/roots/) whose PCI bus holds the GPUs the case's torch should
see; ROCm cases copy the sysroot so that their device nodes can be removed or replaced. The
checks are the real ones: a real subprocess, real timeouts and signals, the real judge.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.verify.codes import CODES
from gpuenv.verify.judge import judge
from gpuenv.verify.results import TOLERANCE, Outcome
from gpuenv.verify.script import SCRIPT, SIZE
from tests.cli_runner import invoke
from tests.schemas import validate

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "verify" / "standin" / "torch"
ROOTS = HERE / "roots"
RTX5090 = ROOTS / "ubuntu2404-rtx5090-driver570"  # one RTX 5090 (sm_120), nvidia 570 bound
MI300X = ROOTS / "ubuntu2204-8xmi300x-rocm"  # eight MI300X (gfx942), /dev/kfd, eight render nodes
RX9070 = ROOTS / "ubuntu2404-rx9070xt-igpu-rocm"  # RX 9070 XT (gfx1201) and a Raphael iGPU

CUDA_BUILD = {"version": "2.7.0+cu128", "cuda": "12.8", "hip": None,
              "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]}  # fmt: skip
ROCM_BUILD = {"version": "2.7.0+rocm6.3", "cuda": None, "hip": "6.3.42131",
              "arch_list": ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101"]}  # fmt: skip
RTX = {"name": "NVIDIA GeForce RTX 5090", "capability": [12, 0], "memory_mib": 32607}
MI = {"name": "AMD Instinct MI300X", "gcn_arch": "gfx942:sramecc+:xnack-", "memory_mib": 196592}
NAVI48 = {"name": "AMD Radeon RX 9070 XT", "gcn_arch": "gfx1201", "memory_mib": 16304}


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory) -> str:
    """An interpreter with no torch of its own (a venv without pip: made in a blink)."""
    venv = tmp_path_factory.mktemp("venv") / "py"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def standin(tmp_path: Path, **config) -> str:
    """An import path entry holding the stand-in torch, playing ``config``."""
    site = tmp_path / "site"
    shutil.copytree(STANDIN, site / "torch", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "torch" / "config.json").write_text(json.dumps(config))
    return str(site)


def copy_root(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "root"
    shutil.copytree(src, dest, symlinks=True)
    return dest


def verify(python: str, site: str | None, *args, env: dict | None = None):
    full = {"PYTHONPATH": None, "CUDA_VISIBLE_DEVICES": None, "HIP_VISIBLE_DEVICES": None,
            "ROCR_VISIBLE_DEVICES": None, "HSA_OVERRIDE_GFX_VERSION": None, **(env or {})}  # fmt: skip
    # On the venv's import path through a .pth file: a root verify ignores PYTHONPATH.
    venv = Path(python).parent.parent
    pth = [p / "standin.pth" for p in venv.glob("lib/python3*/site-packages")] if site else []
    for path in pth:
        path.write_text(f"{site}\n")
    try:
        result = invoke(["verify", "--python", python, *map(str, args)], env=full)
    finally:
        for path in pth:
            path.unlink()
    assert result.exception is None, repr(result.exception)
    assert "Traceback" not in result.output
    return result


def verify_json(python: str, site: str | None, *args, env: dict | None = None) -> tuple[int, dict]:
    result = verify(python, site, "--json", *args, env=env)
    doc = json.loads(result.stdout)
    validate(doc, "verify")
    assert doc["passed"] is (result.exit_code == 0)
    for f in doc["findings"]:
        assert f["code"] in CODES and f["title"] and "\n" not in f["title"] and f["detail"] and f["fix"]
    return result.exit_code, doc


def codes(doc: dict) -> list[str]:
    return [f["code"] for f in doc["findings"]]


def finding(doc: dict, code: str) -> dict:
    return next(f for f in doc["findings"] if f["code"] == code)


# -- healthy machines -------------------------------------------------------------------------


def test_a_healthy_cuda_box_passes(bare_python, tmp_path):
    site = standin(tmp_path, **CUDA_BUILD, gpus=[RTX])
    code, doc = verify_json(bare_python, site, "--root", RTX5090)
    assert (code, codes(doc)) == (0, [])
    assert doc["complete"] and doc["torch"]["cuda"] == "12.8" and doc["devices"] == []  # no /dev/kfd on CUDA
    (gpu,) = doc["gpus"]
    assert gpu["arch"] == "sm_120" and gpu["in_build"] and gpu["covered_by"] == "sm_120"
    assert gpu["matmul"]["ok"] and gpu["matmul"]["max_abs_err"] == 0.0
    assert doc["machine"]["gpus"][0]["name"] == "NVIDIA GeForce RTX 5090"
    assert doc["machine"]["nvidia_driver"] == "570.133.07"
    human = verify(bare_python, site, "--root", RTX5090)
    assert human.exit_code == 0
    assert "✓ PyTorch works" in human.stdout and "torch 2.7.0+cu128 (CUDA 12.8 build)" in human.stdout
    assert "GPU 0  NVIDIA GeForce RTX 5090  sm_120 (in build: sm_120)  matmul ok" in human.stdout


def test_a_healthy_rocm_box_passes_and_opens_every_device_node(bare_python, tmp_path):
    root = copy_root(MI300X, tmp_path)
    site = standin(tmp_path, **ROCM_BUILD, gpus=[MI] * 8)
    code, doc = verify_json(bare_python, site, "--root", root)
    assert (code, codes(doc)) == (0, [])
    assert [g["arch"] for g in doc["gpus"]] == ["gfx942"] * 8 and all(g["in_build"] for g in doc["gpus"])
    opened = [d["path"] for d in doc["devices"]]
    assert opened[0] == f"{root}/dev/kfd" and len([p for p in opened if "/dev/dri/renderD" in p]) == 8
    assert all(d["ok"] for d in doc["devices"])
    assert doc["machine"]["rocm"] == "7.2.0" and doc["machine"]["amd_driver"] == "6.12.12"


def test_a_cuda_gpu_newer_than_the_builds_cubins_runs_on_same_major_ptx_or_cubin(bare_python, tmp_path):
    # An sm_89 GPU on a build with sm_86 cubins: forward-compatible within the major, as wheelfit says.
    ada = {"name": "NVIDIA GeForce RTX 4090", "capability": [8, 9]}
    site = standin(tmp_path, **dict(CUDA_BUILD, arch_list=["sm_80", "sm_86"]), gpus=[ada])
    code, doc = verify_json(bare_python, site)
    assert (code, codes(doc)) == (0, [])
    assert doc["gpus"][0]["covered_by"] == "sm_86"


# -- the build against the GPUs ---------------------------------------------------------------


def test_a_build_without_the_gpus_arch_fails_with_arch_missing(bare_python, tmp_path):
    # torch 2.6 cu124 on an RTX 5090: sm_90 cubins and compute_90 PTX, nothing for sm_120.
    build = dict(
        CUDA_BUILD, version="2.6.0+cu124", cuda="12.4", arch_list=["sm_80", "sm_86", "sm_90", "compute_90"]
    )
    site = standin(tmp_path, **build, gpus=[RTX])
    code, doc = verify_json(bare_python, site, "--root", RTX5090)
    assert code == 1 and codes(doc) == ["verify.arch-missing"]
    f = finding(doc, "verify.arch-missing")
    assert (
        "sm_120" in f["title"]
        and "RTX 5090" in f["detail"]
        and "sm_80, sm_86, sm_90, compute_90" in f["detail"]
    )
    assert "gpuenv torch" in f["fix"] and f"{bare_python} -m pip install" in f["fix"]
    assert doc["gpus"][0]["in_build"] is False


def test_rocm_arch_missing_and_the_matmul_it_breaks_name_the_cause(bare_python, tmp_path):
    # An RX 9070 XT (gfx1201) on a ROCm 6.3 build; the iGPU beside it is no GPU torch should see.
    root = copy_root(RX9070, tmp_path)
    site = standin(tmp_path, **ROCM_BUILD, gpus=[NAVI48], **{"raise": {"matmul": "RuntimeError: HIP error: "
                                                                       "invalid device function"}})  # fmt: skip
    code, doc = verify_json(bare_python, site, "--root", root)
    assert code == 1 and codes(doc) == ["verify.arch-missing", "verify.matmul-failed"]
    failed = finding(doc, "verify.matmul-failed")
    assert "invalid device function" in failed["detail"] and "that is the cause" in failed["detail"]
    assert "AMD_LOG_LEVEL=3" in failed["fix"]
    assert [g["compute"] for g in doc["machine"]["gpus"]] == [True, False]


def test_a_cpu_only_build_fails(bare_python, tmp_path):
    site = standin(tmp_path, version="2.7.0+cpu", cuda=None, hip=None, arch_list=[], gpus=[])
    code, doc = verify_json(bare_python, site, "--root", RTX5090)
    assert code == 1 and codes(doc) == ["verify.cpu-build"]
    assert "CPU-only" in doc["findings"][0]["title"] and "RTX 5090" in doc["findings"][0]["detail"]


def test_a_rocm_build_on_an_nvidia_box_is_the_wrong_vendor_not_a_missing_gpu(bare_python, tmp_path):
    site = standin(tmp_path, **ROCM_BUILD, gpus=[])
    code, doc = verify_json(bare_python, site, "--root", RTX5090)
    assert code == 1 and "verify.wrong-vendor" in codes(doc) and "verify.no-gpu-visible" not in codes(doc)
    f = finding(doc, "verify.wrong-vendor")
    assert "ROCm build" in f["title"] and "need CUDA" in f["title"] and "RTX 5090" in f["detail"]


# -- visibility -------------------------------------------------------------------------------


def test_no_gpu_visible_says_what_torch_said_and_which_gpus_the_machine_has(bare_python, tmp_path):
    said = "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040)."
    site = standin(tmp_path, **CUDA_BUILD, gpus=[], warning=said)
    code, doc = verify_json(bare_python, site, "--root", RTX5090)
    assert code == 1 and codes(doc) == ["verify.no-gpu-visible"]
    f = doc["findings"][0]
    assert "sees no GPU" in f["title"] and "driver on your system is too old" in f["detail"]
    assert "NVIDIA GeForce RTX 5090" in f["detail"] and "nvidia-smi" in f["fix"]
    assert doc["gpus"] == []


def test_no_gpu_visible_names_an_empty_cuda_visible_devices(bare_python, tmp_path):
    site = standin(tmp_path, **CUDA_BUILD, gpus=[])
    code, doc = verify_json(bare_python, site, env={"CUDA_VISIBLE_DEVICES": ""})
    assert code == 1 and codes(doc) == ["verify.no-gpu-visible"]
    assert "CUDA_VISIBLE_DEVICES=''" in doc["findings"][0]["detail"]
    assert "No CUDA GPUs are available" in doc["findings"][0]["detail"]  # torch.cuda.init()'s reason


def test_fewer_gpus_than_the_machine_has_fail_unless_a_visibility_variable_chose_them(bare_python, tmp_path):
    root = copy_root(MI300X, tmp_path)
    site = standin(tmp_path, **ROCM_BUILD, gpus=[MI] * 4)
    code, doc = verify_json(bare_python, site, "--root", root)
    assert code == 1 and codes(doc) == ["verify.gpu-not-visible"]
    f = doc["findings"][0]
    assert f["severity"] == "error" and "4 of the machine's 8 GPUs" in f["title"] and len(f["gpus"]) == 8
    code, doc = verify_json(bare_python, site, "--root", root, env={"HIP_VISIBLE_DEVICES": "0,1,2,3"})
    assert code == 0 and codes(doc) == ["verify.gpu-not-visible"]
    f = doc["findings"][0]
    assert f["severity"] == "warning" and "HIP_VISIBLE_DEVICES='0,1,2,3'" in f["detail"]


def test_a_machine_without_gpus_on_its_bus_is_judged_by_torch_alone(bare_python, tmp_path):
    # This box (or WSL, or a container without sysfs): no PCI GPU to compare with.
    site = standin(tmp_path, **CUDA_BUILD, gpus=[RTX, RTX])
    code, doc = verify_json(bare_python, site, "--root", tmp_path)
    assert (code, codes(doc)) == (0, []) and len(doc["gpus"]) == 2


# -- matmul -----------------------------------------------------------------------------------


def test_a_gpu_that_computes_wrong_is_named(bare_python, tmp_path):
    site = standin(tmp_path, **CUDA_BUILD, gpus=[RTX, RTX], wrong_on=[1], wrong_by=0.01)
    code, doc = verify_json(bare_python, site)
    assert code == 1 and codes(doc) == ["verify.matmul-wrong"]
    f = doc["findings"][0]
    assert f["title"] == "GPU 1 (NVIDIA GeForce RTX 5090, sm_120) computes a wrong matmul"
    assert "largest difference of 0.01" in f["detail"] and "nvidia-smi -q -d ECC" in f["fix"]
    assert [g["matmul"]["ok"] for g in doc["gpus"]] == [True, False]


def test_the_tolerance_passes_float32_rounding_and_fails_tf32_sized_errors(bare_python, tmp_path):
    site = standin(tmp_path, **CUDA_BUILD, gpus=[RTX, RTX, RTX], wrong_on=[0, 1, 2], wrong_by=5e-5)
    code, doc = verify_json(bare_python, site)
    assert (code, codes(doc)) == (0, [])
    site = standin(tmp_path / "tf32", **CUDA_BUILD, gpus=[RTX], wrong_on=[0], wrong_by=3e-3)
    code, doc = verify_json(bare_python, site)
    assert code == 1 and codes(doc) == ["verify.matmul-wrong"]
    assert TOLERANCE == 1e-3 and SIZE == 64


# -- ROCm device nodes ------------------------------------------------------------------------


def test_rocm_with_kfd_that_cannot_be_opened_fails_with_device_access(bare_python, tmp_path):
    root = copy_root(MI300X, tmp_path)
    (root / "dev" / "kfd").unlink()
    (root / "dev" / "kfd").mkdir()  # root opens any file; a directory it cannot open read-write
    site = standin(tmp_path, **ROCM_BUILD, gpus=[MI] * 8)
    code, doc = verify_json(bare_python, site, "--root", root)
    assert code == 1 and codes(doc) == ["verify.device-access"]
    f = doc["findings"][0]
    assert (
        f"{root}/dev/kfd: Is a directory" in f["detail"] and "cannot open the ROCm device nodes" in f["title"]
    )
    assert "usermod -aG render,video" in f["fix"] and "--device=/dev/kfd" in f["fix"]
    assert [d["ok"] for d in doc["devices"]] == [False] + [True] * 8


def test_rocm_in_a_container_without_kfd_or_render_nodes(bare_python, tmp_path):
    root = copy_root(MI300X, tmp_path)
    shutil.rmtree(root / "dev")
    site = standin(tmp_path, **ROCM_BUILD, gpus=[])
    code, doc = verify_json(bare_python, site, "--root", root)
    assert code == 1 and codes(doc) == ["verify.device-access", "verify.no-gpu-visible"]
    access, none = doc["findings"]
    assert (
        "No such file or directory" in access["detail"]
        and "no /dev/dri/renderD* node exists" in access["detail"]
    )
    assert "verify.device-access" in none["detail"]  # the likely cause, said where it shows


# -- torch that does not import ---------------------------------------------------------------


def test_no_torch_in_the_interpreter(bare_python, tmp_path):
    code, doc = verify_json(bare_python, str(tmp_path))
    assert code == 1 and codes(doc) == ["verify.torch-missing"]
    f = doc["findings"][0]
    assert "not installed" in f["title"] and "No module named 'torch'" in f["detail"]
    assert f"{bare_python} -m pip install" in f["fix"] and doc["torch"] is None and doc["complete"]


@pytest.mark.parametrize(
    "raised, words",
    [
        (
            "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory",
            "libcudnn.so.9",
        ),
        (
            "ModuleNotFoundError: No module named 'numpy'",
            "No module named 'numpy'",
        ),  # a dependency, not torch
    ],
)
def test_torch_whose_import_raises(bare_python, tmp_path, raised, words):
    site = standin(tmp_path, **CUDA_BUILD, **{"raise": {"import": raised}})
    code, doc = verify_json(bare_python, site)
    assert code == 1 and codes(doc) == ["verify.torch-import-failed"]
    assert words in doc["findings"][0]["detail"] and "does not import" in doc["findings"][0]["title"]


def test_torch_whose_import_crashes_the_interpreter(bare_python, tmp_path):
    site = standin(tmp_path, **CUDA_BUILD, crash="import")
    code, doc = verify_json(bare_python, site)
    assert code == 1 and codes(doc) == ["verify.crashed"]
    f = doc["findings"][0]
    assert "import torch" in f["title"] and "killed by SIGABRT" in f["detail"] and not doc["complete"]


def test_a_crash_in_a_matmul_keeps_what_came_before(bare_python, tmp_path):
    site = standin(tmp_path, **CUDA_BUILD, gpus=[RTX], crash="matmul")
    code, doc = verify_json(bare_python, site)
    assert code == 1 and codes(doc) == ["verify.crashed"]
    assert "matmul on GPU 0" in doc["findings"][0]["title"]
    assert doc["gpus"][0]["in_build"] is True and doc["gpus"][0]["matmul"] is None


def test_a_hang_is_stopped_at_the_timeout_with_its_process_group(bare_python, tmp_path):
    pidfile = tmp_path / "pid"
    site = standin(tmp_path, **CUDA_BUILD, gpus=[RTX], hang="properties", pidfile=str(pidfile))
    code, doc = verify_json(bare_python, site, "--timeout", "3")
    assert code == 1 and codes(doc) == ["verify.timeout"]
    f = doc["findings"][0]
    assert f["title"] == "The check did not finish within 3 s (read GPU 0)" and "--timeout 600" in f["fix"]
    assert doc["torch"]["version"] == "2.7.0+cu128"  # what came before the hang is kept
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)


def test_an_interpreter_that_does_not_run_the_script(tmp_path):
    code, doc = verify_json("/bin/true", None)
    assert code == 1 and codes(doc) == ["verify.crashed"]
    assert "did not run the verify script" in doc["findings"][0]["detail"]


# -- usage ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, words",
    [
        (["--python", "/nonexistent/python"], "not an executable file"),
        (["--python", "no-such-python-here"], "not found on PATH"),
        (["--python", "{tmp}/notes.txt"], "not an executable file"),
        (["--python", "/bin/true", "--timeout", "0"], "positive number"),
        (["--python", "/bin/true", "--root", "/nonexistent"], "not a directory"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, words, tmp_path):
    (tmp_path / "notes.txt").write_text("not a program\n")
    result = invoke(["verify", *(a.format(tmp=tmp_path) for a in args)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and words in result.stderr, result.stderr


def test_help_says_what_it_checks_and_the_exit_statuses():
    result = invoke(["verify", "--help"])
    assert result.exit_code == 0
    for words in ("--python PATH", "--json", "--timeout", "/dev/kfd", "Exit status: 0 every check passed"):
        assert words in result.stdout


# -- the judge and the script, without a process ----------------------------------------------


def outcome(*records, returncode=0, stderr="", **kw) -> Outcome:
    lines = "".join(json.dumps(r) + "\n" for r in records)
    return Outcome(python="/py", stdout=lines, stderr=stderr, returncode=returncode, timeout=120.0, **kw)


START = {"step": "start", "executable": "/py", "version": "3.12.3", "user": "ana", "env": {}}
TORCH = {"step": "torch", "ok": True, **{k: v for k, v in CUDA_BUILD.items()}}


def test_judge_a_clean_run_that_exits_nonzero_is_a_warning():
    result = judge(outcome(START, TORCH, {"step": "devices", "count": 0}, {"step": "done"}, returncode=-11,
                           stderr="Segmentation fault in libcuda teardown\n"))  # fmt: skip
    assert [f.code for f in result.findings] == ["verify.no-gpu-visible", "verify.unclean-exit"]
    assert "killed by SIGSEGV" in result.findings[1].detail and result.findings[1].severity.value == "warning"


def test_judge_ignores_what_is_not_a_record():
    text = "junk\n[1, 2]\n" + json.dumps(START) + "\n{not json\n" + json.dumps({"step": "done"}) + "\n"
    result = judge(Outcome(python="/py", stdout=text, stderr="", returncode=0, timeout=1.0))
    assert result.findings == () and result.complete and result.python_version == "3.12.3"


def test_judge_an_interpreter_that_cannot_start():
    result = judge(Outcome(python="/py", stdout="", stderr="", returncode=None, timeout=1.0,
                           start_error="Exec format error"))  # fmt: skip
    assert [f.code for f in result.findings] == ["verify.crashed"]
    assert "could not be started: Exec format error" in result.findings[0].detail


def test_judge_an_unknown_arch_is_a_warning_and_nan_is_wrong():
    gpu = {"step": "gpu", "index": 0, "name": "X", "error": "RuntimeError: props"}
    mm = {"step": "matmul", "index": 0, "max_abs_err": None, "finite": False}
    result = judge(outcome(START, TORCH, {"step": "devices", "count": 1}, gpu, mm, {"step": "done"}))
    assert [f.code for f in result.findings] == ["verify.matmul-wrong", "verify.arch-unknown"]
    assert "NaN or infinite" in result.findings[0].detail


def test_the_script_is_python36_syntax_free_of_gpuenv_and_takes_its_paths_as_arguments():
    import ast

    tree = ast.parse(SCRIPT)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "gpuenv" not in imported
    ast.parse(SCRIPT, feature_version=(3, 6))  # the oldest Python a target venv may still have
    assert "/dev/kfd" not in SCRIPT and "renderD" not in SCRIPT


def test_every_verify_code_is_in_the_findings_catalog():
    catalog = (HERE.parent / "FINDINGS.md").read_text()
    listed = set(re.findall(r"^\| (verify\.[a-z0-9-]+) \|", catalog, flags=re.M))
    assert sorted(set(CODES) - listed) == []
    assert sorted(listed - set(CODES)) == []  # nothing listed that verify cannot report
