"""The test that watches every file root touches (issue 40): as root, under
``strace -f -e trace=execve,openat,open,rename,renameat2`` (and the process calls, to follow
each child), run

- ``bootstrap.sh --dry-run`` from a hostile working directory (another account's, holding a
  venv.py and a json.py),
- ``gpuenv install rocm --dry-run`` and ``gpuenv apply --dry-run`` on a sysroot fixture,
- ``gpuenv doctor --python`` on a venv of another account's,
- ``gpuenv matrix update`` from a local directory,

and assert that every file root executed (execve) or opened for reading, and every directory a
rename happened in, passes the rule (gpuenv.trust.untrusted: root's, no other account can write
it or a directory above it, links counted as what they lead to).

What a process does once it has exec'd setpriv with another --reuid (and what its children do)
is that account's, not root's, and is not judged. The allow-list holds only what the rule itself
leaves out, each with its reason (``ALLOWED``). The gpuenv under test must itself be root's (the
installed wheel under tests/run.sh, whoever owns the clone): otherwise root would be running
another account's gpuenv, and the test says so and skips.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import gpuenv
from gpuenv.trust import untrusted, untrusted_dir

REPO = Path(__file__).resolve().parents[1]
BIN = str(Path(sys.executable).with_name("gpuenv"))
ROOTS = REPO / "tests/roots"
MACHINE = "ubuntu2404-rx9070xt-raphael-fresh"
TRACE = "execve,openat,open,rename,renameat2,clone,clone3,fork,vfork"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="watches what root runs: run as root"),
    pytest.mark.skipif(not os.path.exists(BIN), reason=f"no gpuenv console script at {BIN}"),
]


@pytest.fixture(autouse=True)
def checkout_is_roots():
    assert shutil.which("strace"), "strace is missing: apt-get install strace (see tests/run.sh)"
    # The gpuenv that BIN runs: the installed wheel's under tests/run.sh (root's, whoever owns the
    # clone), the checkout's src/ when installed editable.
    for path in (Path(gpuenv.__file__).parent, Path(sys.executable), Path(BIN)):
        why = untrusted(str(path))
        if why:
            pytest.skip(f"the gpuenv under test could be changed by another account ({why}): root running it "
                        "breaks the rule before any test does")  # fmt: skip


# -- reading strace's record ----------------------------------------------------------------------------

_STR = r'"((?:[^"\\]|\\.)*)"'
_DIRFD = r"(?:AT_FDCWD|-?\d+)(?:<([^>]*)>)?"
_EXECVE = re.compile(rf"^execve\({_STR}, \[(.*?)\](?:, .*)?\)\s+= 0$")
_OPEN = re.compile(rf"^(?:openat\({_DIRFD}, |open\(){_STR}, ([A-Z_|]+)(?:, 0\d+)?\)\s+= (\d+)")
_RENAME = re.compile(rf"^rename(?:at2?)?\((?:{_DIRFD}, )?{_STR}, (?:{_DIRFD}, )?{_STR}(?:, \w+)?\)\s+= 0$")
_CHILD = re.compile(r"^(?:clone3?|v?fork)\(.*\)\s+= (\d+)$")
_REUID = re.compile(r'"--reuid=(\d+)"')


def _text(s: str) -> str:
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


def _joined(dirpath: str | None, name: str) -> str:
    return name if name.startswith("/") or not dirpath else os.path.join(dirpath, name)


@dataclass
class Act:
    kind: str  # exec | read | rename
    path: str
    pid: int
    flags: str = ""


@dataclass
class Record:
    acts: list[Act] = field(default_factory=list)  # as root
    not_root: dict[int, int] = field(default_factory=dict)  # pid -> the uid it switched to


def read_record(prefix: Path, first: int) -> Record:
    """The acts of root's processes, from ``strace -ff -o PREFIX`` (one file per process)."""
    files = {int(p.name.rsplit(".", 1)[1]): p for p in prefix.parent.glob(prefix.name + ".*")}
    record = Record()
    todo = [(first, None)]
    while todo:
        pid, uid = todo.pop()
        if pid not in files:
            continue
        for line in files[pid].read_text("latin-1").splitlines():
            if uid is not None:
                if m := _CHILD.match(line):
                    todo.append((int(m.group(1)), uid))
                continue
            if m := _CHILD.match(line):
                todo.append((int(m.group(1)), None))
            elif m := _EXECVE.match(line):
                record.acts.append(Act("exec", _text(m.group(1)), pid))
                if (r := _REUID.search(m.group(2))) and os.path.basename(_text(m.group(1))) == "setpriv" and r.group(1) != "0":
                    uid = int(r.group(1))  # from here on this process (and what it starts) is that account
                    record.not_root[pid] = uid
            elif m := _OPEN.match(line):
                flags = m.group(3)
                if "O_WRONLY" not in flags and "O_RDWR" not in flags:
                    record.acts.append(Act("read", _joined(m.group(1), _text(m.group(2))), pid, flags))
            elif m := _RENAME.match(line):
                for d, name in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
                    record.acts.append(Act("rename", os.path.dirname(_joined(d, _text(name))) or "/", pid))
    return record


