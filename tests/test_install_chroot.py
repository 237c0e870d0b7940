"""The install scenarios with real apt and dpkg, in Debian 12 chroots (never on the host).

Each chroot is given a machine (tests/chroot_env.give_machine: a kernel, a GPU in sysfs), so that
`gpuenv plan --root` and `gpuenv apply --root` probe it as they would a real box. Plans are applied
the unattended way (--yes --expect REQUEST), against a local signed repository that carries the
vendors' package names (tests/chroot_env.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from gpuenv.plan import planfile

pytest.register_assert_rewrite("tests.chroot_env")

from tests.chroot_env import (  # noqa: E402 - after the rewrite hook
    AMD_GPU,
    NVIDIA_GPU,
    VOLATILE,
    copy_root,
    end_state,
    give_machine,
    gpuenv,
    gpuenv_argv,
    in_root,
    manifest,
)

pytest_plugins = ["tests.chroot_env"]  # base_chroot, vendor_repo
pytestmark = pytest.mark.chroot

CUDA_PACKAGES = (
    "cuda-toolkit-12-8",
    "libcublas-12-8",
    "cuda-nvcc-12-8",
    "nvidia-open",
    "nvidia-kernel-open-dkms",
)
ROCM_PACKAGES = ("rocm", "rocm-core", "hip-runtime-amd", "amdgpu-dkms")


def make_plan(root: Path, repo, stack: str, gpu: dict, out: Path, *extra: str, env=None) -> Path:
    give_machine(root, gpu)
    res = gpuenv("plan", stack, "--root", str(root), "--user", "alice", "--out", str(out), *extra, env=env or repo.env)
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def request_of(plan: Path) -> str:
    return planfile.load(plan).request.line()


def apply(root: Path, repo, plan: Path, gpu: dict, *extra: str, env=None) -> subprocess.CompletedProcess:
    give_machine(root, gpu)
    return gpuenv(
        "apply", str(plan), "--root", str(root), "--yes", "--expect", request_of(plan), *extra, env=env or repo.env
    )


def installed(root: Path) -> dict[str, str]:
    return end_state(root)["packages"]


def groups_of(root: Path, user: str) -> set[str]:
    out = set()
    for line in (root / "etc/group").read_text().splitlines():
        name, _, _, members = line.split(":")
        if user in members.split(","):
            out.add(name)
    return out


def key_fingerprint(path: Path) -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as home:  # never the host's ~/.gnupg
        res = subprocess.run(
            ["gpg", "--homedir", home, "--no-autostart", "--show-keys", "--with-colons", str(path)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    return next(ln.split(":")[9] for ln in res.stdout.splitlines() if ln.startswith("fpr:"))


# --------------------------------------------------------------------------------------------
# Shared states: bare -> CUDA (once), CUDA -> ROCm uninterrupted (the reference end state)


@pytest.fixture(scope="module")
def cuda_root(base_chroot, vendor_repo, tmp_path_factory) -> Path:
    """A chroot where gpuenv installed CUDA 12.8 (and, outside gpuenv, the container toolkit)."""
    work = tmp_path_factory.mktemp("cuda")
    root = copy_root(base_chroot, work / "root")
    plan = make_plan(root, vendor_repo, "cuda", NVIDIA_GPU, work / "cuda.plan.json", "--version", "12.8")
    res = apply(root, vendor_repo, plan, NVIDIA_GPU)
    assert res.returncode == 0, res.stdout + res.stderr
    pkgs = installed(root)
    assert all(p in pkgs for p in CUDA_PACKAGES), pkgs
    in_root(root, "apt-get", "install", "-y", "-q", "nvidia-container-toolkit")
    return root


@pytest.fixture(scope="module")
def cuda_to_rocm(cuda_root, vendor_repo, tmp_path_factory):
    work = tmp_path_factory.mktemp("cuda-to-rocm")
    root = copy_root(cuda_root, work / "root")
    plan = make_plan(root, vendor_repo, "rocm", AMD_GPU, work / "rocm.plan.json")
    res = apply(root, vendor_repo, plan, AMD_GPU)
    assert res.returncode == 0, res.stdout + res.stderr
    return root, plan, res


def test_bare_to_cuda_wrote_its_files(cuda_root, vendor_repo):
    src = (cuda_root / "etc/apt/sources.list.d/cuda-debian12-x86_64.list").read_text()
    assert src == (
        "deb [signed-by=/etc/apt/keyrings/cuda-archive-keyring.gpg] "
        f"{vendor_repo.url}/nvidia/compute/cuda/repos/debian12/x86_64/ /\n"
    )
    assert key_fingerprint(cuda_root / "etc/apt/keyrings/cuda-archive-keyring.gpg") == vendor_repo.fingerprint
    assert "/usr/local/cuda-12.8/bin" in (cuda_root / "etc/profile.d/gpuenv-cuda.sh").read_text()
    blacklist = cuda_root / "etc/modprobe.d/gpuenv-blacklist-nouveau.conf"
    assert "blacklist nouveau" in blacklist.read_text()
    assert oct(blacklist.stat().st_mode & 0o777) == "0o644"


def test_cuda_to_rocm(cuda_to_rocm, vendor_repo):
    root, _, res = cuda_to_rocm
    pkgs = installed(root)
    assert not [p for p in CUDA_PACKAGES + ("cuda-drivers",) if p in pkgs], "CUDA left behind"
    assert all(p in pkgs for p in ROCM_PACKAGES), pkgs
    # The container toolkit matches NVIDIA's own *nvidia* glob but is not the CUDA stack.
    assert "nvidia-container-toolkit" in pkgs
    assert {"render", "video"} <= groups_of(root, "alice")
    assert (root / "etc/apt/sources.list.d/rocm.list").read_text() == (
        f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] {vendor_repo.url}/amd/rocm/apt/7.2.4 jammy main\n"
        f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] {vendor_repo.url}/amd/graphics/7.2.4/ubuntu jammy main\n"
    )
    assert "amdgpu/30.30.4/ubuntu jammy main" in (root / "etc/apt/sources.list.d/amdgpu.list").read_text()
    assert "Pin: release o=repo.radeon.com" in (root / "etc/apt/preferences.d/rocm-pin-600").read_text()
    assert (root / "etc/ld.so.conf.d/rocm.conf").read_text() == "/opt/rocm/lib\n/opt/rocm/lib64\n"
    assert key_fingerprint(root / "etc/apt/keyrings/rocm.gpg") == vendor_repo.fingerprint
    for gone in ("etc/apt/sources.list.d/cuda-debian12-x86_64.list", "etc/apt/keyrings/cuda-archive-keyring.gpg",
                 "etc/profile.d/gpuenv-cuda.sh", "etc/modprobe.d/gpuenv-blacklist-nouveau.conf"):  # fmt: skip
        assert not (root / gone).exists(), gone
    assert (root / "var/log/gpuenv/apply.log").exists()


def test_second_apply_changes_nothing(cuda_to_rocm, vendor_repo):
    root, plan, _ = cuda_to_rocm
    before = manifest(root, skip=("var/log/",))
    again = apply(root, vendor_repo, plan, AMD_GPU)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already applied" in again.stdout + again.stderr
    # A fresh plan for the same target finds everything done and asks nothing.
    res = gpuenv("install", "rocm", "--root", str(root), "--user", "alice", env=vendor_repo.env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Nothing to do" in res.stdout + res.stderr
    assert manifest(root, skip=("var/log/",)) == before


def test_rocm_to_cuda(base_chroot, vendor_repo, tmp_path):
    root = copy_root(base_chroot, tmp_path / "root")
    rocm = make_plan(root, vendor_repo, "rocm", AMD_GPU, tmp_path / "rocm.plan.json")
    assert apply(root, vendor_repo, rocm, AMD_GPU).returncode == 0
    assert all(p in installed(root) for p in ROCM_PACKAGES)
    cuda = make_plan(root, vendor_repo, "cuda", NVIDIA_GPU, tmp_path / "cuda.plan.json", "--version", "12.8")
    res = apply(root, vendor_repo, cuda, NVIDIA_GPU)
    assert res.returncode == 0, res.stdout + res.stderr
    pkgs = installed(root)
    assert not [p for p in ROCM_PACKAGES if p in pkgs]
    assert all(p in pkgs for p in CUDA_PACKAGES)
    for gone in ("etc/apt/sources.list.d/rocm.list", "etc/apt/sources.list.d/amdgpu.list",
                 "etc/apt/preferences.d/rocm-pin-600", "etc/apt/keyrings/rocm.gpg", "etc/ld.so.conf.d/rocm.conf"):  # fmt: skip
        assert not (root / gone).exists(), gone


def test_collateral_removal_refused(cuda_root, vendor_repo, tmp_path):
    root = copy_root(cuda_root, tmp_path / "root")
    in_root(root, "apt-get", "install", "-y", "-q", "myapp")
    plan = make_plan(root, vendor_repo, "rocm", AMD_GPU, tmp_path / "rocm.plan.json")
    before = manifest(root, skip=VOLATILE)
    res = apply(root, vendor_repo, plan, AMD_GPU)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "myapp" in res.stdout + res.stderr and "--allow-removal myapp" in res.stdout + res.stderr
    assert manifest(root, skip=VOLATILE) == before
    # The dry run shows it, in words the user can act on.
    dry = gpuenv("install", "rocm", "--dry-run", "--root", str(root), "--user", "alice", env=vendor_repo.env)
    assert "myapp (COLLATERAL)" in dry.stdout
    ok = apply(root, vendor_repo, plan, AMD_GPU, "--allow-removal", "myapp")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "myapp" not in installed(root)


def test_wrong_key_fingerprint_aborts_before_any_change(cuda_root, vendor_repo, tmp_path):
    root = copy_root(cuda_root, tmp_path / "root")
    wrong = "0123456789ABCDEF" * 2 + "01234567"
    env = {"GPUENV_STATE_DIR": str(vendor_repo.install_bundle(tmp_path / "state", fingerprint=wrong))}
    plan = make_plan(root, vendor_repo, "rocm", AMD_GPU, tmp_path / "rocm.plan.json", env=env)
    before = manifest(root, skip=VOLATILE)
    res = apply(root, vendor_repo, plan, AMD_GPU, env=env)
    assert res.returncode == 3, res.stdout + res.stderr
    assert vendor_repo.fingerprint in res.stdout + res.stderr and "Nothing was changed" in res.stdout + res.stderr
    assert manifest(root, skip=VOLATILE) == before


def test_stale_plan_refused(base_chroot, vendor_repo, tmp_path):
    root = copy_root(base_chroot, tmp_path / "root")
    plan = make_plan(root, vendor_repo, "rocm", AMD_GPU, tmp_path / "rocm.plan.json")
    (root / "etc/apt/sources.list.d/other.list").write_text("deb http://127.0.0.1:9/x bookworm main\n")
    before = manifest(root, skip=VOLATILE)
    res = apply(root, vendor_repo, plan, AMD_GPU)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "stale plan" in res.stdout + res.stderr
    assert manifest(root, skip=VOLATILE) == before


def test_dry_run_changes_nothing(cuda_root, vendor_repo, tmp_path):
    root = give_machine(copy_root(cuda_root, tmp_path / "root"), AMD_GPU)
    before = manifest(root)
    res = gpuenv("install", "rocm", "--dry-run", "--root", str(root), "--user", "alice", env=vendor_repo.env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert manifest(root) == before
    assert "apt would remove:" in res.stdout + res.stderr and "cuda-toolkit-12-8" in res.stdout + res.stderr
    assert "COLLATERAL" not in res.stdout + res.stderr


def test_dpkg_lock_held_refused(cuda_root, vendor_repo, tmp_path):
    import fcntl

    root = copy_root(cuda_root, tmp_path / "root")
    plan = make_plan(root, vendor_repo, "rocm", AMD_GPU, tmp_path / "rocm.plan.json")
    before = manifest(root, skip=VOLATILE)
    with open(root / "var/lib/dpkg/lock-frontend", "a") as fh:
        fcntl.lockf(fh.fileno(), fcntl.LOCK_EX)
        res = apply(root, vendor_repo, plan, AMD_GPU)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "dpkg is locked" in res.stdout + res.stderr
    assert manifest(root, skip=VOLATILE) == before


# --------------------------------------------------------------------------------------------
# kill -9 at each step, then --resume


def _steps(plan: Path) -> list[str]:
    return [s["id"] for s in json.loads(plan.read_text())["steps"]]


def _kill_at(root: Path, repo, plan: Path, step_id: str) -> None:
    """Start an apply, SIGKILL its whole process group once the journal says step_id began."""
    env = {**os.environ, **repo.env}
    env.pop("SUDO_USER", None)
    proc = subprocess.Popen(
        [*gpuenv_argv(), "apply", str(plan), "--root", str(root), "--yes", "--expect", request_of(plan)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    journal = root / "var/lib/gpuenv/journal.json"
    digest = planfile.digest(planfile.load(plan))
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            state = json.loads(journal.read_text())
        except (OSError, ValueError):
            state = {}
        mine = state.get("plan_digest") == digest  # the journal may still hold the last plan
        if mine and (state.get("started") == step_id or step_id in state.get("done", [])):
            break
        time.sleep(0.002)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)  # like a power cut: apt and dpkg die with it
    proc.wait()


def test_kill_at_each_step_then_resume(cuda_root, cuda_to_rocm, vendor_repo, tmp_path):
    reference_root, reference_plan, _ = cuda_to_rocm
    reference = end_state(reference_root)
    ids = _steps(reference_plan)
    assert len(ids) > 10
    failures = []
    for step_id in ids:
        root = copy_root(cuda_root, tmp_path / f"root-{step_id}")
        plan = make_plan(root, vendor_repo, "rocm", AMD_GPU, tmp_path / f"{step_id}.plan.json")
        _kill_at(root, vendor_repo, plan, step_id)
        journal = json.loads((root / "var/lib/gpuenv/journal.json").read_text())
        if step_id == "groups" and not journal.get("finished"):
            # the kill landing inside usermod's lock, every time, not by chance
            dead = subprocess.Popen(["true"])
            dead.wait()
            for db in ("group", "gshadow"):
                (root / f"etc/{db}.{dead.pid}").write_text(str(dead.pid))
        res = gpuenv("apply", "--root", str(root), "--resume", "--yes", env=vendor_repo.env)
        if res.returncode != 0 and "already applied" not in res.stdout + res.stderr:
            failures.append(
                f"{step_id}: resume exited {res.returncode}: {res.stdout[-800:]}{res.stderr[-400:]}"
            )
            continue
        state = end_state(root)
        if state != reference:
            diff = {k for k in set(state["files"]) ^ set(reference["files"])}
            diff |= {
                k
                for k in state["files"]
                if k in reference["files"] and state["files"][k] != reference["files"][k]
            }
            failures.append(
                f"{step_id}: end state differs: packages equal={state['packages'] == reference['packages']}, files {sorted(diff)[:10]}"
            )
        subprocess.run(["rm", "-rf", str(root)], check=True)
    assert failures == [], "\n".join(failures)


def test_interrupted_dpkg_refused(base_chroot, vendor_repo, tmp_path):
    root = copy_root(base_chroot, tmp_path / "root")
    plan = make_plan(root, vendor_repo, "rocm", AMD_GPU, tmp_path / "rocm.plan.json")
    (root / "var/lib/dpkg/updates/0001").write_text("")
    before = manifest(root, skip=VOLATILE)
    res = apply(root, vendor_repo, plan, AMD_GPU)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "dpkg --configure -a" in res.stdout + res.stderr
    assert manifest(root, skip=VOLATILE) == before
