"""The real pynvml binding against a fake libnvidia-ml.so.1 compiled from tests/fakenvml, loaded
in a gpuenv subprocess through LD_LIBRARY_PATH: NVML's answers and failures become facts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.probe_helpers import run_gpuenv
from tests.schemas import validate

SOURCE = Path(__file__).resolve().parent / "fakenvml" / "fake_nvml.c"
H200 = "NVIDIA H200,0x233510de,{bus},9,0,143771,{uuid},1"
TWO_H200 = ";".join(
    [
        H200.format(bus="00000000:18:00.0", uuid="GPU-1c9b2f7e-0d3a-4b1e-9f6a-2b7c8d9e0f11"),
        H200.format(bus="00000000:2A:00.0", uuid="GPU-5e4d3c2b-1a09-4f8e-8d7c-6b5a4f3e2d10"),
    ]
)


@pytest.fixture(scope="session")
def fake_nvml_dir(tmp_path_factory) -> Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed: cannot build the fake libnvidia-ml.so.1")
    out = tmp_path_factory.mktemp("fakenvml")
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-O1", "-o", str(out / "libnvidia-ml.so.1"), str(SOURCE)], check=True
    )
    return out


def probe_with(lib_dir: Path, **env: str) -> dict:
    done = run_gpuenv("probe", "--json", env={"LD_LIBRARY_PATH": str(lib_dir), **env})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    validate(doc, "facts")
    return doc


def test_two_gpus(fake_nvml_dir):
    doc = probe_with(
        fake_nvml_dir, FAKE_NVML_GPUS=TWO_H200, FAKE_NVML_DRIVER="570.133.20", FAKE_NVML_CUDA="12080"
    )
    nv = doc["nvidia"]
    assert (nv["nvml"], nv["driver_version"], nv["cuda_driver_version"], nv["persistence_mode"]) == (
        "ok", "570.133.20", "12.8", True,
    )  # fmt: skip
    by_slot = {g["pci_slot"]: g for g in doc["gpus"] if "nvml" in g["sources"]}
    assert sorted(by_slot) == ["0000:18:00.0", "0000:2a:00.0"]
    for g in by_slot.values():
        assert (g["vendor"], g["pci_id"], g["name"], g["compute_capability"], g["memory_mib"]) == (
            "nvidia", "10de:2335", "NVIDIA H200", "9.0", 143771,
        )  # fmt: skip
    assert by_slot["0000:2a:00.0"]["uuid"] == "GPU-5e4d3c2b-1a09-4f8e-8d7c-6b5a4f3e2d10"


def test_persistence_off_on_one_gpu_is_false(fake_nvml_dir):
    gpus = TWO_H200[:-1] + "0"  # the second GPU's persistence flag off
    assert probe_with(fake_nvml_dir, FAKE_NVML_GPUS=gpus)["nvidia"]["persistence_mode"] is False


@pytest.mark.parametrize(
    "code, state",
    [(9, "driver_not_loaded"), (18, "version_mismatch"), (4, "no_permission"), (999, "error: Unknown Error")],
)
def test_init_failures_map_to_states(fake_nvml_dir, code, state):
    doc = probe_with(fake_nvml_dir, FAKE_NVML_INIT_RETURN=str(code), FAKE_NVML_GPUS=TWO_H200)
    assert doc["nvidia"]["nvml"] == state
    assert doc["nvidia"]["driver_version"] is None
    assert not [g for g in doc["gpus"] if "nvml" in g["sources"]]


def test_library_absent_through_the_binding(tmp_path):
    """pynvml's own LIBRARY_NOT_FOUND path, with no libnvidia-ml.so.1 anywhere on the loader path."""
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        pytest.skip("this machine has a real libnvidia-ml.so.1 on the default loader path")
    except OSError:
        pass
    code = "from gpuenv.probe import nvml; print(nvml.query().state)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"LD_LIBRARY_PATH": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "not_installed"


def test_no_nvidia_anything_skips_pynvml(tmp_path):
    """Without an NVIDIA PCI device or library, pynvml is not even imported (start-up cost)."""
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        pytest.skip("this machine has NVIDIA's library")
    except OSError:
        pass
    code = "import sys; from gpuenv.probe import collect; f = collect(); print(f.nvidia.nvml, 'pynvml' in sys.modules, bool(f.gpus_of('nvidia')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                          env={"LD_LIBRARY_PATH": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})  # fmt: skip
    state, imported, has_nvidia = done.stdout.split()
    if has_nvidia == "True":
        pytest.skip("this machine has an NVIDIA GPU")
    assert (state, imported) == ("not_installed", "False")