# What the rule itself leaves out, each with why:
ALLOWED = (
    # The kernel's own interfaces: procfs, sysfs and device nodes are no files an account writes
    # code or data into (/dev/null is 0666 by design and holds nothing).
    ("/proc/", "kernel interface"),
    ("/sys/", "kernel interface"),
    ("/dev/", "device nodes"),
)


def judged(record: Record, facts_inputs: tuple[str, ...] = (), listed: tuple[str, ...] = ()) -> list[str]:
    """Every act of root's that fails the rule, as 'kind path: why'. ``facts_inputs``: trees read
    as the machine's facts (a sysroot: untrusted input by design, parsed by the one reader, never
    run or imported); ``listed``: trees root only lists and stats to judge them (a user's venv,
    through trust.untrusted_tree), never reads a file of."""
    bad = []
    seen = set()
    for act in record.acts:
        key = (act.kind, act.path)
        if key in seen:
            continue
        seen.add(key)
        path = os.path.normpath(act.path)
        if any(path.startswith(prefix) for prefix, _ in ALLOWED):
            continue
        if act.kind == "read" and any(path == t or path.startswith(t + "/") for t in facts_inputs):
            continue
        if act.kind == "read" and "O_DIRECTORY" in act.flags and any(path == t or path.startswith(t + "/") for t in listed):
            continue
        why = untrusted(path)
        if why and not why.endswith("does not exist"):  # a temporary file since removed: judged by its directory
            bad.append(f"{act.kind} {path}: {why}")
        elif why and (parent := untrusted_dir(os.path.dirname(path))) and not parent.endswith("No such file or directory"):
            bad.append(f"{act.kind} {path}: {parent}")
    return bad


def watched(argv: list[str], work: Path, *, cwd: str = "/", env: dict[str, str] | None = None,
            timeout: int = 300) -> tuple[subprocess.CompletedProcess, Record]:  # fmt: skip
    prefix = work / "trace" / "t"
    prefix.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["strace", "-f", "-ff", "-qq", "-y", "-s", "4096", "-e", f"trace={TRACE}", "-o", str(prefix), "--", *argv],
        cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    first = min(int(p.name.rsplit(".", 1)[1]) for p in prefix.parent.glob("t.*"))
    return done, read_record(prefix, first)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUENV_", "SUDO_"))}
    return {**env, "COLUMNS": "200", **extra}


@pytest.fixture
def box(open_tmp):
    root = open_tmp / "box"
    shutil.copytree(ROOTS / MACHINE, root, symlinks=True)
    return root


# -- the runs ---------------------------------------------------------------------------------------------


def test_the_watcher_sees_what_root_reads_and_runs_of_another_accounts(open_tmp, tmp_path):
    """The watch itself can fail: root reading alice's file and running alice's program are
    both reported; the same program run through setpriv as alice is hers, not root's."""
    theirs = open_tmp / "theirs"
    theirs.write_text("data\n")
    tool = open_tmp / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    for path in (theirs, tool):
        os.chown(path, 1000, 1000)
    _, record = watched(["/bin/sh", "-c", f"cat {theirs} >/dev/null; {tool}"], tmp_path)
    said = judged(record)
    assert f"read {theirs}: {theirs} belongs to uid 1000 (mode 0644)" in said
    assert f"exec {tool}: {tool} belongs to uid 1000 (mode 0755)" in said
    _, record = watched(["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", str(tool)], tmp_path / "as")
    assert record.not_root and judged(record) == []


