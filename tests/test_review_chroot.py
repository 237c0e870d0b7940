"""Reviewing before changing, with real apt and dpkg in a Debian 12 chroot (#27 items 3, 4):
`apply FILE --dry-run` admits a saved plan as apply does and changes nothing, and an uninstall
with nothing of the stack there says so instead of listing steps "(already done)"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.chroot_env")

from tests.chroot_env import AMD_GPU, VOLATILE, copy_root, give_machine, gpuenv, manifest  # noqa: E402

pytest_plugins = ["tests.chroot_env"]  # base_chroot, vendor_repo
pytestmark = pytest.mark.chroot


@pytest.fixture
def box(base_chroot, tmp_path) -> Path:
    return give_machine(copy_root(base_chroot, tmp_path / "root"), AMD_GPU)


def test_uninstall_with_nothing_of_the_stack_says_nothing_to_remove(box, vendor_repo):
    before = manifest(box)
    res = gpuenv("uninstall", "rocm", "--dry-run", "--root", str(box), env=vendor_repo.env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Nothing to remove" in res.stdout and "(already done)" not in res.stdout
    assert manifest(box) == before


def test_apply_dry_run_admits_simulates_and_changes_nothing(box, vendor_repo, tmp_path):
    plan = tmp_path / "rocm.plan.json"
    made = gpuenv("plan", "rocm", "--root", str(box), "--user", "alice", "--out", str(plan), env=vendor_repo.env)
    assert made.returncode == 0, made.stdout + made.stderr
    before = manifest(box, skip=VOLATILE)
    res = gpuenv("apply", str(plan), "--dry-run", "--root", str(box), env=vendor_repo.env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "the plan matches this machine" in res.stdout and "dry run: nothing was changed" in res.stdout
    assert "Rebuild the initramfs" not in res.stdout or "(already done)" not in res.stdout
    assert manifest(box, skip=VOLATILE) == before
    # An edited plan is refused the same way apply refuses it.
    doc = json.loads(plan.read_text())
    next(s for s in doc["steps"] if s.get("content"))["content"] += "# edited\n"
    plan.write_text(json.dumps(doc))
    res = gpuenv("apply", str(plan), "--dry-run", "--root", str(box), env=vendor_repo.env)
    assert res.returncode == 3 and "not the one gpuenv makes" in res.stderr
    assert manifest(box, skip=VOLATILE) == before
