"""An apply that cannot be turned against its host (issue: ship what is tested). Each test is an
attack or a hostile file that today's main let through, refused as specified, and nothing made.

Plans are made and applied through the command line against a copy of a sysroot fixture (a fresh
Ubuntu 24.04 box, RX 9070 XT beside a Raphael iGPU): every refusal comes before apt is needed.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gpuenv.execute import executor
from gpuenv.execute.runner import Runner, Untrusted
from gpuenv.exitcodes import Exit
from gpuenv.plan import planfile
from gpuenv.plan.plan import Kind, Step
from gpuenv.plan.staleness import facts_digest
from tests.cli_runner import invoke

ROOTS = Path(__file__).parent / "roots"
MACHINE = "ubuntu2404-rx9070xt-raphael-fresh"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the ownership checks apply when gpuenv runs as root")


@pytest.fixture
def box(tmp_path) -> Path:
    root = tmp_path / "box"
    shutil.copytree(ROOTS / MACHINE, root, symlinks=True)
    return root


def made(root: Path) -> list[str]:
    """What gpuenv created in the root: its state and log directories."""
    return [p for p in ("var/lib/gpuenv", "var/log/gpuenv") if (root / p).exists()]


def plan(root: Path, out: Path, *extra: str) -> Path:
    res = invoke(["plan", "rocm", "--root", str(root), "--user", "alice", "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return out


def edit(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def apply(root: Path, path: Path, *extra: str):
    return invoke(["apply", str(path), "--root", str(root), *extra])


# -- the request a saved plan records -------------------------------------------------------------


def test_plan_prints_the_exact_unattended_apply_line(box, tmp_path):
    res = invoke(["plan", "rocm", "--root", str(box), "--user", "alice", "--out", str(tmp_path / "p.json")])
    assert res.exit_code == 0
    assert "--yes --expect 'install rocm --user alice'" in res.stdout
    assert planfile.load(tmp_path / "p.json").request.line() == "install rocm --user alice"


def test_an_edited_venv_with_steps_to_match_is_refused(box, tmp_path):
    """The file's request can be rewritten with its steps to match (the plan made again from it
    is the same): what stops it is the request the user reviewed, repeated with --expect."""
    p = plan(box, tmp_path / "p.json", "--torch", "2.7", "--venv", "/home/alice/venv")
    reviewed = planfile.load(p).request.line()

    def evil(doc):
        doc["request"]["venv"] = "/tmp/evil"
        doc["target"]["torch"]["venv"] = "/tmp/evil"
        for s in doc["steps"]:
            if s["id"] in ("torch", "torch-venv"):
                s["argv"] = [a.replace("/home/alice/venv", "/tmp/evil") for a in s["argv"]]
                s["title"] = s["title"].replace("/home/alice/venv", "/tmp/evil")
                if "creates" in s:
                    s["creates"] = "/tmp/evil/bin/python"

    edit(p, evil)
    res = apply(box, p, "--yes", "--expect", reviewed)
    assert res.exit_code == Exit.REFUSED, res.output
    assert "--expect 'install rocm --torch 2.7 --venv /tmp/evil --user alice'" in res.stderr
    assert made(box) == []


def test_a_request_rewritten_to_read_like_the_reviewed_one_is_refused(box, tmp_path):
    """The venv made to carry the user option: the unquoted line read the same as the reviewed
    request, while the venv and its pip step moved elsewhere and the groups step went away."""
    reviewed = planfile.load(plan(box, tmp_path / "r.json", "--torch", "2.7", "--venv", "/opt/torch")).request
    p = tmp_path / "p.json"
    res = invoke(["plan", "rocm", "--root", str(box), "--out", str(p), "--torch", "2.7",
                  "--venv", "/opt/torch --user alice"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert " ".join(planfile.load(p).request.words()) == reviewed.line()  # what the old line showed
    res = apply(box, p, "--yes", "--expect", reviewed.line())
    assert res.exit_code == Exit.REFUSED, res.output
    assert "--expect 'install rocm --torch 2.7 --venv '\"'\"'/opt/torch --user alice'\"'\"''" in res.stderr
    assert made(box) == []


def test_yes_without_expect_is_refused_for_a_saved_plan(box, tmp_path):
    p = plan(box, tmp_path / "p.json")
    res = apply(box, p, "--yes")
    assert res.exit_code == Exit.REFUSED and "--expect 'install rocm --user alice'" in res.stderr
    assert made(box) == []


def test_without_a_terminal_and_without_yes_nothing_is_applied(box, tmp_path):
    res = apply(box, plan(box, tmp_path / "p.json"))
    assert res.exit_code == Exit.REFUSED and "no terminal" in res.stderr
    assert made(box) == []


@pytest.mark.parametrize(
    "tamper",
    [
        lambda d: next(s for s in d["steps"] if s["kind"] == "apt-source").update(
            content="deb [trusted=yes] http://evil/ x main\n"
        ),
        lambda d: d["steps"].pop(0),
        lambda d: d["steps"].append(
            {"id": "evil", "kind": "command", "title": "harmless", "argv": ["/bin/sh", "-c", "id"]}
        ),
        lambda d: d["target"].update(version="6.4.3"),
    ],
    ids=["source-content", "dropped-step", "added-command", "target"],
)
@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_a_plan_edited_after_planning_is_refused_even_with_force(box, tmp_path, tamper, force):
    p = plan(box, tmp_path / "p.json")
    edit(p, tamper)
    res = apply(box, p, "--yes", "--expect", "install rocm --user alice", *(["--force"] if force else []))
    assert res.exit_code == Exit.REFUSED, res.output
    assert "edited after it was made" in res.stderr
    assert made(box) == []


def test_a_plan_of_gpuenv_0_1_0_without_a_request_is_refused(box, tmp_path):
    p = plan(box, tmp_path / "p.json")
    edit(p, lambda d: d.pop("request"))
    res = apply(box, p, "--yes", "--expect", "install rocm --user alice")
    assert res.exit_code == Exit.REFUSED and "records no request" in res.stderr


def test_a_stale_plan_is_refused(box, tmp_path):
    p = plan(box, tmp_path / "p.json")
    with open(box / "var/lib/dpkg/status", "a") as fh:
        fh.write("\nPackage: newthing\nStatus: install ok installed\nVersion: 1\nArchitecture: amd64\n")
    res = apply(box, p, "--yes", "--expect", "install rocm --user alice", "--force")
    assert res.exit_code == Exit.REFUSED and "stale plan" in res.stderr
    assert made(box) == []


def test_a_root_that_cannot_be_probed_never_skips_the_checks(box, tmp_path):
    p = plan(box, tmp_path / "p.json")
    missing = tmp_path / "gone"
    res = apply(missing, p, "--yes", "--expect", "install rocm --user alice", "--force")
    assert res.exit_code == Exit.REFUSED and "cannot probe" in res.stderr
    assert not missing.exists()


# -- who could have written the plan, and what root runs -------------------------------------------


@AS_ROOT
@pytest.mark.parametrize("how", ["file-mode", "dir-mode", "owner"])
def test_as_root_a_plan_others_could_write_is_refused(box, tmp_path, how):
    d = tmp_path / "plans"
    d.mkdir()
    p = plan(box, d / "p.json")
    if how == "file-mode":
        p.chmod(0o666)
    elif how == "dir-mode":
        d.chmod(0o777)  # no sticky bit: anyone can replace the file
    else:
        os.chown(p, 4242, 4242)
    res = invoke(["apply", str(p), "--root", str(box), "--yes", "--expect", "install rocm --user alice"],
                 env={"SUDO_UID": None})  # fmt: skip
    assert res.exit_code == Exit.REFUSED, res.output
    assert "refusing the plan" in res.stderr
    assert ("writable by" if how != "owner" else "belongs to uid 4242") in res.stderr
    assert made(box) == []


@AS_ROOT
def test_as_root_the_sudo_users_own_plan_is_trusted(box, tmp_path):
    d = tmp_path / "home"
    d.mkdir()
    p = plan(box, d / "p.json")
    os.chown(d, 4242, 4242)
    os.chown(p, 4242, 4242)
    res = invoke(["apply", str(p), "--root", str(box), "--yes", "--expect", "install rocm --user alice"],
                 env={"SUDO_UID": "4242"})  # fmt: skip
    assert "refusing the plan" not in res.stderr


@AS_ROOT
def test_root_never_runs_a_program_another_account_can_write(tmp_path):
    home = tmp_path / "root/home/alice"
    home.mkdir(parents=True)
    evil = home / "venv/bin/python"
    evil.parent.mkdir(parents=True)
    evil.write_text("#!/bin/sh\ntouch /pwned\n")
    evil.chmod(0o755)
    os.chown(home, 1000, 1000)
    with pytest.raises(Untrusted, match="belongs to uid 1000"):
        Runner(str(tmp_path / "root")).run(["/home/alice/venv/bin/python", "-m", "pip"])
    assert not (tmp_path / "root/pwned").exists()


@AS_ROOT
def test_a_dry_run_as_root_runs_nothing_from_a_root_another_account_owns(box):
    # apt's simulation and dpkg-query run inside the root: whoever owns the tree owns them.
    for name in ("apt-get", "dpkg-query"):
        fake = box / "usr/bin" / name
        fake.parent.mkdir(parents=True, exist_ok=True)
        fake.write_text(f"#!/bin/sh\necho {name} >> /PWNED\n")
        fake.chmod(0o755)
    os.chown(box, 1000, 1000)
    res = invoke(["install", "rocm", "--dry-run", "--root", str(box)])
    assert res.exit_code == Exit.REFUSED, res.output
    assert res.stderr == (
        f"error: the dry run refused: refusing to run dpkg-query as root: {box} belongs to uid 1000 (mode 0755). Nothing "
        "a non-root account can write is run as root. (nothing was changed)\n"
    )
    assert not (box / "PWNED").exists()


@AS_ROOT
def test_a_users_step_runs_as_that_user_never_as_root(tmp_path):
    shutil.copy("/etc/passwd", tmp_path / "passwd")
    nobody = next(line for line in (tmp_path / "passwd").read_text().splitlines() if line.startswith("nobody:"))
    uid = nobody.split(":")[2]
    result = Runner("/").run(["id", "-u"], user="nobody")  # setpriv, really
    assert result.output.strip() == uid and uid != "0"
    with pytest.raises(Exception, match="is root"):
        Runner("/").run(["id", "-u"], user="root")


def test_the_planned_torch_steps_belong_to_the_user(box, tmp_path):
    p = planfile.load(plan(box, tmp_path / "p.json", "--torch", "2.7", "--venv", "/home/alice/venv"))
    assert p.step("torch").user == "alice" and p.step("torch-venv").user == "alice"
    assert p.step("torch").kind is Kind.PIP_INSTALL


# -- the journal and every file the executor reads ------------------------------------------------


def _tiny(root: Path, steps: tuple[Step, ...]):
    from gpuenv.probe import collect

    facts = collect(root=str(root))
    from gpuenv.plan.plan import Action, Plan, PlanTarget

    return Plan(Action.INSTALL, PlanTarget("rocm", "7.2.4"), facts_digest(facts), steps), facts


def test_a_journal_that_links_outside_the_root_is_not_followed(box, tmp_path):
    secret = tmp_path / "host-secret.json"
    secret.write_text('{"plan_digest": "sha256:' + "0" * 64 + '", "done": ["x"]}')
    (box / "var/lib/gpuenv").mkdir(parents=True)
    os.symlink(str(secret), box / "var/lib/gpuenv/journal.json")
    p, facts = _tiny(box, (Step(id="w", kind=Kind.WRITE_FILE, title="w", path="/etc/x", content="x\n", mode="0644"),))
    out = executor.apply(p, str(box), executor.Options(facts_now=facts))
    assert out.exit is Exit.REFUSED and "symbolic link" in out.message
    assert not (box / "etc/x").exists()


@pytest.mark.timeout(20)
@pytest.mark.parametrize("where", ["/etc/ld.so.conf.d/rocm.conf", "/etc/apt/sources.list.d/amdgpu.list"])
def test_a_fifo_where_a_plan_writes_never_hangs(box, where):
    target = box / where.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(target)
    p, facts = _tiny(box, (Step(id="w", kind=Kind.WRITE_FILE, title="w", path=where, content="x\n", mode="0644"),))
    with pytest.raises(OSError, match="not a regular file"):
        executor.dry_run(p, str(box))
    out = executor.apply(p, str(box), executor.Options(facts_now=facts))
    assert out.exit is Exit.PROBLEMS and "not a regular file" in out.message
    assert stat.S_ISFIFO(os.lstat(target).st_mode)  # left as it was
    assert not (box / "var/lib/gpuenv/apply.lock").exists() or (box / "var/lib/gpuenv/journal.json").exists()


@pytest.mark.parametrize("where", ["var/lib/gpuenv", "var/lib/dpkg"])
def test_a_symlink_loop_under_the_state_directories_is_refused(box, where):
    loop = box / where
    if loop.exists():
        shutil.rmtree(loop)
    loop.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(where.rsplit("/", 1)[1] + "-b", loop)
    os.symlink(where.rsplit("/", 1)[1], loop.with_name(loop.name + "-b"))
    p = Step(id="w", kind=Kind.WRITE_FILE, title="w", path="/etc/x", content="x\n", mode="0644")
    from gpuenv.plan.plan import Action, Plan, PlanTarget

    out = executor.apply(Plan(Action.INSTALL, PlanTarget("rocm"), "sha256:" + "0" * 64, (p,)), str(box),
                         executor.Options(force=True))  # fmt: skip
    assert out.exit is Exit.REFUSED and "too many symbolic links" in out.message
    assert not (box / "etc/x").exists()


# -- every JSON input, one reader ----------------------------------------------------------------


def _fifo_with_writer(path: Path):
    os.mkfifo(path)

    def hold():
        try:
            fd = os.open(path, os.O_WRONLY)
            os.close(fd)
        except OSError:
            pass

    threading.Thread(target=hold, daemon=True).start()


HOSTILE = {
    "deep": "[" * 100000 + "]" * 100000,
    "latin1": b'{"schema": "gpuenv.facts/1", "x": "\xe9"}',
    "nan": '{"schema": "gpuenv.plan/1", "x": NaN}',
    "dev-zero": "/dev/zero",
    "directory": "/",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize(
    "command",
    [
        ["doctor", "--facts", "{f}"],
        ["torch", "--facts", "{f}"],
        ["install", "rocm", "--dry-run", "--facts", "{f}"],
        ["plan", "rocm", "--facts", "{f}", "--out", "{out}"],
        ["apply", "{f}", "--root", "{root}", "--yes", "--expect", "x"],
        ["matrix", "update", "--from", "{f}", "--sha256", "0" * 64],
    ],
    ids=["doctor", "torch", "install", "plan", "apply", "matrix"],
)
def test_hostile_input_files_are_one_line_and_a_documented_exit(tmp_path, kind, command):
    value = HOSTILE[kind]
    if value.startswith("/") if isinstance(value, str) else False:
        f = value
    else:
        f = str(tmp_path / "input.json")
        Path(f).write_bytes(value if isinstance(value, bytes) else value.encode())
    root = tmp_path / "root"
    root.mkdir()
    args = [a.format(f=f, out=tmp_path / "out.json", root=root) for a in command]
    done = subprocess.run([sys.executable, "-m", "gpuenv", *args], capture_output=True, text=True, timeout=25,
                          env={**os.environ, "GPUENV_STATE_DIR": str(tmp_path / "state")})  # fmt: skip
    assert done.returncode in (2, 3), done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") <= 1, done.stderr
    assert list(root.iterdir()) == []


def test_install_yes_confirms_a_plan_it_made_itself_without_asking_for_expect(box, tmp_path):
    # `install --yes` has no --expect option at all: only a saved plan is held to one.
    import argparse

    from gpuenv.commands.install import _confirm

    saved = planfile.load(plan(box, tmp_path / "p.json"))
    assert _confirm(saved, argparse.Namespace(yes=True), saved=False) is None
    assert _confirm(saved, argparse.Namespace(yes=True, expect="install rocm --user alice"), saved=True) is None
