"""As whom, and with which flags, root runs an interpreter someone named (``gpuenv.interpreter``):
the files it judges before running anything (the interpreter, the standard library under its
prefix and under a venv's base), the import path it learns by running it with ``-I -S``, the site
directories and what their .pth files add; and how ``output`` and ``kill`` end a run that fails or
hangs. Fake interpreters, shell scripts that print a chosen answer, stand in where only the
answer matters; the calls run in this process, so a change to the module is what they see."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from gpuenv import interpreter, trust

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the ownership rules are root's (CI is root)")


def script(path: Path, body: str) -> str:
    """An executable shell script at ``path``, root's when root writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def answering(path: Path, doc: object) -> str:
    """A fake interpreter that prints ``doc`` as its import path, whatever it is asked."""
    return script(path, f"cat <<'EOF'\n{json.dumps(doc)}\nEOF\n")


def library(path: Path, owner: tuple[int, int] | None = None) -> Path:
    """A directory with one module in it, the module owned by ``owner`` when given."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "mod.py").write_text("")
    if owner:
        os.chown(path / "mod.py", *owner)
    return path


def as_account(uid: int, gid: int) -> list[str]:
    return [f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]


# -- the import path it learns ----------------------------------------------------------------------


@AS_ROOT
@pytest.mark.parametrize(
    "body",
    ["exit 1\n", "echo not JSON\n", "echo '[\"/usr/lib\"]'\n", "echo '\"/usr/lib\"'\n"],
    ids=["fails", "not-json", "a-list", "a-string"],
)
def test_an_interpreter_that_gives_no_import_path_runs_as_root_without_site(tmp_path, body):
    python = script(tmp_path / "fake/bin/python", body)
    assert interpreter._account(python) == ([], ["-S"])


@AS_ROOT
def test_an_import_path_only_root_could_write_runs_as_root_with_site(tmp_path):
    lib = library(tmp_path / "lib")
    python = answering(tmp_path / "fake/bin/python", {"path": [str(lib)], "site": []})
    assert interpreter._account(python) == ([], [])


@AS_ROOT
@pytest.mark.parametrize("key", ["path", "site"])
def test_an_entry_another_account_owns_runs_it_as_that_account(tmp_path, key):
    theirs = library(tmp_path / "theirs", owner=(1000, 1001))
    doc = {"path": [str(library(tmp_path / "lib"))], "site": []}
    doc[key].append(str(theirs))
    python = answering(tmp_path / "fake/bin/python", doc)
    prefix, flags = interpreter._account(python)
    assert prefix[1:] == as_account(1000, 1001) and flags == []


@AS_ROOT
def test_relative_and_non_string_entries_are_not_the_import_path(tmp_path, monkeypatch):
    # "rel" would be the caller's directory's: the interpreter runs in /, where it is not.
    monkeypatch.chdir(tmp_path)
    library(tmp_path / "rel", owner=(1000, 1000))
    python = answering(tmp_path / "fake/bin/python", {"path": ["", "rel", 5, None], "site": None})
    assert interpreter._account(python) == ([], [])
    assert interpreter._import_path(python) == []


@AS_ROOT
def test_a_venv_adds_its_site_packages_and_what_their_pth_files_add(tmp_path):
    venv = tmp_path / "venv"
    python = answering(venv / "bin/python", {"path": [], "site": []})
    (venv / "pyvenv.cfg").write_text(f"home = {tmp_path / 'base/bin'}\n")
    site = venv / "lib/python3.99/site-packages"
    site.mkdir(parents=True)
    (site / "extra.pth").write_text("more\n")
    assert interpreter._import_path(python) == [str(site), str(site / "more")]
    # what the .pth file adds is judged with the rest
    library(site / "more", owner=(1000, 1002))
    assert interpreter._account(python)[0][1:] == as_account(1000, 1002)


@AS_ROOT
def test_an_interpreter_another_account_owns_runs_as_that_account_unrun(tmp_path):
    ran = tmp_path / "ran"
    python = script(tmp_path / "fake/bin/python", f"touch {ran}\necho '{{}}'\n")
    os.chown(python, 1000, 1004)
    prefix, flags = interpreter._account(python)
    assert prefix[1:] == as_account(1000, 1004) and flags == []
    assert not ran.exists()  # nothing else is asked of it as root


# -- the standard library, judged before the interpreter runs ---------------------------------------


@AS_ROOT
def test_a_standard_library_another_account_owns_runs_it_as_that_account_unrun(tmp_path, monkeypatch):
    ran = tmp_path / "ran"
    python = script(tmp_path / "prefix/bin/python", f"touch {ran}\nexit 1\n")
    stdlib = library(tmp_path / "prefix/lib/python3.99", owner=(1000, 1001))
    prefix, flags = interpreter._account(python)
    assert prefix[1:] == as_account(1000, 1001) and flags == []
    assert not ran.exists()  # judged from its files alone: it was never started as root
    # Without a setpriv of root's it is not run at all, and the one line says why.
    monkeypatch.setattr(trust, "SYSTEM_PATH", (str(tmp_path / "no-setpriv-here"),))
    with pytest.raises(RuntimeError) as exc:
        interpreter._account(python)
    assert str(exc.value).startswith(f"{python}: another account could change it ({stdlib / 'mod.py'} belongs to uid 1000 (mode 0644))")


def test_the_standard_library_is_looked_for_under_the_binary_and_a_venvs_base(tmp_path):
    base = tmp_path / "base"
    (base / "lib/python3.99").mkdir(parents=True)
    (base / "lib/libpython3.99.so").write_text("")
    (base / "lib/other").mkdir()
    venv = tmp_path / "venv"
    python = script(venv / "bin/python", "exit 1\n")
    (venv / "lib/python3.99").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\n")
    assert interpreter._stdlib(python) == sorted(
        [str(base / "lib/libpython3.99.so"), str(base / "lib/python3.99"), str(venv / "lib/python3.99")]
    )
    # An empty home names no base (not the current directory's).
    (venv / "pyvenv.cfg").write_text("home =\n")
    assert interpreter._stdlib(python) == [str(venv / "lib/python3.99")]


@AS_ROOT
def test_a_venvs_base_library_another_account_owns_runs_it_as_that_account(tmp_path):
    base = tmp_path / "base"
    library(base / "lib/python3.99", owner=(1000, 1003))
    venv = tmp_path / "venv"
    python = script(venv / "bin/python", "exit 1\n")
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\n")
    assert interpreter._account(python)[0][1:] == as_account(1000, 1003)


def test_pyvenv_cfg_is_read_beside_the_interpreter_and_one_directory_up(tmp_path):
    python = script(tmp_path / "venv/bin/python", "exit 1\n")
    assert interpreter._venv_cfgs(python) == []
    (tmp_path / "venv/pyvenv.cfg").write_text("home = /b\n")
    (tmp_path / "venv/bin/pyvenv.cfg").write_text("home = /a\n")
    assert interpreter._venv_cfgs(python) == [str(tmp_path / "venv/bin/pyvenv.cfg"), str(tmp_path / "venv/pyvenv.cfg")]


def test_pyvenv_cfg_keys_are_lower_case_and_lines_without_a_value_are_skipped(tmp_path):
    cfg = tmp_path / "pyvenv.cfg"
    cfg.write_text("Home = /opt/py/bin\nnot a setting\n include-system-site-packages=false \n")
    assert interpreter._cfg(str(cfg)) == {"home": "/opt/py/bin", "include-system-site-packages": "false"}
    assert interpreter._cfg(str(tmp_path / "none.cfg")) == {}


# -- .pth files and nested directories --------------------------------------------------------------


def test_pth_files_add_their_directories_but_not_comments_blanks_or_import_lines(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.pth").write_text("# a comment\n\n   \nimport os\nimport\tsys\nrel/dir\n/abs/dir  \n")
    (site / "b.pth").mkdir()  # not a file: skipped
    (site / "c.pth").write_text("other\n")
    assert sorted(interpreter._pth_dirs(str(site))) == sorted(
        [str(site / "rel/dir"), "/abs/dir", str(site / "other")]
    )


def test_only_the_outermost_paths_are_walked(tmp_path):
    paths = ["/a/b", "/a", "/ab", "/a/", "/c/d/../e", "/c/e/f", "/x/y", "/x/yz"]
    assert interpreter._outermost(paths) == ["/a", "/ab", "/c/e", "/x/y", "/x/yz"]


# -- a run that fails or hangs ----------------------------------------------------------------------


@pytest.fixture
def not_root(monkeypatch):
    """Start as a user would: no account to work out (this interpreter's files are not judged)."""
    monkeypatch.setattr(os, "geteuid", lambda: 1000)


@pytest.mark.parametrize(
    "code, message",
    [
        ("import sys; sys.stderr.write('first\\nsecond\\nlast\\n'); sys.exit(3)", "failed: last"),
        ("import sys; sys.exit(4)", "failed: exit status 4"),
    ],
)
def test_a_failed_run_is_one_line_with_its_last_words(not_root, code, message):
    with pytest.raises(RuntimeError) as exc:
        interpreter.output(sys.executable, ["-c", code], "", timeout=60)
    assert str(exc.value) == f"{sys.executable} {message}"


def test_an_answer_is_what_it_printed_for_its_input(not_root):
    code = "import sys; print(sys.stdin.read()[::-1])"
    assert interpreter.output(sys.executable, ["-c", code], "abc", timeout=60) == "cba\n"


def test_a_hang_is_killed_and_reaped(not_root, monkeypatch):
    started = []
    start = interpreter.start
    monkeypatch.setattr(interpreter, "start", lambda *a, **k: started.append(start(*a, **k)) or started[-1])
    with pytest.raises(RuntimeError) as exc:
        interpreter.output(sys.executable, ["-c", "import time; time.sleep(60)"], "", timeout=0.5)
    assert str(exc.value) == f"{sys.executable} did not answer within 0.5 s"
    assert started[0].returncode == -signal.SIGKILL


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def test_kill_ends_the_whole_session_it_started(not_root):
    code = "import subprocess, time; print(subprocess.Popen(['sleep', '60']).pid, flush=True); time.sleep(60)"
    proc = interpreter.start(sys.executable, ["-c", code])
    assert os.getsid(proc.pid) == proc.pid  # a session of its own
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    interpreter.kill(proc)
    assert proc.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while _state(child) not in ("gone", "Z", "X") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(child) in ("gone", "Z", "X")  # its child too: dead, if not yet reaped by init
