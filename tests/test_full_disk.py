"""A full disk and a read-only root, made for real: a small tmpfs, or a read-only bind mount, in a
mount namespace of the test's own (`unshare -m`), so the host's mounts never change.

What a user must see: one line that names the cause, an exit status from the table, no
traceback, and on the disk nothing half-written (a file keeps its old bytes or gets the new ones;
no temporary file is left; the journal stays readable).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.chroot_env import namespace_skip_reason
from tests.probe_helpers import ROOTS

# In a container or a chroot there may be no private mount namespace to be had: skipped, and why.
pytestmark = pytest.mark.skipif(namespace_skip_reason() is not None, reason=str(namespace_skip_reason()))

MACHINE = "ubuntu2404-rx9070xt-fresh"


def _in_namespace(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run a shell script in a new mount namespace (mounts made there vanish with it)."""
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-euc", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )


def _gpuenv() -> str:
    installed = os.environ.get("GPUENV_E2E_BIN")
    return installed or str(Path(sys.executable).with_name("gpuenv"))


@pytest.fixture
def planned(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(ROOTS / MACHINE, root, symlinks=True)
    plan = tmp_path / "plan.json"
    done = subprocess.run(
        [_gpuenv(), "plan", "rocm", "--root", str(root), "--out", str(plan)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root, plan


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def test_apply_on_a_read_only_root_changes_nothing_and_says_why(planned, tmp_path):
    root, plan = planned
    before = _tree(root)
    res = _in_namespace(
        f"mount --bind {root} {root}; mount -o remount,bind,ro {root}; "
        f"{_gpuenv()} apply {plan} --root {root} --yes --expect 'install rocm'",
        tmp_path,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 3, out
    assert "Read-only file system" in out and "nothing was changed" in out
    assert "Traceback" not in out
    assert _tree(root) == before


def test_apply_on_a_full_disk_changes_nothing_and_says_why(planned, tmp_path):
    """The disk is full (blocks and inodes) before the apply starts: the journal cannot be written,
    so nothing runs."""
    root, plan = planned
    mnt = tmp_path / "disk"
    mnt.mkdir()
    res = _in_namespace(
        f"mount -t tmpfs -o size=4m,nr_inodes=400 tmpfs {mnt}; cp -a {root}/. {mnt}/; "
        f"dd if=/dev/zero of={mnt}/filler bs=64k 2>/dev/null || true; "
        f"i=0; while touch {mnt}/inode$i 2>/dev/null; do i=$((i+1)); done; "
        f"rc=0; {_gpuenv()} apply {plan} --root {mnt} --yes --expect 'install rocm' || rc=$?; echo exit=$rc; "
        f"ls -A {mnt}/var/lib/gpuenv 2>/dev/null | wc -l",
        tmp_path,
    )
    out = res.stdout + res.stderr
    assert "exit=3" in res.stdout, out
    assert "No space left on device" in out and "nothing was changed" in out
    assert "Traceback" not in out
    assert res.stdout.strip().splitlines()[-1] == "0"  # no lock, no journal, no temporary file left


_WRITES = textwrap.dedent(
    """
    import json, os, sys
    from gpuenv.execute.executor import Files
    from gpuenv.execute.journal import Journal
    root = sys.argv[1]
    out = {}
    files = Files(root)
    files.write("/etc/apt/sources.list.d/rocm.list", b"old\\n", "0644")
    j = Journal(root)
    j.acquire()
    j.begin("sha256:" + "0" * 64, {"steps": []})
    j.mark_started("a")
    j.mark_done("a")
    # fill the disk
    with open(os.path.join(root, "filler"), "wb") as fh:
        try:
            while True:
                fh.write(b"\\0" * 65536)
                fh.flush()
        except OSError:
            pass
    try:
        files.write("/etc/apt/sources.list.d/rocm.list", b"new " * 100000, "0644")
        out["write"] = "ok"
    except OSError as exc:
        out["write"] = exc.strerror
    try:
        j.mark_started("b" * 200000)
        out["journal"] = "ok"
    except OSError as exc:
        out["journal"] = exc.strerror
    j.release()
    d = os.path.join(root, "etc/apt/sources.list.d")
    out["files"] = sorted(os.listdir(d))
    out["content"] = open(os.path.join(d, "rocm.list"), "rb").read().decode()
    out["journal_dir"] = sorted(os.listdir(os.path.join(root, "var/lib/gpuenv")))
    out["state"] = json.load(open(os.path.join(root, "var/lib/gpuenv/journal.json")))["done"]
    print(json.dumps(out))
    """
)


def test_writes_cut_short_by_a_full_disk_keep_the_old_bytes_and_no_temporary(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    script = tmp_path / "writes.py"
    script.write_text(_WRITES)
    res = _in_namespace(f"mount -t tmpfs -o size=2m tmpfs {mnt}; {sys.executable} {script} {mnt}", tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["write"] == "No space left on device"
    assert got["files"] == ["rocm.list"] and got["content"] == "old\n"
    assert got["journal"] == "No space left on device"
    assert got["state"] == ["a"]  # the last journal that was written whole
    assert ".journal.json.tmp" not in got["journal_dir"]
