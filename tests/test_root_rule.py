"""The rule root trusts files by (gpuenv.trust, README "Security"), and the attacks of issue 40
that it answers, each written as the attack: a member of a group that may write /var/log sends
root's log elsewhere; a TMPDIR of another account's lets it swap a staged bundle after its
sha256 check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv import matrixbundle as B
from gpuenv import trust
from gpuenv.execute.journal import Journal, JournalError
from tests.test_matrices import copy_bundle, edit

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="ownership is set up as root (CI is root)")

ALICE = 1000
SYSLOG = 104  # a system group, as Ubuntu's syslog (gid below 1000)


def as_alice(script: str, **env: str) -> None:
    """``script`` run by sh as uid 1000 (what a local account can do), through setpriv."""
    subprocess.run(
        ["setpriv", f"--reuid={ALICE}", f"--regid={ALICE}", "--clear-groups", "sh", "-euc", script],
        env={"PATH": "/usr/bin:/bin", **env}, cwd="/", check=True, timeout=30,
    )  # fmt: skip


def ubuntu_var_log(root: Path) -> Path:
    """ROOT/var/log as Ubuntu ships it: root:syslog 0775."""
    log = root / "var/log"
    log.mkdir(parents=True)
    os.chown(log, 0, SYSLOG)
    os.chmod(log, 0o775)
    return log


# -- open_dir: a directory root writes into, reached by descriptors ----------------------------------


def test_a_system_groups_directory_on_the_way_passes_but_not_as_the_last(tmp_path):
    log = ubuntu_var_log(tmp_path)
    fd = trust.open_dir("/var/log/gpuenv", str(tmp_path), make=0o755)
    try:
        os.close(os.open("x", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd))
    finally:
        os.close(fd)
    assert (log / "gpuenv/x").is_file() and oct((log / "gpuenv").stat().st_mode & 0o777) == "0o755"
    with pytest.raises(trust.UntrustedDir, match=f"^{log} is writable by group {SYSLOG} .owner uid 0, mode 0775.$"):
        trust.open_dir("/var/log", str(tmp_path))


def test_a_directory_another_account_owns_is_refused_naming_it_its_owner_and_mode(tmp_path):
    ubuntu_var_log(tmp_path)
    (tmp_path / "var/log/gpuenv").mkdir()
    os.chown(tmp_path / "var/log/gpuenv", ALICE, ALICE)
    with pytest.raises(trust.UntrustedDir) as exc:
        trust.open_dir("/var/log/gpuenv", str(tmp_path), make=0o755)
    assert str(exc.value) == f"{tmp_path}/var/log/gpuenv belongs to uid {ALICE} (mode 0755)"


def test_a_group_of_users_may_not_stand_on_the_way(tmp_path):
    ubuntu_var_log(tmp_path)
    os.chown(tmp_path / "var/log", 0, ALICE)  # a user's group, not the distribution's
    with pytest.raises(trust.UntrustedDir, match="is writable by group 1000"):
        trust.open_dir("/var/log/gpuenv", str(tmp_path), make=0o755)
    assert not (tmp_path / "var/log/gpuenv").exists()


def test_a_link_on_the_way_counts_as_what_it_points_at(tmp_path):
    real = tmp_path / "data/log"
    real.mkdir(parents=True)
    (tmp_path / "var").mkdir()
    (tmp_path / "var/log").symlink_to("../data/log")
    os.close(trust.open_dir("/var/log", str(tmp_path)))
    os.chown(real, ALICE, ALICE)
    with pytest.raises(trust.UntrustedDir, match=f"^{tmp_path}/var/data/log|^{tmp_path}/var/log/.. |belongs to uid 1000"):
        trust.open_dir("/var/log", str(tmp_path))


def test_the_syslog_group_attack_on_roots_log_is_refused_and_nothing_reaches_etc(tmp_path):
    """Issue 40: Ubuntu ships /var/log root:syslog 0775. A member of syslog renames
    /var/log/gpuenv away and puts a link to /etc in its place: root's apply log would be written
    into /etc. Now the apply is refused before any change (exit 3, via JournalError) and the log
    is never written through the link."""
    ubuntu_var_log(tmp_path)
    etc = tmp_path / "etc"
    etc.mkdir()
    (tmp_path / "var/log/gpuenv").mkdir()
    journal = Journal(str(tmp_path))
    journal.log("before")  # the honest layout: written, root's alone
    assert (tmp_path / "var/log/gpuenv/apply.log").read_text() == "before\n"
    assert oct((tmp_path / "var/log/gpuenv/apply.log").stat().st_mode & 0o777) == "0o600"
    # The attack, by a member of the group (its uid owns the link it makes).
    os.rename(tmp_path / "var/log/gpuenv", tmp_path / "var/log/gpuenv.old")
    (tmp_path / "var/log/gpuenv").symlink_to("../../etc")
    os.lchown(tmp_path / "var/log/gpuenv", ALICE, SYSLOG)
    with pytest.raises(JournalError, match="var/log/gpuenv is a symbolic link in .*var/log, which others can write"):
        Journal(str(tmp_path)).acquire()
    Journal(str(tmp_path)).log("after")
    assert list(etc.iterdir()) == []
    assert not (tmp_path / "var/lib/gpuenv").exists()  # refused before any change


# -- temporary directories ---------------------------------------------------------------------------


def test_tmpdir_is_used_only_where_it_passes_the_rule(tmp_path, monkeypatch):
    mine = tmp_path / "root-tmp"
    mine.mkdir(mode=0o700)
    monkeypatch.setenv("TMPDIR", str(mine))
    assert trust.temp_parent() == str(mine)
    os.chown(mine, ALICE, ALICE)
    assert trust.temp_parent() in ("/run", "/tmp", "/var/tmp")


def test_the_tmpdir_attack_on_matrix_update_finds_nothing_to_swap(tmp_path, monkeypatch, request):
    """Issue 40: root runs `matrix update` with alice's TMPDIR (sudo -E). Right after the bundle's
    sha256 is checked, alice moves the staging directory aside and puts her own repos.json in
    its place. The bundle root installs must be the one that was hashed."""
    monkeypatch.setenv("GPUENV_STATE_DIR", str(tmp_path / "state"))
    M.clear_cache()
    shared = Path(tempfile.mkdtemp(dir="/tmp"))  # where alice can reach (pytest's tmp_path is root's 0700)
    request.addfinalizer(lambda: shutil.rmtree(shared))
    os.chmod(shared, 0o755)
    theirs = shared / "alice-tmp"
    theirs.mkdir()
    os.chown(theirs, ALICE, ALICE)
    monkeypatch.setenv("TMPDIR", str(theirs))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again, as a new process does
    good = copy_bundle(tmp_path, "2099.07.01")
    evil = copy_bundle(shared, "2099.07.01", name="evil")
    for bundle in (good, evil):  # the vendor repositories and keys: what the attack is after
        shutil.copyfile(Path(M.bundled_dir()) / "repos.json", bundle / "repos.json")
    edit(evil / "repos.json", lambda doc: doc.__setitem__("about", "EVIL"))
    os.chmod(evil, 0o755)
    staged_in: list[Path] = []
    real_stage = B.stage

    def stage_then_attack(source: str, sha256: str, workdir: Path) -> Path:
        bundle = real_stage(source, sha256, workdir)  # the sha256 is checked here
        staged_in.append(workdir)
        as_alice(
            'for d in "$T"/gpuenv-matrices-*; do [ -d "$d" ] || continue; mv "$d" "$d.gone"; '
            'mkdir -p "$d/bundle"; cp "$E"/* "$d/bundle/"; done',
            T=str(theirs), E=str(evil),
        )  # fmt: skip
        return bundle

    monkeypatch.setattr(B, "stage", stage_then_attack)
    try:
        B.install(str(good), B.digest(good))
        installed = json.loads((tmp_path / "state/matrices/repos.json").read_text())
    finally:
        M.clear_cache()
    assert installed["about"] != "EVIL"
    assert staged_in and trust.untrusted(str(staged_in[0].parent)) is None
    assert not str(staged_in[0]).startswith(str(theirs))


# -- what root starts starts in / ----------------------------------------------------------------------


def test_a_command_root_runs_never_imports_from_the_callers_directory(open_tmp, monkeypatch):
    """Issue 40, the bootstrap's fault in gpuenv's own runner: `python3 -m venv` (the torch step's)
    run as root from another account's directory ran its venv.py. Commands start in /."""
    from gpuenv.execute.runner import Runner

    here = open_tmp / "h"
    here.mkdir()
    mark = open_tmp / "ran"
    (here / "venv.py").write_text(f"open({str(mark)!r}, 'w').write('ran')\n")
    for path in (here, here / "venv.py"):
        os.chown(path, 65534, 65534)
    monkeypatch.chdir(here)
    done = Runner("/").run(["python3", "-m", "venv", "--help"], host=True, check=False)
    assert done.ok and "usage" in done.output
    assert not mark.exists()