def test_install_dry_run_on_a_sysroot(box, tmp_path):
    done, record = watched([BIN, "install", "rocm", "--dry-run", "--root", str(box)], tmp_path)
    assert done.returncode in (0, 3), done.stderr
    assert "dry run: nothing was changed" in done.stdout
    assert any(a.kind == "exec" for a in record.acts) and len(record.acts) > 50
    assert judged(record, facts_inputs=(str(box),)) == []


def test_apply_dry_run_of_a_saved_plan(box, tmp_path):
    plan = tmp_path / "p.json"
    made = subprocess.run([BIN, "plan", "rocm", "--root", str(box), "--out", str(plan)], env=_env(), cwd="/",
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert made.returncode == 0, made.stderr
    done, record = watched([BIN, "apply", str(plan), "--dry-run", "--root", str(box)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert any(a.kind == "read" and a.path == str(plan) for a in record.acts)  # the plan was judged, then read
    assert judged(record, facts_inputs=(str(box),)) == []


def test_doctor_python_on_a_users_venv(open_tmp, tmp_path):
    venv = open_tmp / "alice-venv"
    os.chown(open_tmp, 1000, 1000)
    made = subprocess.run(["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "/usr/bin/python3", "-I",
                           "-m", "venv", "--without-pip", str(venv)], cwd="/", capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert made.returncode == 0, made.stderr
    mark = open_tmp / "pth-ran"
    pth = next((venv / "lib").glob("*/site-packages")) / "evil.pth"  # another account's code on a .pth path
    pth.write_text(f"import os; open({str(mark)!r}, 'a').write('ran as %d\\n' % os.getuid())\n")
    os.chown(pth, 1000, 1000)
    done, record = watched([BIN, "doctor", "--python", str(venv / "bin/python"), "--json"], tmp_path)
    assert done.returncode in (0, 1, 5), done.stderr
    assert record.not_root, "the venv's python ran as root"  # it ran, as alice, through setpriv
    assert not any(a.kind == "exec" and a.path.startswith(str(venv)) for a in record.acts)
    assert judged(record, listed=(str(venv),)) == []
    assert not mark.exists() or set(mark.read_text().splitlines()) == {"ran as 1000"}


def test_matrix_update_from_a_local_directory(tmp_path):
    from gpuenv import matrixbundle
    from tests.test_matrices import copy_bundle

    bundle = copy_bundle(tmp_path, "2099.09.01")
    state = tmp_path / "state"
    done, record = watched([BIN, "matrix", "update", "--from", str(bundle), "--sha256", matrixbundle.digest(bundle)],
                           tmp_path, env=_env(GPUENV_STATE_DIR=str(state)))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((state / "matrices/bundle.json").read_text())["version"] == "2099.09.01"
    assert any(a.kind == "rename" for a in record.acts)
    assert judged(record) == []


def test_bootstrap_dry_run_from_a_hostile_working_directory(open_tmp, tmp_path, wheel_and_wheelhouse):  # noqa: F811
    from tests.test_bootstrap_trust import HOSTILE
    from tests.test_provision import BOOTSTRAP

    wheel, house = wheel_and_wheelhouse
    here = open_tmp / "h"
    here.mkdir()
    for name in ("venv", "json", "shutil", "encodings", "site"):
        (here / f"{name}.py").write_text(HOSTILE.format(marker=str(open_tmp / "PWNED"), name=name))
    for path in (here, *here.iterdir()):
        os.chown(path, 65534, 65534)
    script = tmp_path / "bootstrap.sh"
    shutil.copy(BOOTSTRAP, script)
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    done, record = watched(["sh", str(script), "--dry-run", "--wheel", str(wheel), "--sha256", sha, "--stack", "cuda"],
                           tmp_path, cwd=str(here), env=_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house)),
                           timeout=600)  # fmt: skip
    assert done.returncode in (0, 3), done.stdout + done.stderr
    assert "ran as" not in done.stdout + done.stderr and not (open_tmp / "PWNED").exists()
    assert not [a for a in record.acts if a.path.startswith(str(here))], "root read the hostile directory"
    assert judged(record) == []


from tests.test_provision import wheel_and_wheelhouse  # noqa: E402, F401 - a fixture
