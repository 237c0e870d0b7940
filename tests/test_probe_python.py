"""`--python PATH`: another interpreter's GPU packages and torch build, torch never imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuenv.probe import collect
from tests.probe_helpers import run_gpuenv
from tests.schemas import validate

TORCH_VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.7.1+rocm6.3'
debug = False
cuda: Optional[str] = None
git_version = 'e2d141dbde55c2a4370fac5165b0561b6af4798b'
hip: Optional[str] = '6.3.42131-fa1d09cbd'
"""


@pytest.fixture(scope="module")
def venv_with_torch(tmp_path_factory):
    """A real venv whose site-packages holds a torch that would explode if imported."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    site = subprocess.run(
        [str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    from pathlib import Path

    site_dir = Path(site)
    (site_dir / "torch").mkdir(parents=True)
    (site_dir / "torch" / "__init__.py").write_text("raise SystemExit('torch must not be imported')\n")
    (site_dir / "torch" / "version.py").write_text(TORCH_VERSION_PY)
    for name, version in (("torch", "2.7.1+rocm6.3"), ("pytorch_triton_rocm", "3.3.1"), ("numpy", "2.2.0")):
        d = site_dir / f"{name}-{version}.dist-info"
        d.mkdir()
        (d / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n\nbody\n"
        )
    return root / "bin" / "python"


def test_other_interpreter(venv_with_torch):
    done = run_gpuenv("probe", "--json", "--python", str(venv_with_torch))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    validate(doc, "facts")
    py = doc["python"]
    assert py["packages"] == {"pytorch-triton-rocm": "3.3.1", "torch": "2.7.1+rocm6.3"}
    assert py["torch"] == {
        "version": "2.7.1+rocm6.3",
        "cuda": None,
        "hip": "6.3.42131-fa1d09cbd",
        "arch_list": None,
    }
    assert py["version"] == "{}.{}.{}".format(*sys.version_info[:3])


def test_running_interpreter_lists_its_gpu_packages():
    from importlib.metadata import version

    f = collect()
    assert f.python.executable == sys.executable
    assert f.python.packages.get("nvidia-ml-py") == version("nvidia-ml-py")
    assert "typer" not in f.python.packages


def test_bad_interpreter_is_a_usage_error(tmp_path):
    done = run_gpuenv("probe", "--json", "--python", str(tmp_path / "nope"))
    assert done.returncode == 2 and "--python" in done.stderr


def test_failing_interpreter_is_recorded(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho boom >&2\nexit 3\n")
    fake.chmod(0o755)
    f = collect(python=str(fake))
    assert f.python is None
    assert [e.probe for e in f.errors] == ["python"] and "boom" in f.errors[0].message
