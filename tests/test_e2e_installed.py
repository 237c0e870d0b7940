"""What users install, tested as they run it: the console script of the built wheel, installed
into a bare venv outside the checkout with no test dependencies (tests/run.sh makes it and sets
GPUENV_E2E_BIN). Every command the README shows, against the sysroot fixtures; the chroot suite
runs its applies through the same script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

BIN = os.environ.get("GPUENV_E2E_BIN")
pytestmark = pytest.mark.skipif(not BIN, reason="GPUENV_E2E_BIN is set by tests/run.sh (the installed wheel)")

ROOTS = Path(__file__).parent / "roots"
FACTS = Path(__file__).parent / "facts"
REPO = Path(__file__).resolve().parent.parent


def gpuenv(*args: str, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUENV_TEST"))}
    env["COLUMNS"] = "200"
    done = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, cwd=cwd or "/", env=env, **kw)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_the_installed_package_is_not_the_checkout():
    python = Path(BIN).with_name("python")
    where = subprocess.run([python, "-c", "import gpuenv; print(gpuenv.__file__)"], capture_output=True, text=True,
                           cwd="/", check=True).stdout.strip()  # fmt: skip
    assert not where.startswith(str(REPO)), where
    assert "site-packages" in where
    # The bare venv holds no test dependency: run time never relies on one.
    for module in ("jsonschema", "pytest", "hypothesis"):
        probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True, cwd="/")
        assert probe.returncode != 0, f"{module} is importable in the bare venv"


def test_version_and_help():
    assert gpuenv("--version").stdout.startswith("gpuenv ")
    top = gpuenv("--help")
    assert top.returncode == 0 and "doctor" in top.stdout and "apply" in top.stdout
    for name in ("probe", "doctor", "torch", "matrix", "install", "uninstall", "plan", "apply"):
        res = gpuenv(name, "--help")
        assert res.returncode == 0 and f"usage: gpuenv {name}" in res.stdout, name


@pytest.mark.parametrize("machine", sorted(p.name[: -len(".args.json")] for p in ROOTS.glob("*.args.json")))
def test_probe_and_doctor_of_every_sysroot(machine):
    args = json.loads((ROOTS / f"{machine}.args.json").read_text())
    opts = ["--root", str(ROOTS / machine)] + (["--user", args["user"]] if args.get("user") else [])
    probe = gpuenv("probe", "--json", *opts)
    assert probe.returncode == 0, probe.stderr
    expected = json.loads((ROOTS / f"{machine}.expected.json").read_text())
    got = json.loads(probe.stdout)
    assert got["gpus"] == expected["gpus"] and got["host"] == expected["host"]
    doctor = gpuenv("doctor", "--json", *opts)
    assert doctor.returncode in (0, 1), doctor.stderr
    assert json.loads(doctor.stdout)["schema"] == "gpuenv.report/1"
    human = gpuenv("doctor", *opts)
    assert human.returncode == doctor.returncode
    assert gpuenv("probe", *opts).returncode == 0


def test_doctor_and_torch_on_this_machine():
    assert gpuenv("doctor").returncode in (0, 1)
    assert gpuenv("doctor", "--json").returncode in (0, 1)
    assert gpuenv("torch", "--json").returncode in (0, 1)


@pytest.mark.parametrize("facts", sorted(FACTS.glob("torch-*.json")), ids=lambda p: p.stem)
def test_torch_of_every_facts_file(facts):
    res = gpuenv("torch", "--json", "--facts", str(facts))
    assert res.returncode in (0, 1, 2), res.stderr  # 2: both vendors and no --vendor
    if res.returncode != 2:
        assert "index_url" in json.loads(res.stdout)


def test_matrix_show_and_check():
    assert "bundle" in gpuenv("matrix", "show").stdout
    for subject in ("rocm", "cuda", "torch", "gpus"):
        assert gpuenv("matrix", "show", subject).returncode == 0
    check = gpuenv("matrix", "check")
    assert check.returncode == 0 and "is valid" in check.stdout


def test_matrix_check_refuses_a_plain_http_torch_index_without_jsonschema(tmp_path):
    """Refused by the loader itself: the bare venv has no jsonschema to lean on."""
    shipped = Path(gpuenv("matrix", "check").stdout.split(":")[0])
    bundle = tmp_path / "bundle"
    shutil.copytree(shipped, bundle)
    torch = json.loads((bundle / "torch.json").read_text())
    torch["releases"][0]["variants"][0]["index_url"] = "http://download.pytorch.org/whl/cu121"
    (bundle / "torch.json").write_text(json.dumps(torch))
    res = gpuenv("matrix", "check", str(bundle))
    assert res.returncode == 2 and "index_url" in res.stderr


@pytest.mark.parametrize("stack", ["rocm", "cuda"])
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_dry_runs_on_this_machine_and_a_sysroot(stack, action):
    here = gpuenv(action, stack, "--dry-run")
    assert here.returncode in (0, 3), here.stderr
    assert "nothing was changed" in here.stdout
    root = gpuenv(action, stack, "--dry-run", "--root", str(ROOTS / "ubuntu2404-rx9070xt-raphael-fresh"))
    assert root.returncode in (0, 3), root.stderr
    json_out = gpuenv(action, stack, "--json", "--root", str(ROOTS / "ubuntu2404-rx9070xt-raphael-fresh"))
    assert json.loads(json_out.stdout)["schema"] == "gpuenv.plan/1"


def test_the_rx9070xt_beside_a_raphael_igpu_plans_rocm_without_blockers():
    res = gpuenv("install", "rocm", "--json", "--root", str(ROOTS / "ubuntu2404-rx9070xt-raphael-fresh"))
    plan = json.loads(res.stdout)
    assert res.returncode == 0 and plan["blockers"] == []
    assert any(n.startswith("amd.igpu-present") for n in plan["notes"])


def test_plan_then_apply_of_a_copy_of_a_sysroot(tmp_path):
    root = tmp_path / "box"
    shutil.copytree(ROOTS / "ubuntu2404-rx9070xt-raphael-fresh", root, symlinks=True)
    out = tmp_path / "p.json"
    made = gpuenv("plan", "rocm", "--root", str(root), "--user", "alice", "--out", str(out))
    assert made.returncode == 0, made.stderr
    assert "--yes --expect 'install rocm --user alice'" in made.stdout
    # Without the reviewed request, an unattended apply changes nothing.
    refused = gpuenv("apply", str(out), "--root", str(root), "--yes")
    assert refused.returncode == 3 and not (root / "var/lib/gpuenv").exists()
