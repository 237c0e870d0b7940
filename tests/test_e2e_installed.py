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


def _python_of(script: str) -> str:
    """The interpreter a console script starts: its #! line (pip writes the venv's python there)."""
    first = Path(script).read_text().splitlines()[0]
    assert first.startswith("#!"), first
    return first[2:].strip()


def test_the_console_script_runs_on_the_interpreter_run_sh_names():
    """tests/run.sh makes a bare venv per interpreter and names it (GPUENV_E2E_PYTHON): the runs it
    reports are that interpreter's."""
    want = os.environ.get("GPUENV_E2E_PYTHON")
    if not want:
        pytest.skip("GPUENV_E2E_PYTHON is set by tests/run.sh")
    code = "import platform, gpuenv; print(platform.python_version(), gpuenv.__file__)"
    got = subprocess.run([_python_of(BIN), "-c", code], capture_output=True, text=True, cwd="/", check=True).stdout
    version, where = got.split()
    assert version == want and where.startswith(str(Path(BIN).parent.parent)), got


def test_probe_and_doctor_of_another_interpreter():
    """--python: the environment of the interpreter named, not gpuenv's own."""
    python = _python_of(BIN)
    probe = gpuenv("probe", "--json", "--python", python)
    assert probe.returncode == 0, probe.stderr
    version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert json.loads(probe.stdout)["python"]["version"] == version
    doctor = gpuenv("doctor", "--json", "--python", python)
    assert doctor.returncode in (0, 1) and json.loads(doctor.stdout)["schema"] == "gpuenv.report/1"


def test_doctor_against_a_target_and_for_named_checks():
    root = str(ROOTS / "ubuntu2404-rx9070xt-raphael-fresh")
    for target in ("rocm", "rocm@7.2.4", "cuda", "cuda@12.8"):
        res = gpuenv("doctor", "--json", "--root", root, "--target", target)
        assert res.returncode in (0, 1), (target, res.stderr)
        assert json.loads(res.stdout)["target"]["stack"] == target.split("@")[0]
    only = gpuenv("doctor", "--json", "--root", root, "amd.driver-missing")
    assert only.returncode == 1, only.stderr
    assert {f["code"] for f in json.loads(only.stdout)["findings"]} == {"amd.driver-missing"}
    assert gpuenv("doctor", "--root", root, "no.such-check").returncode == 2
    listed = gpuenv("doctor", "--list")
    assert listed.returncode == 0 and "amd.driver-missing" in listed.stdout


def test_torch_for_a_release_and_a_vendor():
    res = gpuenv("torch", "--json", "--facts", str(FACTS / "torch-mixed.json"), "--version", "2.7", "--vendor", "amd")
    assert res.returncode in (0, 1), res.stderr
    got = json.loads(res.stdout)
    assert got["vendor"] == "amd" and (got["torch"] is None or got["torch"].startswith("2.7"))
    both = gpuenv("torch", "--json", "--facts", str(FACTS / "torch-mixed.json"))
    assert both.returncode == 2 and any("--vendor" in r for r in json.loads(both.stdout)["reasons"])


def test_matrix_update_then_reset(tmp_path, monkeypatch):
    """What the README's `matrix update` and `reset` do, into a state directory of the test's own."""
    monkeypatch.setenv("GPUENV_STATE_DIR", str(tmp_path / "state"))
    shipped = Path(gpuenv("matrix", "check").stdout.split(":")[0])
    bundle = tmp_path / "bundle"
    shutil.copytree(shipped, bundle)
    meta = json.loads((bundle / "bundle.json").read_text())
    meta["version"] = "2099.01.01"
    (bundle / "bundle.json").write_text(json.dumps(meta))
    sha = gpuenv("matrix", "check", str(bundle)).stdout.split("sha256 ")[1].split()[0]
    wrong = gpuenv("matrix", "update", "--from", str(bundle), "--sha256", "0" * 64)
    assert wrong.returncode == 3 and not (tmp_path / "state/matrices").exists()
    done = gpuenv("matrix", "update", "--from", str(bundle), "--sha256", sha)
    assert done.returncode == 0, done.stderr
    shown = gpuenv("matrix", "show").stdout.splitlines()
    assert shown[0].startswith("bundle   2099.01.01 (dated 2099-01-01")  # the first line dates it (#42)
    assert any(line.startswith("from     installed, ") for line in shown)
    reset = gpuenv("matrix", "reset")
    assert reset.returncode == 0 and not (tmp_path / "state/matrices").exists()
    shown = gpuenv("matrix", "show").stdout.splitlines()
    assert not shown[0].startswith("bundle   2099.01.01")
    assert any(line.startswith("from     bundled, ") for line in shown)


def test_install_without_dry_run_asks_first_and_changes_nothing_without_a_terminal(tmp_path):
    root = tmp_path / "box"
    shutil.copytree(ROOTS / "ubuntu2404-rx9070xt-raphael-fresh", root, symlinks=True)
    res = gpuenv("install", "rocm", "--root", str(root), stdin=subprocess.DEVNULL)
    assert res.returncode == 3 and "no terminal" in res.stderr and "nothing was changed" in res.stderr
    assert not (root / "var/lib/gpuenv").exists()
    resume = gpuenv("apply", "--resume", "--yes", "--root", str(root))
    assert resume.returncode == 0 and "nothing to resume" in resume.stdout + resume.stderr


def test_verify_an_interpreter_without_torch():
    res = gpuenv("verify", "--json", "--python", _python_of(BIN))
    assert res.returncode == 1, res.stderr
    got = json.loads(res.stdout)
    assert got["schema"] == "gpuenv.verify/1" and got["passed"] is False


def test_report_of_a_fleet_directory(tmp_path):
    fleet = tmp_path / "reports"
    fleet.mkdir()
    for machine in ("ubuntu2404-rx9070xt-raphael-fresh", "ubuntu2404-rx9070xt-fresh"):
        root = ["--root", str(ROOTS / machine)]
        (fleet / f"{machine}.facts.json").write_text(gpuenv("probe", "--json", *root).stdout)
        (fleet / f"{machine}.doctor.json").write_text(gpuenv("doctor", "--json", *root).stdout)
    html = tmp_path / "fleet.html"
    res = gpuenv("report", str(fleet), "--json", "--html", str(html), "--max-age", "100000")
    assert res.returncode in (0, 1), res.stderr
    assert json.loads(res.stdout)["schema"] == "gpuenv.fleet/1"
    assert html.read_text().lstrip().lower().startswith("<!doctype html")
    assert "amd.driver-missing" in gpuenv("report", str(fleet)).stdout


def test_advise_of_the_readme_example():
    res = gpuenv("advise", str(REPO / "tests/advise/kernels-work"))
    assert res.returncode in (0, 1), res.stderr
    assert "gpuenv install rocm --dry-run" in res.stdout
    got = json.loads(gpuenv("advise", "--json", str(REPO / "tests/advise/kernels-work")).stdout)
    assert got["schema"] == "gpuenv.advise/1"
    assert gpuenv("advise", str(REPO / "README.md")).returncode == 2
