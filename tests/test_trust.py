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
    assert untrusted(str(link)) == f"{target} belongs to uid 1000"


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
    assert untrusted(str(open_dir / "plan.json")) == f"{open_dir} is writable by everyone (mode 0777)"


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
    monkeypatch.setattr(trust, "_SETPRIV", (str(tmp_path / "no-setpriv"),))
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
