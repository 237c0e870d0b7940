"""Every interpreter gpuenv starts (``gpuenv.interpreter``): in /, isolated and with a fixed
environment as root, and as root only when no other account could have written what it imports.

The hostile files write the effective uid they ran as into a marker in a sticky directory, so a
test sees both whether they ran and as whom."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gpuenv import interpreter

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the isolation and ownership rules are root's (CI is root)")
SYSTEM_PYTHON = "/usr/bin/python3"
HAS_SYSTEM_PYTHON = pytest.mark.skipif(not os.access(SYSTEM_PYTHON, os.X_OK), reason="a system python3 any account can run")


def hostile(marker: Path) -> str:
    return f'import os\nopen({str(marker)!r}, "a").write("%d\\n" % os.geteuid())\n'


@pytest.fixture
def open_tmp():
    """A directory under /tmp that another account can reach (pytest's own are root's alone)."""
    top = Path(tempfile.mkdtemp(prefix="gpuenv-interp-", dir="/tmp"))
    os.chmod(top, 0o755)
    notes = top / "notes"
    notes.mkdir()
    os.chmod(notes, 0o1777)
    yield top
    shutil.rmtree(top)


def gpuenv(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    full.update(env or {})
    # -I: gpuenv's own interpreter ignores them (what is tested is what it passes on).
    return subprocess.run([sys.executable, "-I", "-m", "gpuenv", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=180, check=False)  # fmt: skip


def ran(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


# -- the caller's current directory and environment ------------------------------------------------


@AS_ROOT
@HAS_SYSTEM_PYTHON
@pytest.mark.parametrize("command", [["doctor", "--json"], ["probe", "--json"], ["verify", "--json", "--timeout", "60"]])
def test_modules_in_the_current_directory_or_on_pythonpath_never_run_as_root(open_tmp, command):
    marker = open_tmp / "notes" / "ran"
    cwd = open_tmp / "proj"  # alice's project, where root typed the command
    lib = open_tmp / "lib"  # on PYTHONPATH, kept by sudo -E or env_keep
    for d in (cwd, lib):
        d.mkdir()
        for name in ("json", "platform", "sitecustomize", "usercustomize", "os", "torch"):
            (d / f"{name}.py").write_text(hostile(marker))
    env = {"PYTHONPATH": str(lib), "PYTHONSTARTUP": str(lib / "json.py"), "PYTHONUSERBASE": str(lib)}
    args = [*command, "--python", SYSTEM_PYTHON]
    done = gpuenv(*args, cwd=cwd, env=env)
    assert done.stdout.startswith("{"), done.stderr
    assert ran(marker) == [], done.stdout[-2000:]


@AS_ROOT
def test_as_root_the_interpreter_runs_isolated_in_slash_with_a_fixed_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    code = "import json, os, sys; print(json.dumps([os.getcwd(), sys.flags.isolated, sys.path, dict(os.environ)]))"
    proc = interpreter.start(sys.executable, ["-c", code], keep=("CUDA_VISIBLE_DEVICES",))
    out, err = proc.communicate(timeout=60)
    cwd, isolated, path, env = json.loads(out)
    assert (cwd, isolated) == ("/", 1), err
    assert str(tmp_path) not in path and "" not in path
    assert env == {**interpreter.ENV, "CUDA_VISIBLE_DEVICES": "1"}


def test_not_root_it_keeps_the_callers_environment_but_never_its_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", "/nonexistent-gpuenv-test")
    (tmp_path / "json.py").write_text("raise SystemExit('the current directory was imported')\n")
    code = "import json, os, sys\nprint(json.dumps([os.getcwd(), sys.path]))\n"
    out = interpreter.output(sys.executable, ["-"], code, timeout=60)
    cwd, path = json.loads(out)
    assert cwd == "/" and "/nonexistent-gpuenv-test" in path


def pythons() -> list[str]:
    """This interpreter and every other one here, from 3.8 (the oldest a target may be)."""
    found = {sys.executable, *glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))}
    if os.access(SYSTEM_PYTHON, os.X_OK):
        found.add(SYSTEM_PYTHON)
    out = []
    for exe in sorted(found):
        version = subprocess.run([exe, "-c", "import sys; print(sys.version_info >= (3, 8))"],
                                 capture_output=True, text=True, check=False).stdout  # fmt: skip
        if version.strip() == "True":
            out.append(exe)
    return out


@AS_ROOT
@pytest.mark.parametrize("python", pythons())
def test_isolation_holds_on_every_python_from_3_8(python, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "json.py").write_text("raise SystemExit('the current directory was imported')\n")
    out = interpreter.output(python, ["-"], "import json, sys\nprint(json.dumps(sys.path))\n", timeout=60)
    assert "" not in json.loads(out) and str(tmp_path) not in json.loads(out)


# -- what the interpreter imports: its own files, as root -------------------------------------------


def root_venv(top: Path) -> tuple[Path, Path]:
    """A venv of the system python3 owned by root, with a .pth file (run at every start) that
    notes the effective uid in top/notes/ran; (its python, its site-packages)."""
    venv = top / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    marker = top / "notes" / "ran"
    (site / "note.pth").write_text(f'import os; open({str(marker)!r}, "a").write("%d\\n" % os.geteuid())\n')
    return venv / "bin/python", site


@AS_ROOT
@HAS_SYSTEM_PYTHON
@pytest.mark.parametrize("command", [["doctor", "--json"], ["verify", "--json", "--timeout", "60"]])
@pytest.mark.parametrize("what", ["site-packages", "pth", "package", "pth-dir"])
def test_a_root_venv_another_account_can_write_into_never_runs_as_root(open_tmp, command, what):
    marker = open_tmp / "notes" / "ran"
    python, site = root_venv(open_tmp)
    if what == "site-packages":  # the directory itself is alice's: she can add any .pth or module
        os.chown(site, 1000, 1000)
    elif what == "pth":  # one .pth file of hers, run at every start
        os.chown(site / "note.pth", 1000, 1000)
    elif what == "package":  # the case: a torch package she owns inside root's venv
        (site / "torch").mkdir()
        (site / "torch" / "__init__.py").write_text(hostile(marker))
        os.chown(site / "torch", 1000, 1000)
        os.chown(site / "torch" / "__init__.py", 1000, 1000)
    else:  # a root .pth adding a directory of hers, where her sitecustomize waits
        extra = open_tmp / "alice-lib"
        extra.mkdir()
        (extra / "sitecustomize.py").write_text(hostile(marker))
        os.chown(extra, 1000, 1000)
        (site / "extra.pth").write_text(f"{extra}\n")
    done = gpuenv(*command, "--python", str(python), cwd=Path("/"))
    assert done.stdout.startswith("{"), done.stderr
    assert ran(marker) and set(ran(marker)) == {"1000"}, (ran(marker), done.stdout[-2000:])


@AS_ROOT
@HAS_SYSTEM_PYTHON
def test_a_root_venv_no_one_else_can_write_still_runs_as_root(open_tmp):
    marker = open_tmp / "notes" / "ran"
    python, site = root_venv(open_tmp)
    done = gpuenv("doctor", "--json", "--python", str(python), cwd=Path("/"))
    assert done.stdout.startswith("{"), done.stderr
    assert set(ran(marker)) == {"0"}


@AS_ROOT
@HAS_SYSTEM_PYTHON
def test_a_group_writable_directory_on_the_import_path_runs_it_as_nobody(open_tmp):
    marker = open_tmp / "notes" / "ran"
    python, site = root_venv(open_tmp)
    os.chmod(site, 0o775)
    done = gpuenv("doctor", "--json", "--python", str(python), cwd=Path("/"))
    assert done.stdout.startswith("{"), done.stderr
    assert set(ran(marker)) == {"65534"}


@AS_ROOT
def test_without_setpriv_such_an_interpreter_is_refused_in_one_line(open_tmp, monkeypatch):
    from gpuenv import trust

    python, site = root_venv(open_tmp)
    os.chown(site, 1000, 1000)
    monkeypatch.setattr(trust, "SYSTEM_PATH", (str(open_tmp / "no-setpriv-here"),))
    with pytest.raises(RuntimeError, match="belongs to uid 1000.*not run as root") as exc:
        interpreter.start(str(python), ["-c", "pass"])
    assert "\n" not in str(exc.value)


@AS_ROOT
def test_a_link_on_the_import_path_is_judged_by_where_it_leads(tmp_path):
    from gpuenv.trust import untrusted_tree

    site, theirs = tmp_path / "site", tmp_path / "theirs"
    site.mkdir()
    theirs.mkdir()
    (theirs / "mod.py").write_text("")
    (site / "pkg").symlink_to(theirs)
    assert untrusted_tree(str(site)) is None
    os.chown(theirs / "mod.py", 1000, 1001)
    assert untrusted_tree(str(site)) == (f"{theirs / 'mod.py'} belongs to uid 1000 (mode 0644)", (1000, 1001))
    assert untrusted_tree(str(tmp_path / "not-there")) is None
