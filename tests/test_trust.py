"""gpuenv.trust: who could have changed a file root acts on. Symbolic links in a directory others
can write (a sticky /tmp) are judged by their owner, who can replace them at will."""

from __future__ import annotations

import os

import pytest

from gpuenv.trust import untrusted

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="ownership is set up as root (CI is root)")


@pytest.fixture
def sticky(tmp_path):
    """A /tmp-like directory (1777) beside a root-only one holding root's file."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "plan.json").write_text("{}")
    return shared, private / "plan.json"


def test_root_files_in_a_sticky_directory_are_trusted(sticky):
    shared, _ = sticky
    (shared / "mine.json").write_text("{}")
    assert untrusted(str(shared / "mine.json")) is None


def test_a_link_another_account_owns_in_a_sticky_directory_is_not(sticky):
    shared, target = sticky
    link = shared / "plan.json"
    link.symlink_to(target)
    os.lchown(link, 1000, 1000)
    assert untrusted(str(link)) == f"{link} is a symbolic link of uid 1000 in a directory others can write"


def test_roots_own_link_in_a_sticky_directory_is_followed_and_judged_by_its_target(sticky):
    shared, target = sticky
    link = shared / "plan.json"
    link.symlink_to(target)
    assert untrusted(str(link)) is None
    os.chown(target, 1000, 1000)
    assert untrusted(str(link)) == f"{target} belongs to uid 1000 (mode 0644)"


def test_a_link_another_account_owns_where_only_root_writes_is_judged_by_its_target(tmp_path, sticky):
    # Its owner cannot replace it: that takes writing the directory, which is root's alone.
    _, target = sticky
    home = tmp_path / "rootonly"
    home.mkdir(mode=0o755)
    link = home / "plan.json"
    link.symlink_to(target)
    os.lchown(link, 1000, 1000)
    assert untrusted(str(link)) is None


def test_a_link_in_a_directory_others_can_write_without_the_sticky_bit_is_refused_for_the_directory(tmp_path, sticky):
    _, target = sticky
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    (open_dir / "plan.json").symlink_to(target)
    assert untrusted(str(open_dir / "plan.json")) == f"{open_dir} is writable by everyone (owner uid 0, mode 0777)"


# -- an interpreter a user names to the doctor or verify, as root ---------------------------------


def _venv(tmp_path, owner: int, base: str | None = None):
    """A venv of ``base`` (this interpreter by default) whose every file belongs to ``owner``,
    with a .pth file (run at every start of its interpreter) that notes the effective uid it ran
    as."""
    import subprocess
    import sys

    venv = tmp_path / "venv"
    subprocess.run([base or sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    notes = tmp_path / "notes"
    notes.mkdir(mode=0o777)
    os.chmod(notes, 0o1777)
    (site,) = venv.glob("lib/python3*/site-packages")
    (site / "note.pth").write_text(f'import os; open("{notes}/ran", "a").write("%d\\n" % os.geteuid())\n')
    for path in [venv, *venv.rglob("*")]:
        os.lchown(path, owner, owner)
    return venv / "bin/python", notes / "ran"


def test_a_users_venv_runs_as_that_user(tmp_path):
    from gpuenv.trust import unprivileged

    python, _ = _venv(tmp_path, 1000)
    assert unprivileged(str(python)) == ["/usr/bin/setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "--"]


def test_roots_own_interpreter_runs_as_root(tmp_path):
    from gpuenv.trust import unprivileged

    python, _ = _venv(tmp_path, 0)
    assert unprivileged(str(python)) == []


def test_roots_file_where_others_may_write_runs_as_nobody(tmp_path):
    from gpuenv.trust import unprivileged

    shared = tmp_path / "open"
    shared.mkdir()
    os.chmod(shared, 0o777)
    (shared / "python").write_text("")
    assert unprivileged(str(shared / "python"))[1:3] == ["--reuid=65534", "--regid=65534"]


def test_without_setpriv_a_users_interpreter_is_not_run_at_all(tmp_path, monkeypatch):
    from gpuenv import trust

    python, _ = _venv(tmp_path, 1000)
    monkeypatch.setattr(trust, "SYSTEM_PATH", (str(tmp_path / "no-setpriv-here"),))
    with pytest.raises(RuntimeError, match="belongs to uid 1000.*not run as root"):
        trust.unprivileged(str(python))


def test_another_user_runs_what_they_name_as_themselves(tmp_path, monkeypatch):
    from gpuenv.trust import unprivileged

    python, _ = _venv(tmp_path, 1000)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert unprivileged(str(python)) == []


@pytest.fixture
def open_tmp():
    """A directory under /tmp that another account can reach (pytest's own are root's alone)."""
    import shutil
    import tempfile
    from pathlib import Path

    top = Path(tempfile.mkdtemp(prefix="gpuenv-trust-", dir="/tmp"))
    os.chmod(top, 0o755)
    yield top
    shutil.rmtree(top)


@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="a system python3 any account can run")
@pytest.mark.parametrize("command", [["doctor", "--json"], ["verify", "--json", "--timeout", "60"]])
def test_doctor_and_verify_as_root_never_run_a_users_venv_as_root(open_tmp, command):
    import subprocess
    import sys

    python, ran = _venv(open_tmp, 1000, base="/usr/bin/python3")
    done = subprocess.run([sys.executable, "-m", "gpuenv", *command, "--python", str(python)],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.stdout.startswith("{"), done.stderr
    assert ran.read_text().split() and set(ran.read_text().split()) == {"1000"}


def test_a_setpriv_another_account_could_change_is_not_used_either(tmp_path, monkeypatch):
    from gpuenv import trust

    python, _ = _venv(tmp_path, 1000)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "setpriv").write_text("#!/bin/sh\n")
    (bin_dir / "setpriv").chmod(0o755)
    os.chown(bin_dir / "setpriv", 1000, 1000)
    monkeypatch.setattr(trust, "SYSTEM_PATH", (str(bin_dir),))
    with pytest.raises(RuntimeError, match="without a setpriv of root's"):
        trust.unprivileged(str(python))


# -- the walk itself (bench/mutate.py's survivors) -------------------------------------------------


def test_a_link_target_with_parent_steps_is_judged_where_it_lands(tmp_path, sticky):
    _, target = sticky
    here = tmp_path / "rootonly"
    here.mkdir(mode=0o755)
    (here / "up").symlink_to(f"../{target.parent.name}/{target.name}")
    (here / "above-root").symlink_to("/.." + str(target))  # ".." at / stays at /
    assert untrusted(str(here / "up")) is None and untrusted(str(here / "above-root")) is None
    os.chown(target, 1000, 1000)
    assert untrusted(str(here / "up")) == untrusted(str(here / "above-root")) == f"{target} belongs to uid 1000 (mode 0644)"


def test_a_file_in_the_middle_of_a_path_is_no_directory(tmp_path):
    (tmp_path / "file").write_text("")
    assert untrusted(str(tmp_path / "file" / "x")) == f"{tmp_path / 'file'} is not a directory"


def test_a_name_the_system_cannot_look_up_is_said(tmp_path):
    long = tmp_path / ("x" * 300)
    assert untrusted(str(long)) == f"{long}: File name too long"


@pytest.mark.parametrize("links, refused", [(40, False), (41, True)])
def test_at_most_forty_links_are_followed(tmp_path, links, refused):
    (tmp_path / "target").write_text("")
    for i in range(links):
        (tmp_path / f"l{i}").symlink_to(f"l{i + 1}" if i + 1 < links else "target")
    why = untrusted(str(tmp_path / "l0"))
    assert why == (f"too many symbolic links resolving {tmp_path / 'l40'}" if refused else None)


@pytest.mark.parametrize("mode", [0o1770, 0o1707])
def test_a_link_of_another_account_is_refused_whoever_else_may_write_the_sticky_directory(tmp_path, sticky, mode):
    _, target = sticky
    shared = tmp_path / "shared-by-some"
    shared.mkdir()
    os.chmod(shared, mode)
    (shared / "plan.json").symlink_to(target)
    os.lchown(shared / "plan.json", 1000, 1000)
    assert untrusted(str(shared / "plan.json")).endswith("is a symbolic link of uid 1000 in a directory others can write")


def test_the_owner_is_the_programs_own_before_its_directorys(tmp_path):
    from gpuenv.trust import unprivileged

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.chown(bin_dir, 2000, 2000)
    (bin_dir / "python").symlink_to("/usr/bin/python3")
    os.lchown(bin_dir / "python", 1000, 1001)
    assert unprivileged(str(bin_dir / "python"))[1:3] == ["--reuid=1000", "--regid=1001"]
    # Not there at all (a venv being made): its directory's owner.
    assert unprivileged(str(bin_dir / "python3.11"))[1:3] == ["--reuid=2000", "--regid=2000"]


def test_a_bare_name_skips_what_exec_would_skip(tmp_path, monkeypatch):
    from gpuenv import trust

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "tool").write_text("")  # not executable: exec passes it by
    os.chown(first / "tool", 1000, 1000)
    (second / "tool").write_text("#!/bin/sh\n")
    (second / "tool").chmod(0o755)
    monkeypatch.setattr(trust, "SYSTEM_PATH", (str(first), str(second)))
    assert trust.untrusted_program("tool") is None
    os.chown(second / "tool", 1000, 1000)
    assert trust.untrusted_program("tool") == f"{second / 'tool'} belongs to uid 1000 (mode 0755)"
