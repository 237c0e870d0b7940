"""The AMD SMI probe against a stand-in ``amdsmi`` module (the real binding needs ROCm's library
and an AMD GPU): answers become facts, and a binding that fails becomes a state, not a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

FAKE_OK = """
class AmdSmiException(Exception):
    pass

_HANDLES = ["h0", "h1"]

def amdsmi_init(flags=None):
    pass

def amdsmi_shut_down():
    pass

def amdsmi_get_processor_handles():
    return list(_HANDLES)

def amdsmi_get_gpu_device_bdf(h):
    return {"h0": "0000:03:00.0", "h1": "0000:10:00.0"}[h]

def amdsmi_get_gpu_asic_info(h):
    return {"market_name": {"h0": "AMD Radeon RX 9070 XT", "h1": "AMD Radeon Graphics"}[h], "device_id": "0x7550"}

def amdsmi_get_gpu_vram_info(h):
    return {"vram_type": "GDDR6", "vram_size": 16304 if h == "h0" else "N/A"}

def amdsmi_get_gpu_driver_info(h):
    return {"driver_name": "amdgpu", "driver_version": "6.16.6", "driver_date": "2015/01/01 00:00"}
"""

FAKE_INIT_FAILS = """
class AmdSmiLibraryException(Exception):
    pass

def amdsmi_init(flags=None):
    raise AmdSmiLibraryException("Error code:\\n\\t34 | AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded")
"""

FAKE_IMPORT_FAILS = 'raise OSError("libamd_smi.so: cannot open shared object file")\n'


def query_with(module_text: str | None, tmp_path: Path) -> dict:
    if module_text is not None:
        (tmp_path / "amdsmi.py").write_text(module_text)
    code = "import json; from gpuenv.probe import amdsmi; r = amdsmi.query(); print(json.dumps([r.state, r.driver_version, [list(vars(g).values()) for g in r.gpus]]))"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    state, driver, gpus = json.loads(done.stdout)
    return {"state": state, "driver": driver, "gpus": gpus}


def test_amdsmi_answers(tmp_path):
    got = query_with(FAKE_OK, tmp_path)
    assert got == {
        "state": "ok",
        "driver": "6.16.6",
        "gpus": [
            ["0000:03:00.0", "AMD Radeon RX 9070 XT", 16304],
            ["0000:10:00.0", "AMD Radeon Graphics", None],
        ],
    }


def test_amdsmi_init_failure_is_an_error_state(tmp_path):
    got = query_with(FAKE_INIT_FAILS, tmp_path)
    assert got["state"].startswith("error: ") and "DRIVER_NOT_LOADED" in got["state"]
    assert got["gpus"] == []


def test_amdsmi_import_failure_is_an_error_state(tmp_path):
    assert query_with(FAKE_IMPORT_FAILS, tmp_path)["state"].startswith("error: ")


def test_amdsmi_absent(tmp_path):
    import importlib.util

    from gpuenv.probe.amdsmi import ROCM_COPY

    if importlib.util.find_spec("amdsmi") is not None or os.path.isdir(ROCM_COPY):
        pytest.skip("this machine has an amdsmi binding")
    assert query_with(None, tmp_path)["state"] == "not_installed"


MARKED = """import os
open(os.environ["MARK"], "a").write("imported as %d\\n" % os.getuid())
""" + FAKE_OK


def query_rocm_copy(copy: Path, tmp_path: Path) -> tuple[dict, str | None]:
    """query() with ROCm's copy of the binding at ``copy`` (no amdsmi on the import path)."""
    code = (
        "import json; from gpuenv.probe import amdsmi; amdsmi.ROCM_COPY = " + repr(str(copy)) + "; "
        "r = amdsmi.query(); print(json.dumps([r.state, len(r.gpus), r.note]))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MARK": str(tmp_path / "mark")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    state, count, note = json.loads(done.stdout)
    return {"state": state, "gpus": count}, note


@pytest.mark.skipif(os.geteuid() != 0, reason="ownership is set up as root (CI is root)")
def test_a_rocm_copy_another_account_could_change_is_not_imported_as_root(tmp_path):
    """Issue 40: a TheRock tarball a user unpacked (or a /opt/rocm a user owns) gave root that
    user's amdsmi.py. Now it is not imported, and the note says why sysfs was used instead."""
    copy = tmp_path / "rocm/share/amd_smi"
    copy.mkdir(parents=True)
    (copy / "amdsmi.py").write_text(MARKED)
    got, note = query_rocm_copy(copy, tmp_path)
    assert got == {"state": "ok", "gpus": 2} and note is None  # root's own tree: imported
    os.chown(copy / "amdsmi.py", 1000, 1000)
    (tmp_path / "mark").unlink()
    got, note = query_rocm_copy(copy, tmp_path)
    assert got == {"state": "not_queried", "gpus": 0}
    assert note == (
        f"amdsmi was not imported from {copy}: another account could change it ({copy / 'amdsmi.py'} "
        "belongs to uid 1000 (mode 0644)); the GPUs were read from sysfs and KFD instead"
    )
    assert not (tmp_path / "mark").exists()
    os.chown(copy / "amdsmi.py", 0, 0)
    os.chown(tmp_path / "rocm", 1000, 1000)  # a directory above: the same
    assert query_rocm_copy(copy, tmp_path)[0]["state"] == "not_queried" and not (tmp_path / "mark").exists()


def test_notes_are_kept_in_the_facts_document():
    from gpuenv.facts import ProbeNote, from_dict

    doc = json.loads((REPO / "tests/facts/doctor-healthy-rocm.json").read_text())
    facts = from_dict(doc)
    noted = from_dict({**doc, "notes": [{"probe": "amdsmi", "message": "why"}]})
    assert noted.notes == (ProbeNote("amdsmi", "why"),)
    assert noted.to_dict()["notes"] == [{"probe": "amdsmi", "message": "why"}]
    assert noted.digest() == facts.digest()  # how it was probed, not what the machine is
